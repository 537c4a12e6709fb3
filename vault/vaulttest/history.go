package vaulttest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/seal"
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
	return buildHistory(tb, dir, commits, files, false)
}

// BuildSealedHistory is BuildHistory for a vault of the sealed format: every
// name sealed under the vault's key, every message and author sealed, as
// memvault writes them. The blobs are tiny as in BuildHistory, with no sealed
// size header: the history can be walked, not read or listed.
func BuildSealedHistory(tb testing.TB, dir string, commits, files int) History {
	tb.Helper()
	return buildHistory(tb, dir, commits, files, true)
}

func buildHistory(tb testing.TB, dir string, commits, files int, sealed bool) History {
	tb.Helper()
	h := History{Dir: filepath.Join(dir, "vault.git"), IdentityFile: filepath.Join(dir, "identity"), Files: files}
	h.File = HistoryFile(42%files, files)
	v, _, err := vault.Init(context.Background(), h.Dir, vault.Options{IdentityFile: h.IdentityFile, Plain: !sealed})
	if err != nil {
		tb.Fatalf("build history: %v", err)
	}
	v.Close()
	r, err := gitlog.Open(h.Dir)
	if err != nil {
		tb.Fatalf("build history: %v", err)
	}
	var key *seal.Key
	if sealed {
		if key, err = vaultKey(r, h.IdentityFile); err != nil {
			r.Close()
			tb.Fatalf("build history: %v", err)
		}
	}
	head, err := buildPack(r, commits, files, key)
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

// vaultKey opens the vault key of r's main tree with the identity in
// identityFile, as a reader holding that identity does.
func vaultKey(r *gitlog.Repo, identityFile string) (*seal.Key, error) {
	head, err := r.Head()
	if err != nil {
		return nil, err
	}
	root, err := r.RootTree(head)
	if err != nil {
		return nil, err
	}
	e, err := r.Lookup(root, ".memvault/key")
	if err != nil {
		return nil, err
	}
	ct, err := r.ReadBlob(e.Hash)
	if err != nil {
		return nil, err
	}
	idf, err := os.ReadFile(identityFile)
	if err != nil {
		return nil, err
	}
	ids, err := age.ParseIdentities(bytes.NewReader(idf))
	if err != nil {
		return nil, err
	}
	pr, err := age.Decrypt(bytes.NewReader(ct), ids...)
	if err != nil {
		return nil, err
	}
	plain, err := io.ReadAll(pr)
	if err != nil {
		return nil, err
	}
	return seal.ParseKey(plain)
}

// historyNames stores names as a vault of its format does: as they are (key
// nil), or sealed under key in their folder.
type historyNames struct{ key *seal.Key }

func (n historyNames) name(dir, name string) string {
	if n.key == nil {
		return name
	}
	s, err := n.key.SealName(dir, name)
	if err != nil {
		panic(err) // the names made here are short and valid
	}
	return s
}

// sortTree puts es in git's order: by name, a folder's name as if it ended in "/".
func sortTree(es []gitlog.Entry) {
	key := func(e gitlog.Entry) string {
		if e.IsDir() {
			return e.Name + "/"
		}
		return e.Name
	}
	slices.SortFunc(es, func(a, b gitlog.Entry) int { return strings.Compare(key(a), key(b)) })
}

func buildPack(r *gitlog.Repo, commits, files int, key *seal.Key) (gitlog.Hash, error) {
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
	ns := historyNames{key}
	dirs := make([][]gitlog.Entry, 10)
	for i := range files {
		d := i % 10
		blob := p.add(objBlob, fmt.Appendf(nil, "f%d v0\n", i))
		dirs[d] = append(dirs[d], gitlog.Entry{Name: ns.name(fmt.Sprintf("/memories/d%d", d), fmt.Sprintf("f%04d.md", i)), Mode: 0o100644, Hash: blob})
	}
	// at[f] is where file f is in its folder's entries, once they are in git's order.
	at := make([]int, files)
	for d := range dirs {
		order := slices.Clone(dirs[d])
		sortTree(dirs[d])
		for j, e := range order {
			at[j*10+d] = slices.IndexFunc(dirs[d], func(o gitlog.Entry) bool { return o.Name == e.Name })
		}
	}
	mem := make([]gitlog.Entry, 10)
	// memAt[d] is where folder d is in memories/.
	memAt := make([]int, 10)
	for d := range mem {
		mem[d] = gitlog.Entry{Name: ns.name("/memories", fmt.Sprintf("d%d", d)), Mode: 0o040000, Hash: tree(dirs[d])}
	}
	order := slices.Clone(mem)
	sortTree(mem)
	for d, e := range order {
		memAt[d] = slices.IndexFunc(mem, func(o gitlog.Entry) bool { return o.Name == e.Name })
	}
	when := time.Now().Add(-time.Duration(commits) * time.Second)
	for i := range commits {
		msg := "import /memories/d0/f0000.md (+more)\n\nMemory-Command: import\n"
		if i > 0 {
			f := i % files
			d := f % 10
			dirs[d][at[f]].Hash = p.add(objBlob, fmt.Appendf(nil, "f%d v%d\n", f, i))
			mem[memAt[d]].Hash = tree(dirs[d])
			path := HistoryFile(f, files)
			msg = fmt.Sprintf("str_replace %s\n\nMemory-Command: str_replace\nMemory-Path: %s\nTool-Use-Id: toolu_%06d\n", path, path, i)
		}
		author := "agent <agent@memvault>"
		if key != nil {
			var err error
			if msg, err = key.SealMessage(seal.Message{Text: msg, AuthorName: "agent", AuthorEmail: "agent@memvault"}); err != nil {
				return parent, err
			}
			author = seal.Author + " <" + seal.AuthorEmail + ">"
		}
		rootEntries := []gitlog.Entry{}
		for _, e := range base {
			if e.Name != "memories" {
				rootEntries = append(rootEntries, gitlog.Entry{Name: e.Name, Mode: e.Mode, Hash: e.Hash})
			}
		}
		rootEntries = append(rootEntries, gitlog.Entry{Name: "memories", Mode: 0o040000, Hash: tree(mem)})
		stamp := fmt.Sprintf(" %d +0000", when.Add(time.Duration(i)*time.Second).Unix())
		data := fmt.Appendf(nil, "tree %s\nparent %s\nauthor %s\ncommitter %s\n\n%s", tree(rootEntries), parent, author+stamp, "agent <agent@memvault>"+stamp, msg)
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
