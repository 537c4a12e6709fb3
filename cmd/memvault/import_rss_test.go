//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestImportHistoryOneBlobManyNamesRSS: `import --history` of a repository
// of a few hundred kilobytes whose one commit names one blob of almost a
// MiB under 3,000 paths once held every copy, plaintext and ciphertext, in
// memory (6.2 GB) and added 3 GB to the vault. Measured from outside, as a
// child's peak RSS (getrusage): with the vault's limits as they come, the
// import is refused before it writes anything, saying which bound it met;
// with memvault.maxVaultSize raised so that it may go on (150 names), it
// writes the files a few at a time. Either way the peak is within 100 MiB of an ordinary
// import's. The repository is written with git plumbing, never by memvault.
func TestImportHistoryOneBlobManyNamesRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("reads and writes a few hundred MiB of files: seconds of CPU")
	}
	child := newRSSChild(t)
	root := child.root
	run := func(dir string, args ...string) (string, int, int64) { t.Helper(); return child.run(dir, "", args...) }
	git := child.git

	// An ordinary source: three small memory files in two commits.
	plain := gittest.Bare(t, root, "plain")
	hp := gittest.Damage(t, plain)
	one := hp.Commit(hp.Tree([]gittest.TreeEntry{{Mode: "100644", Name: "a.md", Hash: hp.Blob([]byte("a note\n"))}}), "one\n")
	hp.Push(hp.Commit(hp.Tree([]gittest.TreeEntry{
		{Mode: "100644", Name: "a.md", Hash: hp.Blob([]byte("a note, changed\n"))},
		{Mode: "100644", Name: "b.md", Hash: hp.Blob([]byte(strings.Repeat("memory ", 300)))},
	}), "two\n", one))

	// The hostile source: one text blob just under the file size limit,
	// named 3,000 times in one tree.
	const names = 3000
	line := "the same memory, again and again\n"
	big := []byte(strings.Repeat(line, (1<<20-1024)/len(line)))
	hostile := gittest.Bare(t, root, "hostile")
	hh := gittest.Damage(t, hostile)
	blob := hh.Blob(big)
	es := make([]gittest.TreeEntry, names)
	for i := range es {
		es[i] = gittest.TreeEntry{Mode: "100644", Name: fmt.Sprintf("m%04d.md", i), Hash: blob}
	}
	hh.Push(hh.Commit(hh.Tree(es), "many names\n"))
	if n := dirSize(t, hostile); n > 1<<20 {
		t.Fatalf("the hostile source takes %d bytes; want well under a MiB", n)
	}
	// The same under 150 names, for the run let through: 150 MiB of files,
	// twice that in memory once, is enough to tell, and takes seconds.
	const fewer = 150
	some := gittest.Bare(t, root, "some")
	hs := gittest.Damage(t, some)
	hs.Blob(big)
	hs.Push(hs.Commit(hs.Tree(es[:fewer]), "fewer names\n"))

	// Each vault scans no file for secrets: the scan (a third of a second a
	// MiB) would be most of the time, and is not what is measured.
	initVault := func(dir string) {
		t.Helper()
		if out, code, _ := run(dir, "init"); code != 0 {
			t.Fatalf("init: exit %d\n%s", code, out)
		}
		git("--git-dir", dir, "config", "memvault.secretPolicy", "off")
	}
	ordinary := filepath.Join(root, "ordinary.git")
	initVault(ordinary)
	out, code, base := run(ordinary, "import", "--history", plain)
	if code != 0 {
		t.Fatalf("import --history of an ordinary repository: exit %d\n%s", code, out)
	}

	// As the vault comes: refused before anything is written.
	v := filepath.Join(root, "v.git")
	initVault(v)
	before := dirSize(t, v)
	out, code, refused := run(v, "import", "--history", hostile)
	if code == 0 || !strings.Contains(out, "more than 268435456 bytes of files") || !strings.Contains(out, "memvault.maxVaultSize") {
		t.Errorf("import --history of one blob under %d names: exit %d\n%s\nwant it refused, naming the bound and memvault.maxVaultSize", names, code, out)
	}
	if grown := dirSize(t, v) - before; grown > 1<<20 {
		t.Errorf("the refused import grew the vault by %d bytes; want nothing written", grown)
	}
	if got := git("--git-dir", v, "rev-list", "--count", "main"); got != "1" {
		t.Errorf("commits after the refused import = %s, want 1 (init's)", got)
	}

	// With the total size limit raised past it, the import goes through a
	// few files at a time.
	w := filepath.Join(root, "w.git")
	initVault(w)
	git("--git-dir", w, "config", "memvault.maxVaultSize", fmt.Sprint(1<<30))
	out, code, through := run(w, "import", "--history", some)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("%d files added", fewer)) {
		t.Fatalf("import --history with maxVaultSize raised: exit %d\n%s\nwant %d files added", code, out, fewer)
	}
	if got, code, _ := run(w, "cat", fmt.Sprintf("/memories/m%04d.md", fewer-1)); code != 0 || got != string(big) {
		t.Errorf("cat the last file after the import: exit %d, %d bytes; want the source's %d", code, len(got), len(big))
	}

	t.Logf("peak RSS: ordinary import %d MiB; one blob under %d names refused %d MiB (%+d); under %d names let through %d MiB (%+d)",
		base>>20, names, refused>>20, (refused-base)>>20, fewer, through>>20, (through-base)>>20)
	for what, rss := range map[string]int64{"refused": refused, "let through": through} {
		if rss-base > rssSlack {
			t.Errorf("import --history of one blob under %d names, %s: peak RSS %d MiB, the ordinary import's %d MiB: more than 100 MiB above", names, what, rss>>20, base>>20)
		}
	}
}

// dirSize adds up the sizes of the files under dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
