package gitlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// indexPack names every object of the pack in r and returns the pack's index
// and checksum, in bounded memory. go-git's parser read every object of a
// pack whole into memory a second time, after hashing it, to resolve deltas:
// a remote's zlib bomb of a gigabyte cost a gigabyte. Here a whole object is
// streamed into its hash and never held; only deltas are resolved in memory,
// and a delta, its base or its result above maxDeltaObject fails the index
// (and so the fetch, which then moves nothing).
func indexPack(r io.ReadSeeker) (*idxfile.MemoryIndex, Hash, error) {
	s := packfile.NewScanner(r)
	_, count, err := s.Header()
	if err != nil {
		return nil, ZeroHash, err
	}
	type object struct {
		hdr   *packfile.ObjectHeader
		typ   plumbing.ObjectType // resolved, for a delta
		hash  Hash
		crc   uint32
		delta []byte // a delta's instructions
	}
	objs := make([]*object, 0, count)
	byOffset := make(map[int64]*object, count)
	for i := uint32(0); i < count; i++ {
		h, err := s.NextObjectHeader()
		if err != nil {
			return nil, ZeroHash, err
		}
		o := &object{hdr: h, typ: h.Type}
		switch h.Type {
		case plumbing.OFSDeltaObject, plumbing.REFDeltaObject:
			if h.Length > maxDeltaObject {
				return nil, ZeroHash, fmt.Errorf("a delta of %d bytes: %w", h.Length, ErrTooLarge)
			}
			var buf bytes.Buffer
			_, o.crc, err = s.NextObject(&buf)
			o.delta = buf.Bytes()
		default:
			hw := plumbing.NewHasher(h.Type, h.Length)
			_, o.crc, err = s.NextObject(hw)
			o.hash = hw.Sum()
		}
		if err != nil {
			return nil, ZeroHash, err
		}
		objs = append(objs, o)
		byOffset[h.Offset] = o
	}
	sum, err := s.Checksum()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, ZeroHash, err
	}
	byHash := make(map[Hash]*object, count)
	for _, o := range objs {
		if o.delta == nil {
			byHash[o.hash] = o
		}
	}
	// content returns o's content, resolving deltas, and its type.
	var content func(o *object, depth int) ([]byte, plumbing.ObjectType, error)
	content = func(o *object, depth int) ([]byte, plumbing.ObjectType, error) {
		if depth > maxDeltaDepth {
			return nil, 0, errors.New("a delta chain too deep")
		}
		if o.delta == nil {
			if o.hdr.Length > maxDeltaObject {
				return nil, 0, fmt.Errorf("a delta base of %d bytes: %w", o.hdr.Length, ErrTooLarge)
			}
			if _, err := s.SeekObjectHeader(o.hdr.Offset); err != nil {
				return nil, 0, err
			}
			var buf bytes.Buffer
			if _, _, err := s.NextObject(&buf); err != nil {
				return nil, 0, err
			}
			return buf.Bytes(), o.typ, nil
		}
		var base *object
		if o.hdr.Type == plumbing.OFSDeltaObject {
			base = byOffset[o.hdr.OffsetReference]
		} else {
			base = byHash[o.hdr.Reference]
		}
		if base == nil {
			return nil, 0, errors.New("a delta whose base is not in the pack")
		}
		src, typ, err := content(base, depth+1)
		if err != nil {
			return nil, 0, err
		}
		if n := deltaTargetSize(o.delta); n > maxDeltaObject {
			return nil, 0, fmt.Errorf("a delta's result of %d bytes: %w", n, ErrTooLarge)
		}
		out, err := packfile.PatchDelta(src, o.delta)
		return out, typ, err
	}
	// A REF delta may name a base that is itself a delta: resolve until
	// every object is named.
	for pending := true; pending; {
		pending = false
		progress := false
		for _, o := range objs {
			if o.delta == nil || !o.hash.IsZero() {
				continue
			}
			if o.hdr.Type == plumbing.REFDeltaObject && byHash[o.hdr.Reference] == nil {
				pending = true
				continue
			}
			data, typ, err := content(o, 0)
			if err != nil {
				return nil, ZeroHash, fmt.Errorf("delta at %d: %w", o.hdr.Offset, err)
			}
			o.typ, o.hash = typ, plumbing.ComputeHash(typ, data)
			byHash[o.hash] = o
			progress = true
		}
		if pending && !progress {
			return nil, ZeroHash, errors.New("a delta whose base is not in the pack")
		}
	}
	iw := new(idxfile.Writer)
	iw.OnHeader(count)
	for _, o := range objs {
		iw.OnInflatedObjectHeader(o.typ, o.hdr.Length, o.hdr.Offset)
		if err := iw.OnInflatedObjectContent(o.hash, o.hdr.Offset, o.crc, nil); err != nil {
			return nil, ZeroHash, err
		}
	}
	if err := iw.OnFooter(sum); err != nil {
		return nil, ZeroHash, err
	}
	idx, err := iw.Index()
	return idx, sum, err
}

// maxDeltaObject bounds a delta, its base and its result: deltas are of
// trees and small files (ciphertext does not delta).
const maxDeltaObject = 2 * maxStruct

// maxDeltaDepth bounds a chain of deltas; git makes them at most 50 deep.
const maxDeltaDepth = 4096

// deltaTargetSize reads the size of a delta's result from its header: two
// little-endian base-128 numbers, the base's size and the result's.
func deltaTargetSize(delta []byte) int64 {
	var n [2]int64
	for i := range n {
		var shift uint
		for len(delta) > 0 {
			b := delta[0]
			delta = delta[1:]
			n[i] |= int64(b&0x7f) << shift
			shift += 7
			if b&0x80 == 0 || shift > 56 {
				break
			}
		}
	}
	return n[1]
}
