package vault_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

func update(t *testing.T, v *vault.Vault, command string, fn func(tx *vault.Tx) error) string {
	t.Helper()
	if err := v.Update(ctx, vault.Meta{Command: command}, fn); err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	recs, err := v.Log(ctx, vault.LogOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	return recs[0].Commit
}

func put(t *testing.T, v *vault.Vault, p, content string) string {
	t.Helper()
	return update(t, v, "create", func(tx *vault.Tx) error { return tx.WriteFile(ctx, p, []byte(content)) })
}

func mv(t *testing.T, v *vault.Vault, from, to string) string {
	t.Helper()
	return update(t, v, "rename", func(tx *vault.Tx) error { return tx.Rename(from, to) })
}

func rm(t *testing.T, v *vault.Vault, p string) string {
	t.Helper()
	return update(t, v, "delete", func(tx *vault.Tx) error { return tx.Remove(p) })
}

func commits(recs []vault.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Commit)
	}
	return out
}

func TestResolve(t *testing.T) {
	v := vaulttest.New(t)
	c1 := put(t, v, "/memories/a", "1")
	c2 := put(t, v, "/memories/b", "2")
	c3 := put(t, v, "/memories/c", "3")
	if _, err := v.Checkpoint(ctx, "two", c2, "after b"); err != nil {
		t.Fatal(err)
	}
	for rev, want := range map[string]string{
		c3: c3, strings.ToUpper(c2): c2, c1[:4]: c1, c1[:11]: c1, "main": c3, "HEAD": c3, "main~2": c1,
		"HEAD~1": c2, "~1": c2, "~": c2, "main^": c2, "main~1^": c1, "two": c2, "two~1": c1, "two^0": "",
	} {
		got, err := v.Resolve(ctx, rev)
		switch {
		case want == "" && !errors.Is(err, vault.ErrUnknownRevision):
			t.Errorf("Resolve(%q) = %q, %v; want ErrUnknownRevision", rev, got, err)
		case want != "" && (err != nil || got != want):
			t.Errorf("Resolve(%q) = %q, %v; want %q", rev, got, err, want)
		}
	}
	for _, rev := range []string{"", "nope", c1[:3], "main~4", "main~x", "ffffffffff", strings.Repeat("f", 40), "two~9"} {
		_, err := v.Resolve(ctx, rev)
		if !errors.Is(err, vault.ErrUnknownRevision) || !strings.Contains(err.Error(), fmt.Sprintf("unknown revision %q: ", rev)) {
			t.Errorf("Resolve(%q): err = %v, want ErrUnknownRevision naming the revision", rev, err)
		}
	}
	snap, err := v.SnapshotAt(ctx, "main~1")
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := snap.Stat("/memories/c"); k != vault.KindNone || snap.Commit() != c2 {
		t.Errorf("SnapshotAt(main~1) = %s with /memories/c %v; want %s without it", snap.Commit(), k, c2)
	}
	if b, err := snap.ReadFile(ctx, "/memories/b"); err != nil || string(b) != "2" {
		t.Errorf("SnapshotAt(main~1).ReadFile(/memories/b) = %q, %v", b, err)
	}
}

func TestLogFiltersAndPages(t *testing.T) {
	now := time.Now().Truncate(time.Second) // after the init commit's time
	dir := t.TempDir()
	_, opts := vaulttest.NewAt(t, dir)
	opts.Now = func() time.Time { now = now.Add(time.Hour); return now }
	v, err := vault.Open(ctx, dir+"/vault.git", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	var all []string
	for i := range 6 {
		all = append([]string{put(t, v, "/memories/f"+string(rune('0'+i)), "x")}, all...)
	}
	del := rm(t, v, "/memories/f0")
	all = append([]string{del}, all...)
	recs, _ := v.Log(ctx, vault.LogOptions{Skip: 2, Limit: 3})
	if got := commits(recs); strings.Join(got, " ") != strings.Join(all[2:5], " ") {
		t.Errorf("Log(Skip 2, Limit 3) = %v, want %v", got, all[2:5])
	}
	recs, _ = v.Log(ctx, vault.LogOptions{Command: "delete"})
	if len(recs) != 1 || recs[0].Commit != del {
		t.Errorf("Log(Command delete) = %v, want [%s]", commits(recs), del)
	}
	full, _ := v.Log(ctx, vault.LogOptions{})
	recs, _ = v.Log(ctx, vault.LogOptions{Since: full[2].Time})
	if got := commits(recs); strings.Join(got, " ") != strings.Join(all[:3], " ") {
		t.Errorf("Log(Since) = %v, want the last three %v", got, all[:3])
	}
	recs, _ = v.Log(ctx, vault.LogOptions{Command: "create", Skip: 1, Limit: 1})
	if len(recs) != 1 || recs[0].Commit != all[2] {
		t.Errorf("Log(Command create, Skip 1, Limit 1) = %v, want [%s]", commits(recs), all[2])
	}
}

func TestLogFollowsRenames(t *testing.T) {
	v := vaulttest.New(t)
	a1 := put(t, v, "/memories/a.md", "1")
	put(t, v, "/memories/other.md", "o")
	r1 := mv(t, v, "/memories/a.md", "/memories/notes/a.md")
	a2 := put(t, v, "/memories/notes/a.md", "2")
	r2 := mv(t, v, "/memories/notes", "/memories/archive")
	a3 := put(t, v, "/memories/archive/a.md", "3")
	// A new file at the old place has its own history.
	b := put(t, v, "/memories/a.md", "new")
	cases := map[string][]string{
		"/memories/archive/a.md": {a3, r2, a2, r1, a1},
		"/memories/archive":      {a3, r2, a2, r1},
		"/memories/a.md":         {b, r1, a1},
	}
	for p, want := range cases {
		recs, err := v.Log(ctx, vault.LogOptions{Path: p})
		if got := commits(recs); err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("Log(%s) = %v, %v; want %v", p, got, err, want)
		}
	}
	recs, _ := v.Log(ctx, vault.LogOptions{Path: "/memories/archive/a.md", Skip: 1, Limit: 2})
	if got := commits(recs); strings.Join(got, " ") != r2+" "+a2 {
		t.Errorf("Log(archive/a.md, Skip 1, Limit 2) = %v, want [%s %s]", got, r2, a2)
	}
}

func TestShowAndDiff(t *testing.T) {
	v := vaulttest.New(t)
	c1 := put(t, v, "/memories/a.md", "one\ntwo\nthree\n")
	put(t, v, "/memories/gone.md", "bye\n")
	c3 := update(t, v, "str_replace", func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, "/memories/a.md", []byte("one\nTWO\nthree\n"))
	})
	r := mv(t, v, "/memories/a.md", "/memories/d/a.md")
	rm(t, v, "/memories/gone.md")
	ch, err := v.Show(ctx, c3)
	if err != nil {
		t.Fatal(err)
	}
	want := "--- /memories/a.md\n+++ /memories/a.md\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
	if ch.Command != "str_replace" || len(ch.Files) != 1 || ch.Files[0].Status != vault.Modified || ch.Files[0].Diff != want {
		t.Errorf("Show(%s) = %+v, want one modified file with diff\n%s", c3, ch, want)
	}
	ch, _ = v.Show(ctx, r)
	if len(ch.Files) != 1 || ch.Files[0].Status != vault.Renamed || ch.Files[0].Path != "/memories/a.md" ||
		ch.Files[0].NewPath != "/memories/d/a.md" || ch.Files[0].Diff != "" {
		t.Errorf("Show(rename) = %+v", ch.Files)
	}
	ch, _ = v.Show(ctx, "main")
	if len(ch.Files) != 1 || ch.Files[0].Status != vault.Deleted || !strings.Contains(ch.Files[0].Diff, "+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n") {
		t.Errorf("Show(delete) = %+v", ch.Files)
	}
	ch, _ = v.Show(ctx, c1)
	if len(ch.Files) != 1 || ch.Files[0].Status != vault.Added || !strings.HasPrefix(ch.Files[0].Diff, "--- /dev/null\n+++ /memories/a.md\n") {
		t.Errorf("Show(create) = %+v", ch.Files)
	}
	// Moved and edited: no longer the same ciphertext, but most of the text
	// stayed, so one rename with the edit's diff, as git pairs it.
	fcs, err := v.Diff(ctx, c1, "main", "")
	if err != nil || len(fcs) != 1 || fcs[0].Status != vault.Renamed || fcs[0].Path != "/memories/a.md" ||
		fcs[0].NewPath != "/memories/d/a.md" || fcs[0].Similarity < 50 || !strings.Contains(fcs[0].Diff, "-two\n+TWO\n") {
		t.Errorf("Diff(c1, main) = %+v, %v; want a.md renamed to d/a.md with its edit", fcs, err)
	}
	fcs, _ = v.Diff(ctx, "main", c1, "/memories/a.md")
	if len(fcs) != 1 || fcs[0].Status != vault.Added || !strings.Contains(fcs[0].Diff, "+one\n+two\n") {
		t.Errorf("Diff(main, c1, a.md) = %+v", fcs)
	}
	if _, err := v.Diff(ctx, "nope", "main", ""); !errors.Is(err, vault.ErrUnknownRevision) {
		t.Errorf("Diff(nope): err = %v, want ErrUnknownRevision", err)
	}
}

func TestCheckpoints(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	_, opts := vaulttest.NewAt(t, dir)
	opts.Now = func() time.Time { now = now.Add(time.Minute); return now }
	v, _ := vault.Open(ctx, dir+"/vault.git", opts)
	defer v.Close()
	c1 := put(t, v, "/memories/a", "1")
	put(t, v, "/memories/a", "2")
	if _, err := v.Checkpoint(ctx, "zeta", c1, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Checkpoint(ctx, "alpha", "", "line one\nline two\n"); err != nil {
		t.Fatal(err)
	}
	cps, err := v.Checkpoints(ctx)
	if err != nil || len(cps) != 2 || cps[0].Name != "zeta" || cps[0].Commit != c1 || cps[0].Message != "checkpoint zeta" ||
		cps[1].Message != "line one\nline two" || !cps[1].Time.After(cps[0].Time) {
		t.Errorf("Checkpoints = %+v, %v", cps, err)
	}
	if _, err := v.Checkpoint(ctx, "zeta", "", ""); !errors.Is(err, vault.ErrExist) {
		t.Errorf("Checkpoint of an existing name: err = %v, want ErrExist", err)
	}
	for _, bad := range []string{"", "a b", "x..y", "main", "HEAD", "-f", "a~1", c1} {
		if _, err := v.Checkpoint(ctx, bad, "", ""); !errors.Is(err, vault.ErrInvalid) {
			t.Errorf("Checkpoint(%q): err = %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := v.Checkpoint(ctx, "later", "nope", ""); !errors.Is(err, vault.ErrUnknownRevision) {
		t.Errorf("Checkpoint at an unknown revision: err = %v", err)
	}
}

// TestDecrypt: a blob of the plain format opens with the identity alone
// (TestSealedTextconv does a sealed one, with its key file).
func TestDecrypt(t *testing.T) {
	dir := t.TempDir()
	v, opts := vaulttest.NewPlainAt(t, dir)
	c := put(t, v, "/memories/a", "secret text")
	ct := blobBytes(t, v, c, "/memories/a")
	if got, err := vault.Decrypt(opts, ct); err != nil || string(got) != "secret text" {
		t.Errorf("Decrypt = %q, %v", got, err)
	}
	// Data that is not age is no identity's fault: ErrBadEntry, never ErrDecrypt.
	for _, bad := range []string{"plain", "age-encryption.org/v1\nplain\n"} {
		if _, err := vault.Decrypt(opts, []byte(bad)); !errors.Is(err, vault.ErrBadEntry) || errors.Is(err, vault.ErrDecrypt) {
			t.Errorf("Decrypt(%q): err = %v, want ErrBadEntry", bad, err)
		}
	}
	if _, err := vault.Decrypt(vault.Options{IdentityFile: dir + "/missing"}, ct); !errors.Is(err, vault.ErrNoIdentity) {
		t.Errorf("Decrypt without the identity: err = %v, want ErrNoIdentity", err)
	}
}

func mustLog(t *testing.T, v *vault.Vault) []vault.Record {
	t.Helper()
	recs, err := v.Log(ctx, vault.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func mustKind(t *testing.T, s *vault.Snapshot, p string) vault.Kind {
	t.Helper()
	k, err := s.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func blobOf(t *testing.T, v *vault.Vault, rev, p string) string {
	t.Helper()
	h, _, err := vault.BlobForTest(v, rev, p)
	if err != nil {
		t.Fatalf("blob of %s at %s: %v", p, rev, err)
	}
	return h
}

func blobBytes(t *testing.T, v *vault.Vault, rev, p string) []byte {
	t.Helper()
	_, ct, err := vault.BlobForTest(v, rev, p)
	if err != nil {
		t.Fatalf("blob of %s at %s: %v", p, rev, err)
	}
	return ct
}

func TestResolveAtTime(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	now := start
	opts := vault.Options{IdentityFile: filepath.Join(dir, "identity"), Now: func() time.Time { return now }}
	v, _, err := vault.Init(ctx, filepath.Join(dir, "v.git"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	var cs []string
	for i := range 4 { // commits on Jan 2, 3, 4, 5 at midnight UTC
		now = start.Add(time.Duration(i) * 24 * time.Hour)
		cs = append(cs, put(t, v, fmt.Sprintf("/memories/f%d", i), "x"))
	}
	now = start.Add(4*24*time.Hour + time.Hour) // Jan 6, 01:00
	for rev, want := range map[string]string{
		"main@{2026-01-04}": cs[2], "@{2026-01-04T12:00:00Z}": cs[2], "main@{2026-01-03T23:59:59Z}": cs[1], "main@{2026-01-02T23:59:59Z}": cs[0],
		"@{1h}": cs[3], "@{2d}": cs[2], "HEAD@{2d ago}": cs[2], "@{25h}": cs[3], "@{49h}": cs[2],
		"main@{2026-01-04}~1": cs[1], cs[1] + "@{1w}": "", cs[3][:8] + "@{2026-01-02}": "", // only main has a record of its moves
		"main@{2026-01-01}": "", "@{99999999d}": "", "main@{yesterday}": "", "main@{2d": "", "main@{}": "",
	} {
		got, err := v.Resolve(ctx, rev)
		switch {
		case want == "" && !errors.Is(err, vault.ErrUnknownRevision):
			t.Errorf("Resolve(%q) = %q, %v; want ErrUnknownRevision", rev, got, err)
		case want != "" && (err != nil || got != want):
			t.Errorf("Resolve(%q) = %q, %v; want %q", rev, got, err, want)
		}
	}
}
