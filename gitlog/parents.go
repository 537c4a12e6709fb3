package gitlog

import (
	"bytes"
	"encoding/hex"
	"fmt"
)

// Parents returns the parents of commit h, for a walk that needs only the
// history's shape (how many commits there are, which are the oldest). The
// history index answers for the commits it holds without reading them; the
// others are read, and only their header is parsed. The slice may be shared:
// do not modify it. It returns ReadCommit's errors.
func (r *Repo) Parents(h Hash) ([]Hash, error) {
	if ps, ok := r.index.parents(h); ok {
		return ps, nil
	}
	if c, ok := r.commits.get(h); ok {
		return c.ParentHashes, nil
	}
	data, err := r.commitBytes(h)
	if err != nil {
		return nil, err
	}
	if ps, ok := headerParents(data); ok {
		return ps, nil
	}
	// Not a header as git writes it: the full decoder says what it holds.
	c, err := decodeCommit(h, data)
	if err != nil {
		return nil, fmt.Errorf("gitlog: decode commit %s: %w", h, err)
	}
	return c.ParentHashes, nil
}

// headerParents reads the parents from a commit's bytes when its header
// starts as git writes it: a tree line, then one line a parent, in lower-case
// hexadecimal. ok is false for anything else, which the caller decodes in full.
func headerParents(data []byte) (ps []Hash, ok bool) {
	_, ps, _, ok = commitHead(data)
	return ps, ok
}

// commitHead splits the start of a commit's bytes as git writes them: a tree
// line, then one line a parent, in lower-case hexadecimal, and rest, what
// follows. ok is false for anything else.
func commitHead(data []byte) (tree Hash, ps []Hash, rest []byte, ok bool) {
	const line = 40 + 1
	rest, found := bytes.CutPrefix(data, []byte("tree "))
	if !found || len(rest) < line || rest[40] != '\n' || !lowerHex(rest[:40]) {
		return tree, nil, nil, false
	}
	hex.Decode(tree[:], rest[:40])
	rest = rest[line:]
	for {
		p, found := bytes.CutPrefix(rest, []byte("parent "))
		if !found {
			return tree, ps, rest, true
		}
		if len(p) < line || p[40] != '\n' || !lowerHex(p[:40]) {
			return tree, nil, nil, false
		}
		var h Hash
		hex.Decode(h[:], p[:40])
		ps = append(ps, h)
		rest = p[line:]
	}
}

func lowerHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
