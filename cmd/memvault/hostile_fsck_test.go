package main

import (
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestFsckDamagedTreesAndAgeHeaders: a tree with two entries named
// secret.md, and a blob of age's magic line over plaintext, written into the
// vault with git plumbing, once passed fsck as sound; the blob, read, blamed
// the identity. fsck reports both, and cat says the file is damaged.
func TestFsckDamagedTreesAndAgeHeaders(t *testing.T) {
	v := newVictim(t)
	d := v.collaborator(t, v.dir)
	head := d.Head()
	a, b := d.Blob(v.encrypt(t, "one\n")), d.Blob(v.encrypt(t, "two\n"))
	dup := d.Tree([]gittest.TreeEntry{{Mode: "100644", Name: "secret.md", Hash: a}, {Mode: "100644", Name: "secret.md", Hash: b}})
	tree := d.Set(head+"^{tree}", "memories/dup", gittest.TreeEntry{Mode: "40000", Hash: dup})
	tree = d.Set(tree, "memories/fake.md", gittest.TreeEntry{Mode: "100644", Hash: d.Blob([]byte("age-encryption.org/v1\nmeet at dawn, password hunter2\n"))})
	d.Push(d.Commit(tree, "damage\n\nMemory-Command: create\n", head))

	out, code, stderr := v.cli("", "fsck")
	if code == exitOK {
		t.Fatalf("fsck of a damaged vault: status 0\n%s", out)
	}
	for _, want := range []string{`"memories/dup": two entries named "secret.md" (duplicateEntries)`, `"memories/fake.md": a damaged age file`} {
		if !strings.Contains(out+stderr, want) {
			t.Errorf("fsck = %s%s\nwant it to report %s", out, stderr, want)
		}
	}
	out, _, stderr = v.cli("", "cat", "fake.md")
	if !strings.Contains(stderr, "a damaged age file") || strings.Contains(stderr, "identity") || strings.Contains(out, "hunter2") {
		t.Errorf("cat of a blob that only starts like age: stdout %q, stderr %q; want it called damaged, the identity not blamed", out, stderr)
	}
}
