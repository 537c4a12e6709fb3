package gitlog

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/memvault/memvault/gitlog/internal/pack"
)

// BlobPack is a new pack of blobs written one at a time, each compressed and
// written as it is added, so that a change too big to hold whole (an import of
// thousands of large files) never has more than one blob of it in memory. A
// commit then names the blobs with Link changes (a Commit with CommitInfo.Packed). Until that
// commit lands the blobs are unreferenced: a pack left by a commit that failed
// holds only objects gc removes.
type BlobPack struct {
	b     *pack.Builder
	count int
	done  bool
}

// NewBlobPack starts a pack that will hold exactly count blobs. Holding the
// Writer keeps packs of unreferenced blobs from being made behind another
// writer's back while it commits.
func (w *Writer) NewBlobPack(ctx context.Context, count int) (*BlobPack, error) {
	b, err := w.r.newPackBuilder(ctx, count)
	if err != nil {
		return nil, fmt.Errorf("gitlog: pack: %w", err)
	}
	return &BlobPack{b: b, count: count}, nil
}

// Add writes data as the next blob of the pack and returns its hash. A blob
// the pack holds already, or one past the count NewBlobPack was given, is an
// error: a pack's header gives its number of objects before the first.
func (p *BlobPack) Add(data []byte) (Hash, error) {
	h := BlobHash(data)
	switch {
	case p.done:
		return h, errors.New("gitlog: pack: blob added after the pack ended")
	case p.b.Seen(h):
		return h, fmt.Errorf("gitlog: pack: blob %s added twice", h)
	case p.b.Len() == p.count:
		return h, fmt.Errorf("gitlog: pack: more than the %d blobs it was started for", p.count)
	}
	if err := p.b.Add(rawObject{Type: plumbing.BlobObject, Hash: h, Data: data}); err != nil {
		return h, fmt.Errorf("gitlog: pack: %w", err)
	}
	return h, nil
}

// Finish writes the pack's index and installs both; its blobs can then be
// read and linked. A pack that holds fewer blobs than it was started for is
// removed, and an error returned.
func (p *BlobPack) Finish() error {
	if p.done {
		return nil
	}
	p.done = true
	if n := p.b.Len(); n != p.count {
		p.b.Abort()
		return fmt.Errorf("gitlog: pack: %d blobs of the %d it was started for", n, p.count)
	}
	if err := p.b.Finish(); err != nil {
		return fmt.Errorf("gitlog: pack: %w", err)
	}
	return nil
}

// Abort removes the pack being written; after Finish it does nothing.
func (p *BlobPack) Abort() {
	if !p.done {
		p.done = true
		p.b.Abort()
	}
}
