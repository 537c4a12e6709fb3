package main

import (
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestImportHistoryStaysUnderTo: a source commit whose tree holds an entry
// ".." (written by hand: git refuses one) once had `import --history --to
// /memories/claude` overwrite /memories/important.md, and its next commit,
// without the entry, deleted it. Such entries are skipped and listed, and
// nothing outside --to is touched.
func TestImportHistoryStaysUnderTo(t *testing.T) {
	flags := initVault(t)
	cli := cliFor(flags...)
	if out, code, stderr := cli(`{"command":"create","path":"/memories/important.md","file_text":"mine\n"}`, "tool"); code != exitOK {
		t.Fatalf("create: %s%s", out, stderr)
	}
	src := gittest.Bare(t, t.TempDir(), "source")
	h := gittest.Damage(t, src)
	evil := h.Blob([]byte("overwritten by the source\n"))
	dotdot := h.Tree([]gittest.TreeEntry{{Mode: "100644", Name: "important.md", Hash: evil}})
	note := h.Blob([]byte("a note\n"))
	one := h.Commit(h.Tree([]gittest.TreeEntry{{Mode: "40000", Name: "..", Hash: dotdot}, {Mode: "100644", Name: "note.md", Hash: note}}), "one\n")
	two := h.Commit(h.Tree([]gittest.TreeEntry{{Mode: "100644", Name: "note.md", Hash: note}}), "two\n", one)
	h.Push(two)

	out, code, stderr := cli("", "import", src, "--history", "--to", "/memories/claude")
	if code != exitOK {
		t.Fatalf("import --history: status %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, `  /memories/claude/../important.md: not a name git writes in a tree (".." name)`) {
		t.Errorf("import --history = %s\nwant the entry \"..\" listed as skipped", out)
	}
	if got, code, stderr := cli("", "cat", "/memories/important.md"); code != exitOK || got != "mine\n" {
		t.Errorf("/memories/important.md after the import = %q (status %d, %s), want it untouched: \"mine\\n\"", got, code, stderr)
	}
	if got, _, _ := cli("", "cat", "/memories/claude/note.md"); got != "a note\n" {
		t.Errorf("/memories/claude/note.md = %q, want the source's note", got)
	}
}

// TestImportHistoryTouchesOnlyItsOwn: after its first commit, import
// --history replaced and deleted files it never wrote, without --overwrite.
// A later source commit replaces or deletes a file only while the vault holds
// what the commit before it wrote there.
func TestImportHistoryTouchesOnlyItsOwn(t *testing.T) {
	flags := initVault(t)
	cli := cliFor(flags...)
	if out, code, stderr := cli(`{"command":"create","path":"/memories/claude/core.md","file_text":"mine\n"}`, "tool"); code != exitOK {
		t.Fatalf("create: %s%s", out, stderr)
	}
	src := gittest.Bare(t, t.TempDir(), "source")
	h := gittest.Damage(t, src)
	blob := func(s string) string { return h.Blob([]byte(s)) }
	one := h.Commit(h.Tree([]gittest.TreeEntry{{Mode: "100644", Name: "note.md", Hash: blob("v1\n")}}), "one\n")
	two := h.Commit(h.Tree([]gittest.TreeEntry{{Mode: "100644", Name: "note.md", Hash: blob("v2\n")},
		{Mode: "100644", Name: "core.md", Hash: blob("the source's\n")}}), "two\n", one)
	three := h.Commit(h.Tree([]gittest.TreeEntry{{Mode: "100644", Name: "note.md", Hash: blob("v3\n")}}), "three\n", two)
	h.Push(three)

	out, code, stderr := cli("", "import", src, "--history", "--to", "/memories/claude")
	if code != exitOK {
		t.Fatalf("import --history: status %d\n%s%s", code, out, stderr)
	}
	if got, code, _ := cli("", "cat", "/memories/claude/core.md"); code != exitOK || got != "mine\n" {
		t.Errorf("core.md, the vault's own, after the import = %q (status %d), want it untouched", got, code)
	}
	if !strings.Contains(out, "kept as they are") || !strings.Contains(out, "/memories/claude/core.md") {
		t.Errorf("import --history = %s\nwant core.md listed as kept", out)
	}
	if got, _, _ := cli("", "cat", "/memories/claude/note.md"); got != "v3\n" {
		t.Errorf("note.md, the import's own, = %q, want the source's last version", got)
	}
}
