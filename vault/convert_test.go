package vault_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/internal/keyhook"
	"github.com/memvault/memvault/vault/vaulttest"
)

// plainHistory writes, into a vault of the plain format, files in folders, a
// rename and an edit after it, and a checkpoint; it returns the files and
// what they hold.
func plainHistory(t *testing.T, v *vault.Vault) map[string]string {
	t.Helper()
	write(t, v, "/memories/clientcanary/acme/notescanary.md", "acme\nlikes tea\n")
	write(t, v, "/memories/topcanary.md", "top\n")
	write(t, v, "/memories/big.md", strings.Repeat("x", 5000))
	write(t, v, "/memories/empty.md", "")
	mustUpdate(t, v, "rename", func(tx *vault.Tx) error {
		return tx.Rename("/memories/clientcanary/acme/notescanary.md", "/memories/clientcanary/acme/renamedcanary.md")
	})
	write(t, v, "/memories/clientcanary/acme/renamedcanary.md", "acme\nlikes coffee\n")
	if _, err := v.Checkpoint(ctx, "beforecanary", "", ""); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"/memories/clientcanary/acme/renamedcanary.md": "acme\nlikes coffee\n",
		"/memories/topcanary.md":                       "top\n",
		"/memories/big.md":                             strings.Repeat("x", 5000),
		"/memories/empty.md":                           "",
	}
}

// newPlainAt makes the vault Seal converts: one of the plain format, at
// dir/vault.git with its identity at dir/identity. Every test of the
// conversion makes its vault here.
func newPlainAt(tb testing.TB, dir string) (*vault.Vault, vault.Options) {
	tb.Helper()
	return vaulttest.NewPlainAt(tb, dir)
}

func gitOut(t *testing.T, v *vault.Vault, args ...string) string {
	t.Helper()
	if err := v.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gittest.Git(t), append([]string{"--git-dir", v.Dir()}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

func TestSealConvertsInOneCommit(t *testing.T) {
	v, opts := newPlainAt(t, t.TempDir())
	want := plainHistory(t, v)
	before := vaulttest.Log(t, v, vault.LogOptions{})

	res, err := v.Seal(ctx, vault.Meta{}, vault.SealOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != len(want) || res.Commit == "" {
		t.Errorf("Seal = %+v, want %d files in one commit", res, len(want))
	}
	after := vaulttest.Log(t, v, vault.LogOptions{})
	if len(after) != len(before)+1 || after[0].Commit != res.Commit || after[0].Command != "seal" || after[1].Commit != before[0].Commit {
		t.Fatalf("Log after Seal = %d records, head %+v; want one more, the seal", len(after), after[0])
	}

	// The host sees no name in the new tree, and the old trees as they were.
	tree := gitOut(t, v, "ls-tree", "-r", "--name-only", "main")
	if strings.Contains(tree, "canary") || strings.Contains(tree, ".md") || !strings.Contains(tree, ".memvault/key\n") {
		t.Errorf("git ls-tree -r main after Seal =\n%s\nwant sealed names and a key", tree)
	}
	if f := gitOut(t, v, "cat-file", "blob", "main:.memvault/format"); f != "3\n" {
		t.Errorf(".memvault/format = %q, want 3", f)
	}
	if msg := vaulttest.HeadMessage(t, v); strings.Contains(msg, "seal") {
		t.Errorf("the conversion's message is in the clear: %q", msg)
	}
	if old := gitOut(t, v, "ls-tree", "-r", "--name-only", "main~1"); !strings.Contains(old, "memories/clientcanary/acme/renamedcanary.md") {
		t.Errorf("git ls-tree -r main~1 =\n%s\nwant the history before the conversion as it was", old)
	}

	// Every file reads back the same, sizes included, here and in a new process.
	for _, vv := range []*vault.Vault{v, openAs(t, v.Dir(), opts.IdentityFile)} {
		s, err := vv.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		files, err := s.Files(ctx)
		if err != nil || len(files) != len(want) {
			t.Errorf("Files after Seal = %v, %v", files, err)
		}
		for p, c := range want {
			if got, err := read(t, vv, p); err != nil || got != c {
				t.Errorf("read %s after Seal = %q, %v; want %q", p, got, err, c)
			}
		}
		es, err := s.List(ctx, "/memories")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if c, ok := want["/memories/"+e.Name]; ok && e.Size != int64(len(c)) {
				t.Errorf("List: %s is %d bytes, want %d", e.Name, e.Size, len(c))
			}
		}
	}

	// History crosses the conversion: the file's log, its blame, show and diff.
	p := "/memories/clientcanary/acme/renamedcanary.md"
	var cmds []string
	for _, r := range vaulttest.Log(t, v, vault.LogOptions{Path: p}) {
		cmds = append(cmds, r.Command)
	}
	if got := strings.Join(cmds, " "); got != "seal create rename create" {
		t.Errorf("Log(%s) = %s, want seal create rename create (through the conversion and the rename)", p, got)
	}
	b, err := v.Blame(ctx, p, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Lines) != 2 || b.Lines[0].Path != "/memories/clientcanary/acme/notescanary.md" || b.Lines[1].Commit != before[0].Commit {
		t.Errorf("Blame(%s) = %+v, want its first line from before the rename, its second from the edit", p, b.Lines)
	}
	ch, err := v.Show(ctx, "main")
	if err != nil || len(ch.Files) != 0 {
		t.Errorf("Show(the conversion) = %+v, %v; want no file changed in plaintext", ch, err)
	}
	fcs, err := v.Diff(ctx, "beforecanary", "main", "")
	if err != nil || len(fcs) != 0 {
		t.Errorf("Diff(beforecanary, main) = %+v, %v; want nothing", fcs, err)
	}
	cps, err := v.Checkpoints(ctx)
	if err != nil || len(cps) != 1 || cps[0].Name != "beforecanary" || cps[0].Commit != before[0].Commit {
		t.Errorf("Checkpoints after Seal = %+v, %v; want the one made before, by its name", cps, err)
	}
	if problems, err := v.Fsck(ctx); err != nil || len(problems) != 0 {
		t.Errorf("Fsck after Seal = %v, %v", problems, err)
	}

	// Reverting the conversion is refused: it changed no memory, and a
	// vault is not converted back. A rollback to before it brings back that
	// content, sealed.
	if _, err := v.Revert(ctx, vault.Meta{}, res.Commit); !errors.Is(err, vault.ErrInvalid) || !strings.Contains(err.Error(), "sealed format") {
		t.Errorf("Revert(the conversion) = %v, want ErrInvalid saying why", err)
	}
	write(t, v, "/memories/topcanary.md", "changed\n")
	if _, err := v.Rollback(ctx, vault.Meta{}, "beforecanary"); err != nil {
		t.Fatal(err)
	}
	if got, err := read(t, v, "/memories/topcanary.md"); err != nil || got != want["/memories/topcanary.md"] {
		t.Errorf("read after a rollback to before the conversion = %q, %v", got, err)
	}
	if tree := gitOut(t, v, "ls-tree", "-r", "--name-only", "main"); strings.Contains(tree, "canary") {
		t.Errorf("a rollback to before the conversion shows names to the host:\n%s", tree)
	}

	// Writes go on sealed.
	write(t, v, "/memories/clientcanary/new.md", "new\n")
	if tree := gitOut(t, v, "ls-tree", "-r", "--name-only", "main"); strings.Contains(tree, "canary") {
		t.Errorf("a write after Seal shows its name to the host:\n%s", tree)
	}

	// A second Seal changes nothing.
	head := vaulttest.Log(t, v, vault.LogOptions{Limit: 1})[0].Commit
	if _, err := v.Seal(ctx, vault.Meta{}, vault.SealOptions{}); !errors.Is(err, vault.ErrSealed) {
		t.Errorf("Seal of a sealed vault: err = %v, want ErrSealed", err)
	}
	if now := vaulttest.Log(t, v, vault.LogOptions{Limit: 1})[0].Commit; now != head {
		t.Errorf("a refused Seal moved main from %s to %s", head, now)
	}
}

// A conversion stopped before its commit leaves the vault as it was, plain;
// run again, it takes up what it had encrypted.
func TestSealInterruptedResumes(t *testing.T) {
	v, _ := newPlainAt(t, t.TempDir())
	for _, p := range []string{"/memories/a", "/memories/b/c", "/memories/d", "/memories/e"} {
		write(t, v, p, "content of "+p)
	}
	head := vaulttest.Log(t, v, vault.LogOptions{Limit: 1})[0].Commit
	vaulttest.FailReencryptionAfter(2)
	_, err := v.Seal(ctx, vault.Meta{}, vault.SealOptions{})
	vaulttest.FailReencryptionAfter(0)
	if !errors.Is(err, keyhook.ErrInjected) {
		t.Fatalf("Seal err = %v, want the injected interruption", err)
	}
	if now := vaulttest.Log(t, v, vault.LogOptions{Limit: 1})[0].Commit; now != head {
		t.Errorf("an interrupted Seal moved main from %s to %s", head, now)
	}
	if tree := gitOut(t, v, "ls-tree", "-r", "--name-only", "main"); strings.Contains(tree, ".memvault/key") || !strings.Contains(tree, "memories/b/c") {
		t.Errorf("after an interrupted Seal git ls-tree -r main =\n%s\nwant the plain vault as it was", tree)
	}
	var calls, last int
	res, err := v.Seal(ctx, vault.Meta{}, vault.SealOptions{Progress: func(done, total int) { calls++; last = done }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 4 || res.Resumed != 2 || calls == 0 || last != 4 {
		t.Errorf("resumed Seal = %+v, progress %d calls ending at %d; want 4 files, 2 resumed, progress to 4", res, calls, last)
	}
	for _, p := range []string{"/memories/a", "/memories/b/c", "/memories/d", "/memories/e"} {
		if got, err := read(t, v, p); err != nil || got != "content of "+p {
			t.Errorf("read %s after the resumed Seal = %q, %v", p, got, err)
		}
	}
}

// A name too long to seal is refused before anything is encrypted: it must
// be renamed first.
func TestSealRefusesUnsealableName(t *testing.T) {
	v, _ := newPlainAt(t, t.TempDir())
	long := "/memories/" + strings.Repeat("n", 200) + ".md"
	write(t, v, long, "x")
	head := vaulttest.Log(t, v, vault.LogOptions{Limit: 1})[0].Commit
	_, err := v.Seal(ctx, vault.Meta{}, vault.SealOptions{})
	var pe *vault.PathError
	if !errors.As(err, &pe) || pe.Path != long {
		t.Errorf("Seal with a 203-byte name: err = %v, want a PathError naming it", err)
	}
	if now := vaulttest.Log(t, v, vault.LogOptions{Limit: 1})[0].Commit; now != head {
		t.Errorf("a refused Seal moved main")
	}
}

// A file the identity cannot open stops the conversion before anything
// changes: its plaintext cannot be padded, and no file is left behind.
func TestSealRefusesFileItCannotOpen(t *testing.T) {
	v, _ := newPlainAt(t, t.TempDir())
	write(t, v, "/memories/mine.md", "mine")
	if err := vault.PutForeignFileForTest(v, "memories/foreign.md"); err != nil {
		t.Fatal(err)
	}
	head := vaulttest.Log(t, v, vault.LogOptions{Limit: 1})[0].Commit
	_, err := v.Seal(ctx, vault.Meta{}, vault.SealOptions{})
	if !errors.Is(err, vault.ErrDecrypt) || !strings.Contains(err.Error(), "/memories/foreign.md") {
		t.Errorf("Seal with a file the identity cannot open: err = %v, want ErrDecrypt naming it", err)
	}
	if now := vaulttest.Log(t, v, vault.LogOptions{Limit: 1})[0].Commit; now != head {
		t.Errorf("a refused Seal moved main from %s to %s", head, now)
	}
	if tree := gitOut(t, v, "ls-tree", "-r", "--name-only", "main"); strings.Contains(tree, ".memvault/key") {
		t.Errorf("a refused Seal left a key in the tree:\n%s", tree)
	}
}

// A vault with no memory yet converts too: its next file is sealed.
func TestSealEmptyVault(t *testing.T) {
	v, _ := newPlainAt(t, t.TempDir())
	res, err := v.Seal(ctx, vault.Meta{}, vault.SealOptions{})
	if err != nil || res.Files != 0 || res.Commit == "" {
		t.Fatalf("Seal of an empty vault = %+v, %v", res, err)
	}
	write(t, v, "/memories/firstcanary.md", "first\n")
	if got, err := read(t, v, "/memories/firstcanary.md"); err != nil || got != "first\n" {
		t.Errorf("read after Seal of an empty vault = %q, %v", got, err)
	}
	if tree := gitOut(t, v, "ls-tree", "-r", "--name-only", "main"); strings.Contains(tree, "canary") || !strings.Contains(tree, ".memvault/key") {
		t.Errorf("git ls-tree -r main =\n%s\nwant a key and no name", tree)
	}
}
