package pack

import (
	"context"
	"io"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

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

// NewBuilder starts a pack of count objects that goes into a repository
// through sink, its writes stopping when ctx is done.
func NewBuilder(ctx context.Context, sink *Sink, count int) *Builder {
	b := NewEncoder(contextWriter{ctx, sink}, count)
	b.sink = sink
	return b
}

// Seen tells whether the pack holds h already.
func (b *Builder) Seen(h Hash) bool { return b.seen[h] }

// Len is how many objects the pack holds so far.
func (b *Builder) Len() int { return len(b.seen) }

// Add writes o whole, once.
func (b *Builder) Add(o rawObject) error { return b.object(o) }

// SetMeter counts the pack's bytes as they are written.
func (b *Builder) SetMeter(m Meter) { b.sink.meter = m }

// Abort drops the pack.
func (b *Builder) Abort() { b.sink.Abort() }

// Finish ends the pack and puts it in place (see Sink): whole, synced, its
// index first.
func (b *Builder) Finish() error { return b.finish() }

// Path is where the finished pack is, without ".pack".
func (b *Builder) Path() string {
	return filepath.Join(filepath.Dir(b.sink.f.Name()), "pack-"+b.name.String())
}

// WriteObjects writes objs, once each, as one new pack made by newBuilder:
// the trees as deltas of one another where they can be (see memoryDeltas),
// after the objects written whole and newest first, so that each follows
// its base (a newer version), as in git's packs. The commits and trees go
// into the pack reader's cache as it will find them (Sink's seeds).
func WriteObjects(ctx context.Context, newBuilder func(count int) (*Builder, error), objs []rawObject, window, depth int) error {
	if len(objs) == 0 {
		return nil
	}
	n := 0
	seen := make(map[Hash]bool, len(objs))
	for _, o := range objs {
		if !seen[o.Hash] {
			seen[o.Hash] = true
			n++
		}
	}
	deltas, err := memoryDeltas(ctx, objs, window, depth)
	if err != nil {
		return err
	}
	b, err := newBuilder(n)
	if err != nil {
		return err
	}
	for _, pass := range []bool{false, true} {
		for i := range objs {
			o := objs[i]
			if pass { // newest first, as memoryDeltas counts a tree made twice
				o = objs[len(objs)-1-i]
			}
			d, isDelta := deltas[o.Hash]
			if b.seen[o.Hash] || isDelta != pass {
				continue
			}
			// The journal's readers took these from memory; once they are
			// read from the pack, the pack reader starts with them resolved.
			if o.Type == plumbing.CommitObject || o.Type == plumbing.TreeObject {
				b.sink.seeds = append(b.sink.seeds, Packed{Off: b.off, Type: o.Type, Data: o.Data})
			}
			if isDelta {
				b.delta(o.Hash, d)
				continue
			}
			if err := b.object(o); err != nil {
				b.sink.Abort()
				return err
			}
		}
	}
	return b.finish()
}

// WriteFrom writes the objects hs, opened by open (and loaded whole by load
// for the search for deltas), as one new pack made by newBuilder: the loose
// objects of a repository, packed.
func WriteFrom(ctx context.Context, newBuilder func(count int) (*Builder, error), hs []Hash, open OpenFunc, load func(Hash) ([]byte, error), window, depth int) error {
	var cands []DeltaCand
	if window > 0 {
		for i, h := range hs {
			t, size, rd, err := open(plumbing.AnyObject, h)
			if err != nil {
				return err
			}
			if MayDelta(t, size) {
				var start []byte
				if t == plumbing.TreeObject { // the others have no name to read
					start = make([]byte, min(size, NameHashPrefix))
					_, err = io.ReadFull(rd, start)
				}
				cands = append(cands, DeltaCand{hash: h, typ: t, size: size, name: NameHash(t, start), order: i})
			}
			rd.Close()
			if err != nil {
				return err
			}
		}
	}
	found, err := SearchDeltas(ctx, cands, load, window, depth)
	if err != nil {
		return err
	}
	b, err := newBuilder(len(hs))
	if err != nil {
		return err
	}
	for _, h := range hs {
		if d, ok := found.Deltas[h]; ok {
			b.delta(h, d)
			continue
		}
		t, size, rd, err := open(plumbing.AnyObject, h)
		if err == nil {
			err = b.stream(h, t, size, rd)
			rd.Close()
		}
		if err != nil {
			b.sink.Abort()
			return err
		}
	}
	return b.finish()
}

// Merge writes the objects of packs as one new pack made by newBuilder and
// returns its path without ".pack". That may be the path of one of packs: a
// pack's name is its checksum, and merging a pack with others whose objects
// it holds already writes it again, byte for byte. An object held by several
// packs is taken from the first that holds it; one that cannot be copied is
// read through open.
//
// An entry is copied as it is, checked against the CRC-32 its index holds: no
// inflating, no compressing, so merging a big pack costs little more than
// copying its bytes. A delta that names its base by offset (git's, or a
// fetched pack's) is copied as one that names it by hash, the same bytes
// under another header, since its base moves. Every base stays in the merged
// pack: each entry's base is in the entry's own pack, all of whose objects
// the merged pack holds. The objects stored whole, but for blobs, are then
// compared for deltas (see SearchDeltas), the chains already there counted.
func Merge(ctx context.Context, newBuilder func(count int) (*Builder, error), packs []File, open OpenFunc, window, depth int) (string, error) {
	m := &packMerge{open: open, sc: NewScanner(nil)}
	defer m.close()
	if err := m.plan(packs); err != nil {
		return "", err
	}
	found, err := SearchDeltas(ctx, m.candidates(depth), m.load, window, depth)
	if err != nil {
		return "", err
	}
	b, err := newBuilder(len(m.entries))
	if err != nil {
		return "", err
	}
	if err := m.write(b, found); err != nil {
		b.sink.Abort()
		return "", err
	}
	if err := b.finish(); err != nil {
		return "", err
	}
	return b.Path(), nil
}
