package vault_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// twins are a plain vault and a sealed one, with the same identity and the
// same clock, given the same operations: every reader must then answer the
// same on both, once the sealed vault's commit hashes are read as the plain
// one's.
type twins struct {
	t             *testing.T
	plain, sealed *vault.Vault
	// hashes holds the commits made in both, in order: [plain, sealed].
	hashes [][2]string
}

func newTwins(t *testing.T) *twins {
	t.Helper()
	dir := t.TempDir()
	w := &twins{t: t}
	for i, sealed := range []bool{false, true} {
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		n := 0
		opts := vault.Options{IdentityFile: filepath.Join(dir, "identity"), Plain: !sealed, Now: func() time.Time {
			n++
			return start.Add(time.Duration(n) * time.Minute)
		}}
		v, _, err := vault.Init(ctx, filepath.Join(dir, []string{"plain.git", "sealed.git"}[i]), opts)
		if err != nil {
			t.Fatalf("vault.Init(Plain: %v): %v", !sealed, err)
		}
		t.Cleanup(func() { v.Close() })
		if sealed {
			w.sealed = v
		} else {
			w.plain = v
		}
	}
	w.heads()
	return w
}

// heads records the newest commit of both vaults when it is new.
func (w *twins) heads() [2]string {
	w.t.Helper()
	var hs [2]string
	for i, v := range []*vault.Vault{w.plain, w.sealed} {
		recs, err := v.Log(ctx, vault.LogOptions{Limit: 1})
		if err != nil {
			w.t.Fatal(err)
		}
		hs[i] = recs[0].Commit
	}
	if len(w.hashes) == 0 || w.hashes[len(w.hashes)-1] != hs {
		w.hashes = append(w.hashes, hs)
	}
	return hs
}

// update runs fn in an Update of both vaults, and returns the plain vault's
// new commit.
func (w *twins) update(meta vault.Meta, fn func(tx *vault.Tx) error) string {
	w.t.Helper()
	for _, v := range []*vault.Vault{w.plain, w.sealed} {
		if err := v.Update(ctx, meta, fn); err != nil {
			w.t.Fatalf("%s: %v", meta.Command, err)
		}
	}
	return w.heads()[0]
}

func (w *twins) put(p, content string) string {
	w.t.Helper()
	return w.update(vault.Meta{Command: "create", ToolUseID: "toolu_" + filepath.Base(p), Agent: "agent-a", Session: "s1"},
		func(tx *vault.Tx) error { return tx.WriteFile(ctx, p, []byte(content)) })
}

func (w *twins) mv(from, to string) string {
	w.t.Helper()
	return w.update(vault.Meta{Command: "rename"}, func(tx *vault.Tx) error { return tx.Rename(from, to) })
}

func (w *twins) rm(p string) string {
	w.t.Helper()
	return w.update(vault.Meta{Command: "delete"}, func(tx *vault.Tx) error { return tx.Remove(p) })
}

// sealedRev is the sealed vault's commit for the plain vault's commit h, or
// h itself when it is none (a revision such as "main" or "HEAD~1").
func (w *twins) sealedRev(h string) string {
	for _, p := range w.hashes {
		if p[0] == h {
			return p[1]
		}
	}
	return h
}

// same runs call on both vaults, with rev given as the plain vault's commit
// (or any revision), and reports where the sealed vault's answer, its commit
// hashes read as the plain one's, is not the plain vault's.
func (w *twins) same(what string, call func(v *vault.Vault, rev func(string) string) (any, error)) string {
	w.t.Helper()
	w.heads()
	var out [2]string
	for i, v := range []*vault.Vault{w.plain, w.sealed} {
		rev := func(h string) string { return h }
		if i == 1 {
			rev = w.sealedRev
		}
		got, err := call(v, rev)
		b, _ := json.MarshalIndent(got, "", " ")
		out[i] = string(b)
		if err != nil {
			out[i] += "\nerror: " + strings.ReplaceAll(err.Error(), w.sealed.Dir(), w.plain.Dir())
		}
	}
	w.heads()
	for _, p := range w.hashes {
		out[1] = strings.ReplaceAll(out[1], p[1], p[0])
		out[1] = strings.ReplaceAll(out[1], p[1][:12], p[0][:12])
	}
	for i := range out { // maps keyed by commit hash in the plain one's order
		j, e, _ := strings.Cut(out[i], "\nerror: ")
		var x any
		if json.Unmarshal([]byte(j), &x) == nil {
			b, _ := json.MarshalIndent(x, "", " ")
			out[i] = string(b)
			if e != "" {
				out[i] += "\nerror: " + e
			}
		}
	}
	if testing.Verbose() {
		w.t.Logf("%s:\n%s", what, out[0])
	}
	if out[0] != out[1] {
		w.t.Errorf("%s: the sealed vault answers\n%s\nthe plain one\n%s", what, out[1], out[0])
	}
	return out[0]
}

// The history both vaults are given: creates, edits, a rename of a file and
// of a folder, a move with an edit, a delete.
func (w *twins) history() (c1, c3 string) {
	w.t.Helper()
	c1 = w.put("/memories/a.md", "one\ntwo\nthree\n")
	w.put("/memories/gone.md", "bye\n")
	c3 = w.put("/memories/a.md", "one\nTWO\nthree\n")
	w.put("/memories/clients/acme/notes.md", "acme\nlikes tea\n")
	w.mv("/memories/a.md", "/memories/d/a.md")
	w.mv("/memories/clients", "/memories/customers")
	w.put("/memories/customers/acme/notes.md", "acme\nlikes coffee\n")
	w.rm("/memories/gone.md")
	w.update(vault.Meta{Command: "rename"}, func(tx *vault.Tx) error {
		if err := tx.Rename("/memories/d/a.md", "/memories/e.md"); err != nil {
			return err
		}
		return tx.WriteFile(ctx, "/memories/e.md", []byte("zero\none\nTWO\nthree\n"))
	})
	return c1, c3
}

func TestSealedShowAndDiff(t *testing.T) {
	w := newTwins(t)
	c1, _ := w.history()
	for i := range w.hashes {
		h := w.hashes[i][0]
		w.same("Show("+h[:8]+")", func(v *vault.Vault, rev func(string) string) (any, error) { return v.Show(ctx, rev(h)) })
	}
	for _, d := range [][3]string{
		{c1, "main", ""}, {"main", c1, ""}, {c1, "main", "/memories/customers"}, {c1, "main", "/memories/clients/acme"},
		{"main", c1, "/memories/a.md"}, {"main~3", "main", "/memories/customers/acme/notes.md"}, {"main", "main", ""},
	} {
		got := w.same("Diff"+strings.Join(d[:], " "), func(v *vault.Vault, rev func(string) string) (any, error) {
			return v.Diff(ctx, rev(d[0]), rev(d[1]), d[2])
		})
		if d[0] == c1 && d[2] == "" && !strings.Contains(got, "likes coffee") {
			t.Errorf("Diff(c1, main) = %s, want the folder's file added", got)
		}
	}
}

func TestSealedGrepAndStatus(t *testing.T) {
	w := newTwins(t)
	_, c3 := w.history()
	w.put("/memories/x/y.md.conflict-ours", "mine\n")
	w.put("/memories/x/z.md", "a\n<<<<<<< current\nb\n=======\nc\n>>>>>>> theirs\n")
	w.put("/memories/x/w.md", "<<<<<<< only a marker\n")
	for _, o := range []vault.GrepOptions{
		{}, {Context: 1}, {MaxLines: 2}, {Rev: c3}, {Paths: []string{"/memories/customers", "/memories/e.md"}},
		{Paths: []string{"/memories/nope"}}, {Paths: []string{"/memories/" + strings.Repeat("n", 200)}}, {Paths: []string{"memories/bad"}},
	} {
		w.same(fmt.Sprintf("Grep(%+v)", o), func(v *vault.Vault, rev func(string) string) (any, error) {
			o.Rev = rev(o.Rev)
			return v.Grep(ctx, regexp.MustCompile("o|<"), o)
		})
	}
	got := w.same("Status", func(v *vault.Vault, _ func(string) string) (any, error) { return v.Status(ctx) })
	if !strings.Contains(got, "/memories/x/z.md") || !strings.Contains(got, "y.md.conflict-ours") {
		t.Errorf("Status = %s, want both conflicts", got)
	}
}

func TestSealedBlame(t *testing.T) {
	w := newTwins(t)
	_, c3 := w.history()
	w.put("/memories/customers/acme/notes.md", "acme\nlikes coffee\nand cake\n")
	for _, b := range [][2]string{
		{"/memories/e.md", ""}, {"/memories/customers/acme/notes.md", ""}, {"/memories/customers/acme/notes.md", "main~1"},
		{"/memories/a.md", c3}, {"/memories/a.md", ""}, {"/memories/customers", ""}, {"/memories/" + strings.Repeat("n", 200), ""},
	} {
		got := w.same("Blame"+strings.Join(b[:], " "), func(v *vault.Vault, rev func(string) string) (any, error) {
			return v.Blame(ctx, b[0], rev(b[1]))
		})
		if b[0] == "/memories/customers/acme/notes.md" && b[1] == "" && !strings.Contains(got, `"path": "/memories/clients/acme/notes.md"`) {
			t.Errorf("Blame(%s) = %s, want its first line from before the folder's rename", b[0], got)
		}
	}
}

// A sealed vault's checkpoints read as a plain vault's, and the host sees
// neither their names nor their messages.
func TestSealedCheckpoints(t *testing.T) {
	w := newTwins(t)
	c1, _ := w.history()
	for _, c := range [][3]string{{"zeta-canary", c1, ""}, {"release/alpha-canary", "", "line one canary\nline two\n"}, {"zeta-canary", "", ""}, {"a b", "", ""}} {
		w.same("Checkpoint("+c[0]+")", func(v *vault.Vault, rev func(string) string) (any, error) {
			return v.Checkpoint(ctx, c[0], rev(c[1]), c[2])
		})
	}
	// A part too long to seal is refused, as a path's is.
	if _, err := w.sealed.Checkpoint(ctx, strings.Repeat("n", 200), "", ""); !errors.Is(err, vault.ErrInvalid) {
		t.Errorf("Checkpoint(a 200-byte name) on a sealed vault: err = %v, want ErrInvalid", err)
	}
	w.same("Checkpoints", func(v *vault.Vault, _ func(string) string) (any, error) { return v.Checkpoints(ctx) })
	w.same("Show(zeta-canary~1)", func(v *vault.Vault, _ func(string) string) (any, error) { return v.Show(ctx, "zeta-canary~1") })
	w.same("Diff(release/alpha-canary, zeta-canary)", func(v *vault.Vault, _ func(string) string) (any, error) {
		return v.Diff(ctx, "release/alpha-canary", "zeta-canary", "")
	})
	if err := w.sealed.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if found := vaulttest.FindInObjects(t, w.sealed.Dir(), []byte("canary")); len(found) > 0 {
		t.Errorf("the host can read a checkpoint in %v", found)
	}
	refs, err := exec.Command(gittest.Git(t), "--git-dir", w.sealed.Dir(), "for-each-ref").Output()
	if err != nil || strings.Contains(string(refs), "canary") || !strings.Contains(string(refs), "refs/tags/") {
		t.Errorf("git for-each-ref = %s, %v; want tags, none named in clear", refs, err)
	}
}

// readState is what a vault holds now and its history, as its readers give them.
func readState(v *vault.Vault) (any, error) {
	s, err := v.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	files, err := s.Files(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, f := range files {
		b, err := s.ReadFile(ctx, f)
		if err != nil {
			return nil, err
		}
		out[f] = string(b)
	}
	recs, err := v.Log(ctx, vault.LogOptions{})
	out["log"] = recs
	return out, err
}

// The undo commands on a sealed vault do what they do on a plain one: the
// same answers, the same files after, the same history, and blame through
// what they brought back.
func TestSealedUndo(t *testing.T) {
	w := newTwins(t)
	c1, c3 := w.history()
	meta := vault.Meta{ToolUseID: "toolu_undo", Agent: "ui", Session: "s2"}
	type call struct {
		name string
		do   func(v *vault.Vault, rev func(string) string) (any, error)
	}
	restore := func(p, r string) call {
		return call{"Restore(" + p + ")", func(v *vault.Vault, rev func(string) string) (any, error) {
			return v.Restore(ctx, meta, p, rev(r))
		}}
	}
	revert := func(r string) call {
		return call{"Revert", func(v *vault.Vault, rev func(string) string) (any, error) { return v.Revert(ctx, meta, rev(r)) }}
	}
	rollback := func(r string) call {
		return call{"Rollback", func(v *vault.Vault, rev func(string) string) (any, error) { return v.Rollback(ctx, meta, rev(r)) }}
	}
	rename := w.hashes[6][0]   // clients -> customers
	fileMove := w.hashes[5][0] // a.md -> d/a.md
	for _, c := range []call{
		restore("/memories/a.md", c1),                  // a file gone since, back
		restore("/memories/customers", w.hashes[7][0]), // a folder, as it was
		restore("/memories/customers", w.hashes[7][0]), // nothing to do
		restore("/memories/clients/acme/notes.md", c3),
		restore("/memories/nope.md", c1),
		restore("/memories/e.md/x", c1),
		revert(c3),       // an edit of a file moved and edited since
		revert(rename),   // a folder's rename
		revert(rename),   // again: undone already, or in the way
		revert(fileMove), // a file's move
		revert(w.hashes[1][0]),
		rollback(c3),
		rollback("main~2"), // the rollback undone
		rollback(w.hashes[0][0]),
		rollback("main~1"),
	} {
		w.same(c.name, c.do)
		w.heads()
	}
	w.same("state", func(v *vault.Vault, _ func(string) string) (any, error) { return readState(v) })
	s, err := w.plain.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := s.Files(ctx)
	for _, f := range files {
		w.same("Blame("+f+")", func(v *vault.Vault, _ func(string) string) (any, error) { return v.Blame(ctx, f, "") })
	}
	if len(files) < 3 {
		t.Errorf("after the undos, files = %v; want some to blame", files)
	}
}
