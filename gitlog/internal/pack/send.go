package pack

import (
	"context"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
)

// WritePack writes the objects hs to w as one pack (see Builder). A pack
// of a whole vault costs a buffer and the trees compared for deltas (at most
// sendBudget), whatever it holds: a history may hold a blob of a gigabyte
// that a megabyte of zlib inflates to. Objects that reuse
// finds packed are copied as stored (see Reuse), the rest read through
// read and compressed; reuse may be nil. The trees sent whole are compared
// for deltas against each other (see sendDeltas) when window is above 0. A
// delta comes after its base, as git writes them.
func WritePack(ctx context.Context, w io.Writer, hs []Hash, read OpenFunc, reuse *Reuse, window, depth int) error {
	b := NewEncoder(w, len(hs))
	if err := b.Send(ctx, hs, read, reuse, window, depth); err != nil {
		return err
	}
	_, err := b.Trailer()
	return err
}

// Send appends the objects hs, as WritePack writes them, to the pack b
// started for len(hs) objects, leaving its checksum to the caller.
func (b *Builder) Send(ctx context.Context, hs []Hash, read OpenFunc, reuse *Reuse, window, depth int) error {
	plan := make([]Reusable, len(hs))
	copied := make([]bool, len(hs))
	bases := map[Hash]bool{} // of the deltas copied
	for i, h := range hs {
		if reuse == nil {
			break
		}
		if plan[i], copied[i] = reuse.Entry(h); copied[i] && plan[i].Delta {
			bases[plan[i].base] = true
		}
	}
	held, found, err := sendDeltas(ctx, hs, plan, copied, bases, read, window, depth)
	if err != nil {
		return err
	}
	// waiting holds the deltas to write once their base is written.
	waiting := map[Hash][]Hash{}
	queued := map[Hash]bool{}
	at := make(map[Hash]int, len(hs))
	for i, h := range hs {
		at[h] = i
	}
	write := func(h Hash) error {
		i := at[h]
		if d, ok := found[h]; ok {
			b.delta(h, d)
			return nil
		}
		if copied[i] {
			reuse.Copied++
			return plan[i].copyTo(b, h)
		}
		if o, ok := held[h]; ok {
			return b.object(o)
		}
		t, size, rd, err := read(plumbing.AnyObject, h)
		if err != nil {
			return err
		}
		defer rd.Close()
		return b.stream(h, t, size, rd)
	}
	// emit writes h, then the deltas waiting for it, and theirs, in turn.
	emit := func(h Hash) error {
		todo := []Hash{h}
		for len(todo) > 0 {
			next := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			if err := write(next); err != nil {
				return fmt.Errorf("gitlog: pack %w", err)
			}
			todo = append(todo, waiting[next]...)
			delete(waiting, next)
		}
		return nil
	}
	for i, h := range hs {
		if b.seen[h] || queued[h] {
			continue
		}
		base, delta := found[h].base, false
		if _, ok := found[h]; ok {
			delta = true
		} else if copied[i] && plan[i].Delta {
			base, delta = plan[i].base, true
		}
		if delta && !b.seen[base] {
			waiting[base] = append(waiting[base], h)
			queued[h] = true
			continue
		}
		if err := emit(h); err != nil {
			return err
		}
	}
	if len(waiting) > 0 {
		// Every base is one of hs, written by now.
		return fmt.Errorf("gitlog: pack: %d deltas whose base was never written", len(waiting))
	}
	return nil
}

// sendBudget bounds the trees a pack being sent holds in memory to compare
// them for deltas; past it, the rest are sent as they are.
const sendBudget = 32 << 20

// memoryDeltas searches for deltas among the trees of objs, held in memory,
// oldest first (a journal's snapshot): a tree usually becomes the delta of
// its folder's next version (see SearchDeltas). Only trees: they are most of
// what a commit adds but for its blob, and a tree read back whole inflated
// all of its bytes where a delta inflates its few.
func memoryDeltas(ctx context.Context, objs []rawObject, window, depth int) (map[Hash]Delta, error) {
	var cands []DeltaCand
	contents := map[Hash][]byte{}
	for i := len(objs) - 1; i >= 0; i-- { // a tree made twice counts as its newest
		o := objs[i]
		size := int64(len(o.Data))
		if o.Type != plumbing.TreeObject || !MayDelta(o.Type, size) {
			continue
		}
		if _, dup := contents[o.Hash]; dup {
			continue
		}
		contents[o.Hash] = o.Data
		cands = append(cands, DeltaCand{hash: o.Hash, typ: o.Type, size: size, name: NameHash(o.Type, o.Data[:min(len(o.Data), NameHashPrefix)]), order: len(objs) - 1 - i})
	}
	found, err := SearchDeltas(ctx, cands, func(h Hash) ([]byte, error) { return contents[h], nil }, window, depth)
	return found.Deltas, err
}

// sendDeltas reads the trees of hs that are not copied as deltas (those
// packed whole, the journal's, those whose stored delta has its base on the
// other side) and compares them for deltas as a pack merge does (see
// SearchDeltas): without it the remote's packs held every new tree whole, and
// each fetch read them so. The trees are read into held, to be written from
// memory when they stay whole, within sendBudget; a base of a copied delta is
// left as it is, so no chain grows past the depth it had. A delta's base is
// always one of hs.
func sendDeltas(ctx context.Context, hs []Hash, plan []Reusable, copied []bool, bases map[Hash]bool, read OpenFunc, window, depth int) (map[Hash]rawObject, map[Hash]Delta, error) {
	held := map[Hash]rawObject{}
	if window <= 0 {
		return held, nil, nil
	}
	var cands []DeltaCand
	contents := map[Hash][]byte{}
	budget := int64(sendBudget)
	for i, h := range hs {
		if bases[h] || copied[i] && plan[i].Type != plumbing.TreeObject {
			continue
		}
		var data []byte
		if copied[i] {
			if !MayDelta(plan[i].Type, plan[i].size) || plan[i].size > budget {
				continue
			}
			var err error
			if data, err = plan[i].Load(); err != nil {
				return nil, nil, fmt.Errorf("gitlog: pack %s: %w", h, err)
			}
		} else {
			t, size, rd, err := read(plumbing.AnyObject, h)
			if err != nil {
				return nil, nil, err
			}
			if t != plumbing.TreeObject || !MayDelta(t, size) || size > budget {
				rd.Close()
				continue
			}
			data = make([]byte, size)
			_, err = io.ReadFull(rd, data)
			rd.Close()
			if err != nil {
				return nil, nil, fmt.Errorf("gitlog: pack %s: %w", h, err)
			}
			held[h] = rawObject{Type: t, Hash: h, Data: data}
		}
		budget -= int64(len(data))
		contents[h] = data
		cands = append(cands, DeltaCand{hash: h, typ: plumbing.TreeObject, size: int64(len(data)), name: NameHash(plumbing.TreeObject, data[:min(len(data), NameHashPrefix)]), order: i})
	}

	found, err := SearchDeltas(ctx, cands, func(h Hash) ([]byte, error) { return contents[h], nil }, window, depth)
	if err != nil {
		return nil, nil, err
	}
	return held, found.Deltas, nil
}
