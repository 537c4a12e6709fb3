package plainexport

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// DirSink writes an export into a folder that was empty, through an os.Root
// so no name can lead outside it.
type DirSink struct {
	root *os.Root
}

// NewDirSink makes the folder dir (0700) unless it exists, and returns the
// sink that writes into it. It refuses a folder that is not empty, so an
// export never mixes with files that were there.
func NewDirSink(dir string) (*DirSink, error) {
	switch es, err := os.ReadDir(dir); {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	case err != nil:
		return nil, fmt.Errorf("export: %w", err)
	case len(es) > 0:
		return nil, fmt.Errorf("export: %s is not empty; name a new or empty folder", dir)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return &DirSink{root: r}, nil
}

// Dir implements Sink.
func (s *DirSink) Dir(rel string) error {
	if err := s.root.Mkdir(rel, 0o700); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// File implements Sink: a new file, 0600.
func (s *DirSink) File(rel string, data []byte) error {
	f, err := s.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("export: write %s: %w", rel, err)
	}
	return nil
}

// Close implements Sink.
func (s *DirSink) Close() error { return s.root.Close() }

// TarSink writes an export as a tar stream (PAX), every entry dated now.
type TarSink struct {
	tw  *tar.Writer
	now time.Time
}

// NewTarSink returns the sink that writes a tar stream to w.
func NewTarSink(w io.Writer, now time.Time) *TarSink {
	return &TarSink{tw: tar.NewWriter(w), now: now}
}

// Dir implements Sink.
func (s *TarSink) Dir(rel string) error {
	return s.header(&tar.Header{Typeflag: tar.TypeDir, Name: rel + "/", Mode: 0o700})
}

// File implements Sink.
func (s *TarSink) File(rel string, data []byte) error {
	if err := s.header(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o600, Size: int64(len(data))}); err != nil {
		return err
	}
	if _, err := s.tw.Write(data); err != nil {
		return fmt.Errorf("export: write: %w", err)
	}
	return nil
}

func (s *TarSink) header(h *tar.Header) error {
	h.ModTime = s.now
	h.Format = tar.FormatPAX
	if err := s.tw.WriteHeader(h); err != nil {
		return fmt.Errorf("export: write: %w", err)
	}
	return nil
}

// Close implements Sink: it ends the stream.
func (s *TarSink) Close() error {
	if err := s.tw.Close(); err != nil {
		return fmt.Errorf("export: write: %w", err)
	}
	return nil
}
