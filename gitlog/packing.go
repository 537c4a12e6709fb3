package gitlog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/memvault/memvault/gitlog/internal/pack"
)

// parseTree decodes a tree's content as go-git's object.Tree.Decode does
// (the same entries, the same modes), or returns false where go-git fails,
// so that the caller's ordinary path reports it.
//
// The names are cut from one string of the whole content: one allocation a
// tree, not one a name.
func parseTree(content []byte) ([]Entry, bool) {
	data := string(content)
	es := make([]Entry, 0, bytes.Count(content, []byte{0}))
	for len(data) > 0 {
		sp := strings.IndexByte(data, ' ')
		if sp < 0 {
			return nil, false
		}
		m, err := strconv.ParseUint(data[:sp], 8, 32)
		if err != nil {
			return nil, false
		}
		data = data[sp+1:]
		nul := strings.IndexByte(data, 0)
		if nul <= 0 || len(data)-nul-1 < len(Hash{}) {
			return nil, false
		}
		e := Entry{Name: data[:nul], Mode: canonicalMode(uint32(m))}
		copy(e.Hash[:], data[nul+1:])
		data = data[nul+1+len(Hash{}):]
		es = append(es, e)
	}
	return es, true
}

// canonicalMode is the mode go-git gives a tree entry's mode as written.
func canonicalMode(m uint32) uint32 {
	switch m & 0o170000 {
	case 0o040000:
		return modeDir
	case 0o100000:
		if m&0o111 != 0 {
			return modeExecutable
		}
		return modeRegular
	case 0o120000:
		return modeSymlink
	default:
		return modeSubmodule
	}
}

// knownObject is a commit's or tree's content whose hash is known (its
// pack's index named it), handed to go-git's decoders, which would otherwise
// hash the content again.
type knownObject struct {
	h    Hash
	t    plumbing.ObjectType
	data []byte
}

func (o *knownObject) Hash() plumbing.Hash         { return gg(o.h) }
func (o *knownObject) Type() plumbing.ObjectType   { return o.t }
func (o *knownObject) SetType(plumbing.ObjectType) {}
func (o *knownObject) Size() int64                 { return int64(len(o.data)) }
func (o *knownObject) SetSize(int64)               {}
func (o *knownObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.data)), nil
}
func (o *knownObject) Writer() (io.WriteCloser, error) {
	return nil, os.ErrPermission
}

// deltaConfig reads pack.window and pack.depth from the repository's config,
// as git does: a window of 0 turns the search for deltas off.
func (r *Repo) deltaConfig() (window, depth int) {
	window, depth = pack.DefaultWindow, pack.DefaultDepth
	cfg, err := r.st.Config()
	if err != nil {
		return window, depth
	}
	s := cfg.Raw.Section("pack")
	if n, err := strconv.Atoi(s.Option("window")); err == nil && n >= 0 {
		window = n
	}
	if n, err := strconv.Atoi(s.Option("depth")); err == nil && n > 0 {
		depth = min(n, pack.MaxDeltaDepth)
	}
	return window, depth
}

// newPackBuilder starts a pack of count objects for this repository.
func (r *Repo) newPackBuilder(ctx context.Context, count int) (*pack.Builder, error) {
	sink, err := r.newPackSink(ctx)
	if err != nil {
		return nil, err
	}
	return pack.NewBuilder(ctx, sink, count), nil
}

// packObjects writes objs, once each, as one new pack (see pack.WriteObjects).
func (r *Repo) packObjects(ctx context.Context, objs []rawObject) error {
	window, depth := r.deltaConfig()
	newBuilder := func(n int) (*pack.Builder, error) { return r.newPackBuilder(ctx, n) }
	if err := pack.WriteObjects(ctx, newBuilder, objs, window, depth); err != nil {
		return fmt.Errorf("gitlog: pack: %w", err)
	}
	return nil
}

// mergePacks writes the objects of packs as one new pack and returns its path
// without ".pack" (see pack.Merge).
func (r *Repo) mergePacks(ctx context.Context, packs []pack.File) (string, error) {
	window, depth := r.deltaConfig()
	newBuilder := func(n int) (*pack.Builder, error) { return r.newPackBuilder(ctx, n) }
	out, err := pack.Merge(ctx, newBuilder, packs, r.openObject, window, depth)
	if err != nil {
		return "", fmt.Errorf("gitlog: pack: %w", err)
	}
	return out, nil
}

// newPackSink receives a pack into r, which then looks for objects in it. The
// indexing of a received pack stops when ctx is done.
func (r *Repo) newPackSink(ctx context.Context) (*pack.Sink, error) {
	s, err := pack.NewSink(r.disk, r.dir, func(base string, seeds []pack.Packed) {
		r.readMu.Lock()
		r.st.Reindex()
		r.readMu.Unlock()
		r.packs.Seed(base, seeds)
	})
	if err == nil {
		s.Ctx = ctx
	}
	return s, err
}
