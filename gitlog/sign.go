package gitlog

import (
	"bytes"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// encodeCommit is a commit object's bytes, signed when sign is set.
func encodeCommit(c *object.Commit, sign func([]byte) (string, error)) (*plumbing.MemoryObject, error) {
	mo := &plumbing.MemoryObject{}
	if sign != nil {
		if err := c.EncodeWithoutSignature(mo); err != nil {
			return nil, fmt.Errorf("gitlog: encode commit: %w", err)
		}
		payload, err := readAll(mo)
		if err != nil {
			return nil, err
		}
		sig, err := sign(payload)
		if err != nil {
			return nil, fmt.Errorf("gitlog: sign commit: %w", err)
		}
		c.PGPSignature = sig
		mo = &plumbing.MemoryObject{}
	}
	if err := c.Encode(mo); err != nil {
		return nil, fmt.Errorf("gitlog: encode commit: %w", err)
	}
	return mo, nil
}

// SignedCommit returns commit h's signature (armored; "" when it has none)
// and the bytes it signs, taken as git's verify-commit takes them: the raw
// object with the signature header and its continuation lines cut out, and
// nothing re-encoded, so that a commit whose bytes differ from what its
// signer signed never verifies. payload may be the pack reader's cached
// content itself: read it, never change it.
func (r *Repo) SignedCommit(h Hash) (payload []byte, signature string, err error) {
	raw, err := r.commitBytes(h)
	if err != nil {
		return nil, "", err
	}
	payload, signature = splitSignature(raw)
	return payload, signature, nil
}

// splitSignature cuts the gpgsig header out of a commit's raw bytes. A commit
// with two such headers is given no signature: git would not verify it either.
func splitSignature(raw []byte) (payload []byte, signature string) {
	var sig []byte
	found := 0
	in := false
	rest := raw
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		switch {
		case in && bytes.HasPrefix(line, []byte(" ")):
			sig = append(sig, line[1:]...)
			continue
		case len(bytes.TrimRight(line, "\n")) == 0:
			// The end of the headers: the message follows as it is.
			payload = append(payload, line...)
			payload = append(payload, rest...)
			rest = nil
			continue
		case bytes.HasPrefix(line, []byte("gpgsig ")):
			in = true
			found++
			sig = append(sig, line[len("gpgsig "):]...)
			continue
		}
		in = false
		payload = append(payload, line...)
	}
	if found != 1 {
		return raw, ""
	}
	return payload, string(bytes.TrimRight(sig, "\n"))
}
