package gitlog

import (
	"bytes"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// FuzzJournal: whatever a vault folder holds as its journal, reading it
// returns whole records or an error, never a panic, and every record it takes
// is framed again to the same bytes it was read from.
func FuzzJournal(f *testing.F) {
	blob := newObject(plumbing.BlobObject, []byte("a file"))
	rec := encodeRecord(journalRecord{ref: Branch, new: blob.Hash, objs: []rawObject{blob}})
	f.Add(append(journalHeader(), rec...))
	f.Add(append([]byte("memvault journal v1\nboot x\n"), rec...))
	f.Add(append(journalHeader(), rec[:len(rec)-3]...))
	f.Add([]byte("memvault journal v3\nboot x\nepoch y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, epoch, n, ok, _ := parseJournalHeader(data)
		if !ok {
			return
		}
		recs, used, _ := readRecords(data[n:], false)
		if used > len(data)-n {
			t.Fatalf("readRecords used %d of %d bytes", used, len(data)-n)
		}
		if epoch == "" {
			return // version 1: its records are not written again
		}
		var again []byte
		for _, r := range recs {
			again = append(again, encodeRecord(r)...)
		}
		if !bytes.Equal(again, data[n:n+used]) {
			t.Fatalf("the %d records read frame again to other bytes", len(recs))
		}
	})
}

// FuzzHistoryIndex: whatever a vault folder holds as its history index,
// loading it never panics, and every node it takes is encoded again to a
// record that loads as the same node.
func FuzzHistoryIndex(f *testing.F) {
	node := &ixNode{parents: []Hash{{1}, {2}}, ops: []string{"memories", "memories/a.md"}}
	rec := encodeIndexRecord(Hash{3}, node)
	f.Add(append(indexFormat.Encode(), rec...))
	f.Add(rec)
	f.Add(append([]byte("junk"), rec...))
	f.Add(append(indexFormat.Encode(), encodeIndexRecord(Hash{4}, &ixNode{coarse: true})...))
	f.Fuzz(func(t *testing.T, data []byte) {
		ix := &historyIndex{}
		ix.parse(data)
		for h, n := range ix.nodes {
			again := &historyIndex{}
			again.parse(append(indexFormat.Encode(), encodeIndexRecord(h, n)...))
			m := again.nodes[h]
			if m == nil || !slices.Equal(m.parents, n.parents) || !slices.Equal(m.ops, n.ops) || m.coarse != n.coarse {
				t.Fatalf("node %s: %+v encoded again loads as %+v", h, n, m)
			}
		}
	})
}
