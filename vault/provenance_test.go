package vault_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// blameOf returns each line's commit and origin as "commit/origin".
func blameOf(t *testing.T, v *vault.Vault, p, rev string) (*vault.Blame, []string) {
	t.Helper()
	b, err := v.Blame(ctx, p, rev)
	if err != nil {
		t.Fatalf("Blame(%s, %q): %v", p, rev, err)
	}
	var out []string
	for _, l := range b.Lines {
		out = append(out, l.Commit+"/"+l.Origin)
	}
	return b, out
}

func TestBlameUndoNamesOrigin(t *testing.T) {
	v := vaulttest.New(t)
	c1 := put(t, v, "/memories/a.md", "one\ntwo\n")
	c2 := put(t, v, "/memories/a.md", "one\ntwo\nthree\n")
	c3 := mv(t, v, "/memories/a.md", "/memories/b.md")
	c4 := put(t, v, "/memories/b.md", "one\nthree\n") // "two" goes
	res, err := v.Restore(ctx, vault.Meta{Command: "x", ToolUseID: "toolu_r"}, "/memories/b.md", c3)
	if err != nil {
		t.Fatal(err)
	}
	b, got := blameOf(t, v, "/memories/b.md", "")
	want := []string{c1 + "/", res.Commit + "/" + c1, c2 + "/"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Blame after restore = %v, want %v", got, want)
	}
	if l := b.Lines[1]; l.Text != "two" || l.Path != "/memories/b.md" || l.OriginPath != "/memories/a.md" {
		t.Errorf("restored line = %+v, want text two, path b.md, origin path a.md", l)
	}
	if r := b.Commits[res.Commit]; r.Command != "restore" || r.ToolUseID != "toolu_r" || b.Commits[c1].Command != "create" {
		t.Errorf("Commits = %+v, want the restore with its tool-use id and the create", b.Commits)
	}
	_ = c4

	// Deleted, then brought back by a rollback: the gap is walked through.
	rm(t, v, "/memories/b.md")
	rb, err := v.Rollback(ctx, vault.Meta{}, c4)
	if err != nil {
		t.Fatal(err)
	}
	_, got = blameOf(t, v, "/memories/b.md", "")
	want = []string{rb.Commit + "/" + c1, rb.Commit + "/" + c2}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Blame after rollback = %v, want %v", got, want)
	}
	// At an earlier revision, and by time.
	_, got = blameOf(t, v, "/memories/a.md", c2)
	if want := []string{c1 + "/", c1 + "/", c2 + "/"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Blame at %s = %v, want %v", c2, got, want)
	}
	for _, tc := range []struct {
		p, rev string
		want   error
	}{
		{"/memories/a.md", "", vault.ErrNotExist},
		{"/memories", "", vault.ErrIsDir},
		{"/memories/b.md", "nope", vault.ErrUnknownRevision},
		{"/memories/../x", "", nil},
	} {
		_, err := v.Blame(ctx, tc.p, tc.rev)
		var pe *vault.PathError
		if tc.want == nil && !errors.As(err, &pe) || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("Blame(%q, %q) err = %v, want %v", tc.p, tc.rev, err, tc.want)
		}
	}
}

func TestBlameSyncMergeNamesOrigin(t *testing.T) {
	a, b := pair(t, fileRemote(t))
	write(t, a, "/memories/m.md", "base\n")
	mustSync(t, a)
	mustSync(t, b)
	write(t, a, "/memories/m.md", "from a\nbase\n")
	write(t, b, "/memories/m.md", "base\nfrom b\n")
	fromB := head(t, b)
	mustSync(t, b)
	mustSync(t, a) // a merges b's line in
	bl, err := a.Blame(ctx, "/memories/m.md", "")
	if err != nil {
		t.Fatal(err)
	}
	last := bl.Lines[len(bl.Lines)-1]
	if last.Text != "from b" || bl.Commits[last.Commit].Command != "merge" || last.Origin != fromB {
		t.Fatalf("merged line = %+v (%s), want the merge with origin %s", last, bl.Commits[last.Commit].Command, fromB)
	}
	if first := bl.Lines[0]; first.Origin != "" || bl.Commits[first.Commit].Command == "merge" {
		t.Errorf("a's own line = %+v, want a's commit and no origin", first)
	}
}

func TestGrepOptions(t *testing.T) {
	v := vaulttest.New(t)
	put(t, v, "/memories/a.md", "1 x\n2\n3\n4 x\n5\n6\n7\n8\n9 x")
	c := put(t, v, "/memories/d/b.md", "no\nX here\n")
	put(t, v, "/memories/d/b.md", "gone\n")
	res, err := v.Grep(ctx, regexp.MustCompile(`x`), vault.GrepOptions{Context: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Files {
		for _, l := range f.Lines {
			m := "-"
			if l.Match {
				m = ":"
			}
			got = append(got, f.Path+m+l.Text)
		}
	}
	want := "/memories/a.md:1 x /memories/a.md-2 /memories/a.md-3 /memories/a.md:4 x /memories/a.md-5 /memories/a.md-8 /memories/a.md:9 x"
	if strings.Join(got, " ") != want {
		t.Errorf("Grep(x, -C1) = %q, want %q", strings.Join(got, " "), want)
	}
	res, err = v.Grep(ctx, regexp.MustCompile(`(?i)x here`), vault.GrepOptions{Rev: c, Paths: []string{"/memories/d"}})
	if err != nil || len(res.Files) != 1 || res.Files[0].Lines[0].Number != 2 || res.Commit != c {
		t.Errorf("Grep at %s under /memories/d = %+v, %v; want b.md line 2", c, res, err)
	}
	res, err = v.Grep(ctx, regexp.MustCompile(`x`), vault.GrepOptions{MaxLines: 2})
	if err != nil || !res.Truncated || len(res.Files) != 1 || len(res.Files[0].Lines) != 2 {
		t.Errorf("Grep(MaxLines 2) = %+v, %v; want two lines, truncated", res, err)
	}
	if _, err := v.Grep(ctx, regexp.MustCompile(`x`), vault.GrepOptions{Paths: []string{"/memories/none"}}); !errors.Is(err, vault.ErrNotExist) {
		t.Errorf("Grep(/memories/none) err = %v, want ErrNotExist", err)
	}
}

func TestPickaxeWithFilters(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	clock := func() time.Time { return now }
	v, _, err := vault.Init(ctx, dir+"/v.git", vault.Options{IdentityFile: dir + "/id", Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	hour := func() { now = now.Add(time.Hour) } // each step an hour later
	hour()
	c1 := put(t, v, "/memories/a.md", "likes tea\n")
	hour()
	c2 := put(t, v, "/memories/b.md", "likes tea too\n")
	hour()
	c3 := put(t, v, "/memories/a.md", "likes coffee\n")
	hour()
	mv(t, v, "/memories/b.md", "/memories/c.md") // moves the text, adds none
	times := map[string]time.Time{}
	for _, r := range vaulttest.Log(t, v, vault.LogOptions{}) {
		times[r.Commit] = r.Time
	}
	for _, tc := range []struct {
		opts vault.LogOptions
		want []string
	}{
		{vault.LogOptions{Pickaxe: "tea", Path: "/memories/a.md"}, []string{c3, c1}},
		{vault.LogOptions{PickaxeRegexp: regexp.MustCompile(`^likes c`)}, []string{c3}},
		{vault.LogOptions{Pickaxe: "tea", Since: times[c3]}, []string{c3}},
		{vault.LogOptions{Pickaxe: "tea", Command: "create", Limit: 1, Skip: 1}, []string{c2}},
	} {
		recs, err := v.Log(ctx, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := commits(recs); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("Log(%+v) = %v, want %v", tc.opts, got, tc.want)
		}
	}
	// REV@{DATE} reaches blame and grep.
	at := "main@{" + times[c2].UTC().Format(time.RFC3339) + "}"
	_, got := blameOf(t, v, "/memories/a.md", at)
	if len(got) != 1 || got[0] != c1+"/" {
		t.Errorf("Blame(a.md @{12:30}) = %v, want %s", got, c1)
	}
	res, err := v.Grep(ctx, regexp.MustCompile(`tea`), vault.GrepOptions{Rev: at})
	if err != nil || len(res.Files) != 2 {
		t.Errorf("Grep(tea @{12:30}) = %+v, %v; want a.md and b.md", res, err)
	}
}
