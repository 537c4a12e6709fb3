package gittest

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Hostile is an attacker's bare clone of a victim's remote, made with the git
// binary, in which a test writes raw objects with git plumbing, or by hand
// where git refuses (names with a slash, "..", a newline), and pushes them.
// Nothing here goes through memvault's own writer, so the objects are exactly
// what an attacker could send; the clone's ciphertext and recipients are real.
type Hostile struct {
	t   testing.TB
	Dir string // the bare clone
	URL string // the remote it pushes to
	// SigningKey, when set, is an SSH private key file that Commit signs
	// with, as git commit-tree -S does with gpg.format=ssh: an insider's key,
	// a writer gone bad or stolen, for tests of what a writer can still not do.
	SigningKey string
}

// TreeEntry is one entry of a tree object as written: Mode is git's octal
// ("100644", "40000", "120000", "160000", "100755").
type TreeEntry struct {
	Mode string
	Name string
	Hash string
}

// NewHostile clones url (a local path, git:// or http://) into a temporary
// bare repository.
func NewHostile(t testing.TB, url string) *Hostile {
	t.Helper()
	h := &Hostile{t: t, Dir: filepath.Join(t.TempDir(), "attacker.git"), URL: url}
	h.run(nil, "clone", "-q", "--bare", url, h.Dir)
	return h
}

func (h *Hostile) run(stdin []byte, args ...string) string {
	h.t.Helper()
	cmd := exec.Command(Git(h.t), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=mallory", "GIT_AUTHOR_EMAIL=m@example.invalid",
		"GIT_COMMITTER_NAME=mallory", "GIT_COMMITTER_EMAIL=m@example.invalid")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		h.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.Bytes())
	}
	return strings.TrimSpace(out.String())
}

// Git runs git in the clone and returns its trimmed output.
func (h *Hostile) Git(args ...string) string {
	h.t.Helper()
	return h.run(nil, append([]string{"--git-dir", h.Dir}, args...)...)
}

// Damage works on the bare repository dir itself, as someone with git in hand
// would change a vault: Push only moves its main branch.
func Damage(t testing.TB, dir string) *Hostile { return &Hostile{t: t, Dir: dir} }

// signRaw signs a commit written by hand as git would: ssh-keygen signs the
// object's bytes in the "git" namespace, and the armored signature goes in a
// gpgsig header, each line after the first indented by a space.
func (h *Hostile) signRaw(body []byte) []byte {
	h.t.Helper()
	cmd := exec.Command("ssh-keygen", "-q", "-Y", "sign", "-n", "git", "-f", h.SigningKey)
	cmd.Stdin = bytes.NewReader(body)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		h.t.Fatalf("ssh-keygen -Y sign: %v\n%s", err, errb.Bytes())
	}
	sig := strings.ReplaceAll(strings.TrimSpace(out.String()), "\n", "\n ")
	head, msg, _ := bytes.Cut(body, []byte("\n\n"))
	return fmt.Appendf(nil, "%s\ngpgsig %s\n\n%s", head, sig, msg)
}

// Head is the clone's main branch.
func (h *Hostile) Head() string { h.t.Helper(); return h.Git("rev-parse", "refs/heads/main") }

// Blob writes data as a blob with git hash-object and returns its hash.
func (h *Hostile) Blob(data []byte) string {
	h.t.Helper()
	return h.run(data, "--git-dir", h.Dir, "hash-object", "-w", "--stdin")
}

// ReadTree lists tree (or commit) rev's entries.
func (h *Hostile) ReadTree(rev string) []TreeEntry {
	h.t.Helper()
	out := h.run(nil, "--git-dir", h.Dir, "ls-tree", "-z", rev)
	var es []TreeEntry
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		meta, name, _ := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		es = append(es, TreeEntry{Mode: strings.TrimLeft(f[0], "0"), Name: name, Hash: f[2]})
	}
	return es
}

// Tree writes a tree object of es by hand (any name, any mode, in git's order
// where names allow), as a loose object, and returns its hash.
func (h *Hostile) Tree(es []TreeEntry) string {
	h.t.Helper()
	sort.SliceStable(es, func(i, j int) bool { return sortKey(es[i]) < sortKey(es[j]) })
	var body bytes.Buffer
	for _, e := range es {
		raw, err := hex.DecodeString(e.Hash)
		if err != nil || len(raw) != 20 {
			h.t.Fatalf("tree entry %q: bad hash %q", e.Name, e.Hash)
		}
		fmt.Fprintf(&body, "%s %s\x00", e.Mode, e.Name)
		body.Write(raw)
	}
	return h.Loose("tree", body.Bytes())
}

func sortKey(e TreeEntry) string {
	if e.Mode == "40000" {
		return e.Name + "/"
	}
	return e.Name
}

// Loose writes an object of type typ by hand, zlib-compressed into the clone's
// objects directory, and returns its hash.
func (h *Hostile) Loose(typ string, body []byte) string {
	h.t.Helper()
	if typ == "commit" && h.SigningKey != "" {
		body = h.signRaw(body)
	}
	hdr := typ + " " + strconv.Itoa(len(body)) + "\x00"
	sum := sha1.New()
	sum.Write([]byte(hdr))
	sum.Write(body)
	id := hex.EncodeToString(sum.Sum(nil))
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte(hdr))
	zw.Write(body)
	zw.Close()
	dir := filepath.Join(h.Dir, "objects", id[:2])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id[2:]), z.Bytes(), 0o444); err != nil && !os.IsExist(err) {
		h.t.Fatal(err)
	}
	return id
}

// Set returns a new tree: tree root with the entry at slash-separated path p
// replaced by e (e.Name is taken from p's last segment unless set; a zero
// Hash removes the entry). Missing directories are made.
func (h *Hostile) Set(root, p string, e TreeEntry) string {
	h.t.Helper()
	dir, name, found := strings.Cut(p, "/")
	var es []TreeEntry
	if root != "" {
		es = h.ReadTree(root)
	}
	var out []TreeEntry
	var sub string
	for _, x := range es {
		switch {
		case found && x.Name == dir && x.Mode == "40000":
			sub = x.Hash
		case !found && x.Name == p:
		default:
			out = append(out, x)
			continue
		}
	}
	if found {
		out = append(out, TreeEntry{Mode: "40000", Name: dir, Hash: h.Set(sub, name, e)})
	} else if e.Hash != "" {
		if e.Name == "" {
			e.Name = p
		}
		out = append(out, e)
	}
	return h.Tree(out)
}

// Commit writes a commit of tree on parents with git commit-tree.
func (h *Hostile) Commit(tree, msg string, parents ...string) string {
	h.t.Helper()
	args := []string{"--git-dir", h.Dir, "commit-tree", tree}
	if h.SigningKey != "" {
		args = []string{"--git-dir", h.Dir, "-c", "gpg.format=ssh", "-c", "user.signingKey=" + h.SigningKey, "commit-tree", "-S", tree}
	}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	return h.run([]byte(msg), args...)
}

// Push points main at commit and pushes it to the remote.
func (h *Hostile) Push(commit string) {
	h.t.Helper()
	h.Git("update-ref", "refs/heads/main", commit)
	if h.URL != "" {
		h.run(nil, "--git-dir", h.Dir, "push", "-q", h.URL, "refs/heads/main:refs/heads/main")
	}
}

// Change commits one change to main's tree (see Set) and pushes it, and returns
// the commit.
func (h *Hostile) Change(p string, e TreeEntry, msg string) string {
	h.t.Helper()
	head := h.Head()
	c := h.Commit(h.Set(head+"^{tree}", p, e), msg, head)
	h.Push(c)
	return c
}

// Bomb writes a loose blob of size bytes, prefix and then zeros, by hand with
// zlib, and returns its hash: a zlib bomb, whose file is about a thousandth of
// the size its header claims. Nothing of it is held in memory.
func (h *Hostile) Bomb(prefix []byte, size int64) string {
	h.t.Helper()
	f, err := os.CreateTemp(filepath.Join(h.Dir, "objects"), "bomb")
	if err != nil {
		h.t.Fatal(err)
	}
	defer os.Remove(f.Name())
	sum := sha1.New()
	zw, _ := zlib.NewWriterLevel(f, zlib.BestCompression)
	w := io.MultiWriter(zw, sum)
	fmt.Fprintf(w, "blob %d\x00", size)
	w.Write(prefix)
	zero := make([]byte, 1<<20)
	for left := size - int64(len(prefix)); left > 0; left -= int64(len(zero)) {
		w.Write(zero[:min(left, int64(len(zero)))])
	}
	if err := zw.Close(); err != nil {
		h.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		h.t.Fatal(err)
	}
	id := hex.EncodeToString(sum.Sum(nil))
	dir := filepath.Join(h.Dir, "objects", id[:2])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, id[2:])); err != nil {
		h.t.Fatal(err)
	}
	return id
}
