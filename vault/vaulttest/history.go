package vaulttest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault"
)

// History is a vault with a long history, made by BuildHistory.
type History struct {
	Dir          string // the vault
	IdentityFile string
	Head         string // the newest commit
	File         string // a memory file changed by one commit in Files
	Files        int
	Indexing     time.Duration // how long completing the history index took
}

// HistoryFile is the memory path of the i-th file of a built history: ten
// directories of files/10 files.
func HistoryFile(i, files int) string {
	return fmt.Sprintf("/memories/d%d/f%04d.md", i%10, i)
}

// BuildHistory makes a vault in dir whose main branch has commits commits after
// its init commit: one that creates files memory files, then each of the others
// overwrites one of them in turn, with the message and trailers memvault writes
// for a str_replace. The commits go straight into one git pack, the way a clone
// or a fetch would bring them, and main is moved through the journal; then the
// history index is completed, as a clone's first path walk would. The files
// hold tiny blobs, not age ciphertext: the history can be walked, not read.
func BuildHistory(tb testing.TB, dir string, commits, files int) History {
	tb.Helper()
	h := History{Dir: filepath.Join(dir, "vault.git"), IdentityFile: filepath.Join(dir, "identity"), Files: files}
	h.File = HistoryFile(42%files, files)
	// Plain: the commits below are written by hand with plain names and
	// messages, which a sealed tree would refuse.
	v, _, err := vault.Init(context.Background(), h.Dir, vault.Options{IdentityFile: h.IdentityFile, Plain: true})
	if err != nil {
		tb.Fatalf("build history: %v", err)
	}
	v.Close()
	r, err := gitlog.Open(h.Dir)
	if err != nil {
		tb.Fatalf("build history: %v", err)
	}
	head, err := buildPack(r, commits, files)
	r.Close()
	if err != nil {
		tb.Fatalf("build history: %v", err)
	}
	// A fresh Repo sees the new pack.
	if r, err = gitlog.Open(h.Dir); err != nil {
		tb.Fatalf("build history: %v", err)
	}
	defer r.Close()
	wl, err := r.Lock(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	old, _ := r.Head()
	err = wl.UpdateRef(gitlog.Branch, old, head)
	wl.Unlock()
	if err != nil {
		tb.Fatalf("build history: %v", err)
	}
	start := time.Now()
	if err := r.IndexHistory(context.Background(), head); err != nil {
		tb.Fatalf("build history: %v", err)
	}
	h.Indexing, h.Head = time.Since(start), head.String()
	return h
}

func buildPack(r *gitlog.Repo, commits, files int) (gitlog.Hash, error) {
	parent, err := r.Head()
	if err != nil {
		return parent, err
	}
	root, err := r.RootTree(parent)
	if err != nil {
		return parent, err
	}
	base, err := r.ReadTree(root) // .gitattributes and .memvault, kept as they are
	if err != nil {
		return parent, err
	}
	count := files + 10 + 3 + 5*(commits-1)
	p, err := newPackWriter(r.Dir(), count)
	if err != nil {
		return parent, err
	}
	tree := func(es []gitlog.Entry) gitlog.Hash { return p.add(objTree, encodeTree(es)) }
	dirs := make([][]gitlog.Entry, 10)
	for i := range files {
		d := i % 10
		blob := p.add(objBlob, fmt.Appendf(nil, "f%d v0\n", i))
		dirs[d] = append(dirs[d], gitlog.Entry{Name: fmt.Sprintf("f%04d.md", i), Mode: gitlog.ModeRegular, Hash: blob})
	}
	mem := make([]gitlog.Entry, 10)
	for d := range mem {
		mem[d] = gitlog.Entry{Name: fmt.Sprintf("d%d", d), Mode: gitlog.ModeDir, Hash: tree(dirs[d])}
	}
	when := time.Now().Add(-time.Duration(commits) * time.Second)
	for i := range commits {
		msg := "import /memories/d0/f0000.md (+more)\n\nMemory-Command: import\n"
		if i > 0 {
			f := i % files
			d := f % 10
			dirs[d][f/10].Hash = p.add(objBlob, fmt.Appendf(nil, "f%d v%d\n", f, i))
			mem[d].Hash = tree(dirs[d])
			path := HistoryFile(f, files)
			msg = fmt.Sprintf("str_replace %s\n\nMemory-Command: str_replace\nMemory-Path: %s\nTool-Use-Id: toolu_%06d\n", path, path, i)
		}
		rootEntries := []gitlog.Entry{}
		for _, e := range base {
			if e.Name != "memories" {
				rootEntries = append(rootEntries, gitlog.Entry{Name: e.Name, Mode: e.Mode, Hash: e.Hash})
			}
		}
		rootEntries = append(rootEntries, gitlog.Entry{Name: "memories", Mode: gitlog.ModeDir, Hash: tree(mem)})
		sig := fmt.Sprintf("agent <agent@memvault> %d +0000", when.Add(time.Duration(i)*time.Second).Unix())
		data := fmt.Appendf(nil, "tree %s\nparent %s\nauthor %s\ncommitter %s\n\n%s", tree(rootEntries), parent, sig, sig, msg)
		parent = p.add(objCommit, data)
	}
	return parent, p.finish(count)
}

// encodeTree writes a git tree object of es, which are in git's order.
func encodeTree(es []gitlog.Entry) []byte {
	var b []byte
	for _, e := range es {
		b = fmt.Appendf(b, "%o %s\x00", uint32(e.Mode), e.Name)
		b = append(b, e.Hash[:]...)
	}
	return b
}
