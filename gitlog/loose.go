package gitlog

import (
	"bufio"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	gitobject "github.com/memvault/memvault/gitlog/internal/object"
)

// openLoose opens the loose object h (objects/xx/yyyy…): its type and size,
// as its header says, and its content, inflated as it is read and no further
// than that size. The file stays open until the reader is closed, so a
// packer that removes it meanwhile takes nothing from the read. The error
// wraps fs.ErrNotExist only when there is no such file; a file that does not
// read as a loose object is damage, which wraps neither it nor anything the
// file system said.
func (r *Repo) openLoose(h Hash) (plumbing.ObjectType, int64, *looseReader, error) {
	name := h.String()
	f, err := os.Open(filepath.Join(r.dir, "objects", name[:2], name[2:]))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil, fmt.Errorf("loose object %s: %w", h, fs.ErrNotExist)
	}
	if err != nil {
		return 0, 0, nil, fmt.Errorf("loose object %s cannot be read: %v", h, err)
	}
	t, n, rd, err := looseHeader(f)
	if err != nil {
		f.Close()
		return 0, 0, nil, fmt.Errorf("loose object %s cannot be read: %v", h, err)
	}
	rd.h = h
	return t, n, rd, nil
}

// maxLooseHeader bounds a loose object's header: "commit", a space, a size
// of 19 digits and a NUL fit.
const maxLooseHeader = 32

// looseHeader reads the header of the loose object in f.
func looseHeader(f *os.File) (plumbing.ObjectType, int64, *looseReader, error) {
	zr, err := zlib.NewReader(bufio.NewReaderSize(f, 4<<10))
	if err != nil {
		return 0, 0, nil, err
	}
	br := bufio.NewReaderSize(zr, 4<<10)
	var head []byte
	for {
		c, err := br.ReadByte()
		if err != nil {
			zr.Close()
			return 0, 0, nil, fmt.Errorf("a header cut short: %v", err)
		}
		if c == 0 {
			break
		}
		if head = append(head, c); len(head) > maxLooseHeader {
			zr.Close()
			return 0, 0, nil, errors.New("a header past its length")
		}
	}
	typ, size, ok := strings.Cut(string(head), " ")
	t, err := plumbing.ParseObjectType(typ)
	n, nerr := strconv.ParseInt(size, 10, 64)
	if !ok || err != nil || nerr != nil || n < 0 || t < plumbing.CommitObject || t > plumbing.TagObject || size != strconv.FormatInt(n, 10) {
		zr.Close()
		return 0, 0, nil, fmt.Errorf("a header %q", head)
	}
	return t, n, &looseReader{f: f, zr: zr, br: br, left: n}, nil
}

// looseReader is the content of a loose object, no longer than its header
// says.
type looseReader struct {
	h    Hash
	f    *os.File
	zr   io.ReadCloser
	br   *bufio.Reader
	left int64
}

func (l *looseReader) Read(p []byte) (int, error) {
	if l.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.br.Read(p)
	l.left -= int64(n)
	if err == io.EOF && l.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err != nil && err != io.EOF {
		err = fmt.Errorf("loose object %s cannot be read: %v", l.h, err)
	}
	return n, err
}

// trailing tells whether the stream holds more than the header's size.
func (l *looseReader) trailing() bool {
	_, err := l.br.ReadByte()
	return err == nil
}

// Close releases the file.
func (l *looseReader) Close() error {
	l.zr.Close()
	return l.f.Close()
}

// readLooseAll reads the content of a loose object whole, refusing a stream
// that holds more than its header says.
func readLooseAll(rd *looseReader) ([]byte, error) {
	data := make([]byte, rd.left)
	if _, err := io.ReadFull(rd, data); err != nil {
		return nil, err
	}
	if rd.trailing() {
		return nil, fmt.Errorf("loose object %s cannot be read: %v", rd.h, gitobject.ErrTrailingData)
	}
	return data, nil
}
