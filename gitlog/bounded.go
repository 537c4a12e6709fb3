package gitlog

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/memvault/memvault/gitlog/internal/pack"
)

// Reads that never trust the repository. An object's header tells its size
// before anything is inflated, and a zlib stream of a megabyte can inflate to
// a gigabyte: so an object above largeObject is opened as a stream (see
// openObject), and every read here inflates at most what its limit allows, a
// blob's from the caller (SetBlobLimit), a tree's or a commit's from maxStruct.
// A history with one such object in it stays readable around it.

// largeObject is the size above which an object is read as a stream, not
// inflated whole into memory.
const largeObject = pack.LargeObject

// maxStruct bounds a tree or a commit memvault decodes: 50,000 entries of
// 255-byte names fit 14 MB; a message of every conflict of such a tree too.
const maxStruct = pack.MaxStruct

// defaultBlobLimit bounds ReadBlob until SetBlobLimit says otherwise.
const defaultBlobLimit = 64 << 20

// blobLimit holds the repository's limit on blob reads; zero means
// defaultBlobLimit.
type blobLimit struct{ n atomic.Int64 }

func (l *blobLimit) get() int64 {
	if n := l.n.Load(); n > 0 {
		return n
	}
	return defaultBlobLimit
}

// SetBlobLimit bounds every later ReadBlob to blobs of at most n bytes, as
// their headers say; a larger blob is refused with ErrTooLarge before anything
// of it is inflated.
func (r *Repo) SetBlobLimit(n int64) { r.maxBlob.n.Store(n) }

// SizeError is the error of a read refused because the object is too large. It
// wraps ErrTooLarge.
type SizeError struct {
	Object Hash
	Size   int64 // as the object's header says
	Limit  int64
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("%d bytes, larger than the limit of %d", e.Size, e.Limit)
}

func (e *SizeError) Unwrap() error { return ErrTooLarge }

// BlobPrefix returns the first n bytes of blob h (fewer if it is shorter) and
// its size from its header, inflating no more than n bytes.
func (r *Repo) BlobPrefix(h Hash, n int) ([]byte, int64, error) {
	if _, ok := r.jobjs.Get(h); !ok {
		if data, size, ok := r.packs.BlobPrefix(h, n); ok {
			return data, size, nil
		}
	}
	o, err := r.object(plumbing.AnyObject, h)
	if err != nil {
		return nil, 0, fmt.Errorf("gitlog: read blob %s: %w", h, err)
	}
	if o.Type() != plumbing.BlobObject {
		return nil, 0, fmt.Errorf("gitlog: read blob %s: a %s: %w", h, o.Type(), ErrWrongType)
	}
	size := o.Size()
	r.readMu.Lock()
	defer r.readMu.Unlock()
	rd, err := o.Reader()
	if err != nil {
		return nil, 0, fmt.Errorf("gitlog: read blob %s: %w", h, err)
	}
	defer rd.Close()
	buf := make([]byte, min(int64(n), size))
	if _, err := io.ReadFull(rd, buf); err != nil {
		return nil, 0, fmt.Errorf("gitlog: read blob %s: %w", h, err)
	}
	return buf, size, nil
}
