package gitlog

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Pack moves every loose object into one new pack and returns how many it
// moved. A vault writes a few loose objects per commit, so after a long life it
// holds hundreds of thousands of small files: slow to copy, back up and scan.
//
// The pack goes in through a packSink (whole, indexed, synced), and only then
// are the loose copies removed, so no object is ever missing: a reader in
// another process that looks for a removed file finds the object in the pack
// after its reindex. Writers are not held off; an object written meanwhile stays
// loose until the next Pack. Nothing unreachable is dropped.
func (r *Repo) Pack(ctx context.Context) (int, error) {
	hs, files, err := r.looseObjects()
	if err != nil || len(hs) == 0 {
		return 0, err
	}
	sink, err := r.newPackSink()
	if err != nil {
		return 0, err
	}
	err = writePack(contextWriter{ctx, sink}, hs, r.readObject)
	if err != nil {
		sink.abort()
		return 0, fmt.Errorf("gitlog: pack: %w", err)
	}
	if err := sink.Close(); err != nil {
		return 0, err
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return 0, fmt.Errorf("gitlog: pack: %w", err)
		}
		os.Remove(filepath.Dir(f)) // once empty
	}
	return len(hs), nil
}

// looseObjects lists the loose objects, by name and file.
func (r *Repo) looseObjects() (hs []Hash, files []string, err error) {
	dir := filepath.Join(r.dir, "objects")
	fans, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("gitlog: list objects: %w", err)
	}
	for _, fan := range fans {
		if !fan.IsDir() || len(fan.Name()) != 2 {
			continue
		}
		es, err := os.ReadDir(filepath.Join(dir, fan.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // emptied and removed by another packer meanwhile
		}
		if err != nil {
			return nil, nil, fmt.Errorf("gitlog: list objects: %w", err)
		}
		for _, e := range es {
			var h Hash
			if b, err := hex.DecodeString(fan.Name() + e.Name()); err != nil || len(b) != len(h) {
				continue // a temporary file, or not git's
			} else {
				copy(h[:], b)
			}
			hs = append(hs, h)
			files = append(files, filepath.Join(dir, fan.Name(), e.Name()))
		}
	}
	return hs, files, nil
}

// contextWriter fails writes once ctx is done, so a long encode can be stopped.
type contextWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c contextWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
