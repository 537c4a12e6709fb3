package gitlog

import (
	"slices"
	"testing"
)

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
