package gitlog

import (
	"context"
	"errors"
	"fmt"
	"io"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// SourceRepo is a git repository read, never written, as a source of files: a
// plain repository of memory files an import replays. Everything in it may be
// crafted, so every read is bounded by the caller's limits.
type SourceRepo struct {
	r *git.Repository
}

// SourceFile is one entry of a source commit's tree that is not a folder.
type SourceFile struct {
	Path string // slash-separated, relative to the tree's root
	Mode Mode
	Size int64
	Hash Hash
}

// OpenSource opens the git repository at dir (a working tree or a bare one).
func OpenSource(dir string) (*SourceRepo, error) {
	r, err := git.PlainOpen(dir)
	if err != nil {
		return nil, fmt.Errorf("gitlog: open %s as a git repository: %w", dir, err)
	}
	return &SourceRepo{r: r}, nil
}

// History returns HEAD and its first-parent ancestors, oldest first, at most max
// of them (more is an error). A repository without commits has none.
func (s *SourceRepo) History(ctx context.Context, max int) ([]*Commit, error) {
	ref, err := s.r.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gitlog: source HEAD: %w", err)
	}
	var out []*Commit
	for h := fromGG(ref.Hash()); !h.IsZero(); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(out) == max {
			return nil, fmt.Errorf("gitlog: the source's history has more than %d commits", max)
		}
		c, err := s.r.CommitObject(gg(h))
		if err != nil {
			return nil, fmt.Errorf("gitlog: source commit %s: %w", h, err)
		}
		out = append(out, commitRecord(c))
		h = ZeroHash
		if len(c.ParentHashes) > 0 {
			h = fromGG(c.ParentHashes[0])
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// Files lists the non-folder entries of tree, at most max of them (more is an
// error), with each blob's size read from its header.
func (s *SourceRepo) Files(ctx context.Context, tree Hash, max int) ([]SourceFile, error) {
	var out []SourceFile
	var walk func(dir string, h Hash, depth int) error
	walk = func(dir string, h Hash, depth int) error {
		if depth > 64 {
			return fmt.Errorf("gitlog: source tree %s nests too deep", dir)
		}
		t, err := s.r.TreeObject(gg(h))
		if err != nil {
			return fmt.Errorf("gitlog: source tree %s: %w", h, err)
		}
		for _, e := range t.Entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			p := e.Name
			if dir != "" {
				p = dir + "/" + e.Name
			}
			if Mode(e.Mode) == ModeDir {
				if err := walk(p, fromGG(e.Hash), depth+1); err != nil {
					return err
				}
				continue
			}
			if len(out) == max {
				return fmt.Errorf("gitlog: the source holds more than %d files", max)
			}
			f := SourceFile{Path: p, Mode: Mode(e.Mode), Hash: fromGG(e.Hash)}
			if f.Mode != ModeSubmodule {
				if f.Size, err = s.r.Storer.EncodedObjectSize(e.Hash); err != nil {
					return fmt.Errorf("gitlog: source blob %s: %w", p, err)
				}
			}
			out = append(out, f)
		}
		return nil
	}
	return out, walk("", tree, 0)
}

// ReadFile reads the blob of f, at most max bytes (more is an error).
func (s *SourceRepo) ReadFile(f SourceFile, max int64) ([]byte, error) {
	o, err := s.r.Storer.EncodedObject(plumbing.BlobObject, gg(f.Hash))
	if err != nil {
		return nil, fmt.Errorf("gitlog: source blob %s: %w", f.Path, err)
	}
	if o.Size() > max {
		return nil, fmt.Errorf("gitlog: source blob %s: %d bytes, over %d", f.Path, o.Size(), max)
	}
	rc, err := o.Reader()
	if err != nil {
		return nil, fmt.Errorf("gitlog: source blob %s: %w", f.Path, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("over %d bytes", max)
	}
	if err != nil {
		return nil, fmt.Errorf("gitlog: source blob %s: %w", f.Path, err)
	}
	return data, nil
}
