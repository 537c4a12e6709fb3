package vault_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// forFormats runs f on a new vault in each format.
func forFormats(t *testing.T, f func(t *testing.T, v *vault.Vault)) {
	for _, sealed := range []bool{false, true} {
		name := "plain"
		if sealed {
			name = "sealed"
		}
		t.Run(name, func(t *testing.T) { f(t, vaulttest.NewFormat(t, sealed)) })
	}
}

// agentWrite writes p through the store s as an agent's create would.
func agentWrite(t *testing.T, s *vault.AgentStore, p, text string) error {
	t.Helper()
	return s.Update(context.Background(), vault.Meta{Command: "create", Agent: "test-agent", Session: "s1", ToolUseID: "toolu_" + filepath.Base(p)},
		func(tx *vault.Tx) error { return tx.WriteFile(context.Background(), p, []byte(text)) })
}

// agentDelete deletes p through the store s.
func agentDelete(t *testing.T, s *vault.AgentStore, p string) error {
	t.Helper()
	return s.Update(context.Background(), vault.Meta{Command: "delete", Agent: "test-agent", Session: "s1"},
		func(tx *vault.Tx) error { return tx.Remove(p) })
}

// read returns what snapshot source s shows at p ("" for nothing).
func seen(t *testing.T, s interface {
	Snapshot(context.Context) (*vault.Snapshot, error)
}, p string) string {
	t.Helper()
	snap, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := snap.ReadFile(context.Background(), p)
	if errors.Is(err, vault.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", p, err)
	}
	return string(b)
}

func pending(t *testing.T, v *vault.Vault, opts vault.ReviewOptions) []vault.PendingChange {
	t.Helper()
	ps, err := v.Review(context.Background(), opts)
	if err != nil {
		t.Fatalf("Review: %v", err)
	}
	return ps
}

// TestReviewApprove: a write in review mode waits on the line: the agent
// reads it back, main does not hold it, the list shows its diff, session and
// tool-use id; approving puts it on main as a signed commit that names it.
func TestReviewApprove(t *testing.T) {
	forFormats(t, func(t *testing.T, v *vault.Vault) {
		ctx := context.Background()
		vaulttest.Write(t, v, "/memories/keep.md", []byte("kept\n"))
		head, _ := v.Head()
		s := v.Agent(vault.AgentOptions{Review: true})
		if err := agentWrite(t, s, "/memories/new.md", "remember this\n"); err != nil {
			t.Fatal(err)
		}
		if got := seen(t, s, "/memories/new.md"); got != "remember this\n" {
			t.Errorf("the agent reads %q, want its own write", got)
		}
		if got := seen(t, v, "/memories/new.md"); got != "" {
			t.Errorf("main holds %q before approval", got)
		}
		if h, _ := v.Head(); h != head {
			t.Errorf("main moved from %s to %s", head, h)
		}
		ps := pending(t, v, vault.ReviewOptions{})
		if len(ps) != 1 {
			t.Fatalf("Review = %d changes, want 1", len(ps))
		}
		p := ps[0]
		if p.Session != "s1" || p.ToolUseID != "toolu_new.md" || p.Command != "create" || p.Path != "/memories/new.md" {
			t.Errorf("pending record = %+v", p.Record)
		}
		if len(p.Files) != 1 || !strings.Contains(p.Files[0].Diff, "+remember this") {
			t.Errorf("pending diff = %+v", p.Files)
		}
		res, err := v.Approve(ctx, []string{p.Commit[:8]})
		if err != nil {
			t.Fatalf("Approve: %v", err)
		}
		if len(res.Settled) != 1 || len(res.Commits) != 1 {
			t.Fatalf("Approve = %+v", res)
		}
		if got := seen(t, v, "/memories/new.md"); got != "remember this\n" {
			t.Errorf("main holds %q after approval", got)
		}
		recs := vaulttest.Log(t, v, vault.LogOptions{Limit: 1})
		if r := recs[0]; r.Command != "create" || r.Session != "s1" || r.ToolUseID != "toolu_new.md" || r.Signer == "" {
			t.Errorf("approved commit = %+v", r)
		}
		if ps := pending(t, v, vault.ReviewOptions{}); len(ps) != 0 {
			t.Errorf("still pending after approval: %d", len(ps))
		}
		if got := seen(t, s, "/memories/new.md"); got != "remember this\n" {
			t.Errorf("the agent reads %q after approval", got)
		}
	})
}

// TestReviewReject: a rejected change leaves the agent's view and stays in
// the line's history, listed as rejected; it can be approved later.
func TestReviewReject(t *testing.T) {
	forFormats(t, func(t *testing.T, v *vault.Vault) {
		ctx := context.Background()
		s := v.Agent(vault.AgentOptions{Review: true})
		for _, n := range []string{"a", "b", "c"} {
			if err := agentWrite(t, s, "/memories/"+n+".md", n+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		ps := pending(t, v, vault.ReviewOptions{})
		if len(ps) != 3 {
			t.Fatalf("pending = %d, want 3", len(ps))
		}
		if _, err := v.Reject(ctx, []string{ps[1].Commit}); err != nil {
			t.Fatalf("Reject: %v", err)
		}
		if got := seen(t, s, "/memories/b.md"); got != "" {
			t.Errorf("the agent still reads the rejected b.md: %q", got)
		}
		if got := seen(t, s, "/memories/c.md"); got != "c\n" {
			t.Errorf("the agent reads c.md as %q", got)
		}
		if ps := pending(t, v, vault.ReviewOptions{}); len(ps) != 2 {
			t.Errorf("pending after reject = %d, want 2", len(ps))
		}
		rej := pending(t, v, vault.ReviewOptions{Rejected: true})
		if len(rej) != 1 || rej[0].Commit != ps[1].Commit || !rej[0].Rejected {
			t.Fatalf("rejected = %+v", rej)
		}
		if _, err := v.Approve(ctx, []string{vault.ReviewAll}); err != nil {
			t.Fatal(err)
		}
		if got := seen(t, v, "/memories/b.md"); got != "" {
			t.Errorf("approving all pending took the rejected b.md to main")
		}
		if _, err := v.Approve(ctx, []string{ps[1].Commit[:10]}); err != nil {
			t.Fatalf("Approve of a rejected change: %v", err)
		}
		for _, n := range []string{"a", "b", "c"} {
			if got := seen(t, v, "/memories/"+n+".md"); got != n+"\n" {
				t.Errorf("main %s.md = %q", n, got)
			}
		}
		if rej := pending(t, v, vault.ReviewOptions{Rejected: true}); len(rej) != 0 {
			t.Errorf("still listed as rejected after its approval: %d", len(rej))
		}
	})
}

// TestReviewFollowsMain: when main moves under pending changes, the agent's
// view shows main's change and its own; the same lines changed on both sides
// show both between conflict markers.
func TestReviewFollowsMain(t *testing.T) {
	forFormats(t, func(t *testing.T, v *vault.Vault) {
		vaulttest.Write(t, v, "/memories/notes.md", []byte("one\ntwo\nthree\nfour\nfive\n"))
		s := v.Agent(vault.AgentOptions{Review: true})
		edit := func(old, new string) {
			err := s.Update(context.Background(), vault.Meta{Command: "str_replace"}, func(tx *vault.Tx) error {
				b, err := tx.ReadFile(context.Background(), "/memories/notes.md")
				if err != nil {
					return err
				}
				return tx.WriteFile(context.Background(), "/memories/notes.md", []byte(strings.Replace(string(b), old, new, 1)))
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		edit("one", "ONE")
		vaulttest.Write(t, v, "/memories/notes.md", []byte("one\ntwo\nthree\nfour\nFIVE\n"))
		vaulttest.Write(t, v, "/memories/other.md", []byte("from main\n"))
		if got := seen(t, s, "/memories/notes.md"); got != "ONE\ntwo\nthree\nfour\nFIVE\n" {
			t.Errorf("the view after main moved = %q", got)
		}
		if got := seen(t, s, "/memories/other.md"); got != "from main\n" {
			t.Errorf("the view lacks main's new file: %q", got)
		}
		vaulttest.Write(t, v, "/memories/notes.md", []byte("uno\ntwo\nthree\nfour\nFIVE\n"))
		got := seen(t, s, "/memories/notes.md")
		if !strings.Contains(got, "<<<<<<< main\nuno\n=======\nONE\n>>>>>>> pending changes\n") {
			t.Errorf("the view of a conflict = %q", got)
		}
		if _, err := v.Approve(context.Background(), []string{vault.ReviewAll}); !errors.Is(err, vault.ErrConflict) {
			t.Errorf("Approve of a change main changed since = %v, want ErrConflict", err)
		}
		if _, err := v.Reject(context.Background(), []string{vault.ReviewAll}); err != nil {
			t.Fatal(err)
		}
		if got := seen(t, s, "/memories/notes.md"); got != "uno\ntwo\nthree\nfour\nFIVE\n" {
			t.Errorf("the view after rejecting everything = %q, want main's", got)
		}
	})
}

// TestReviewSurvivesReopen: the line is the vault's, not the process's.
func TestReviewSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, opts := vaulttest.NewAt(t, dir)
	if err := agentWrite(t, v.Agent(vault.AgentOptions{Review: true}), "/memories/a.md", "a\n"); err != nil {
		t.Fatal(err)
	}
	v.Close()
	v2, err := vault.Open(ctx, v.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	if ps := pending(t, v2, vault.ReviewOptions{}); len(ps) != 1 || ps[0].Path != "/memories/a.md" {
		t.Fatalf("pending after reopening = %+v", ps)
	}
	if got := seen(t, v2.Agent(vault.AgentOptions{Review: true}), "/memories/a.md"); got != "a\n" {
		t.Errorf("the view after reopening = %q", got)
	}
	if out, err := exec.Command(gittest.Git(t), "--git-dir", v2.Dir(), "fsck", "--strict", "--no-dangling").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

// TestMassDeletionHeld: out of review mode, an agent's command that deletes
// more than five files, or a session's run of deletions that passes a quarter
// of the memory, does not reach main: it waits on the line, and the error
// names it.
func TestMassDeletionHeld(t *testing.T) {
	forFormats(t, func(t *testing.T, v *vault.Vault) {
		ctx := context.Background()
		for i := range 20 {
			vaulttest.Write(t, v, fmt.Sprintf("/memories/dir/f%02d.md", i), []byte("x\n"))
		}
		s := v.Agent(vault.AgentOptions{})
		err := agentDelete(t, s, "/memories/dir")
		var held *vault.HeldError
		if !errors.As(err, &held) || !errors.Is(err, vault.ErrHeld) || held.ID == "" || held.Files != 20 || held.Of != 20 {
			t.Fatalf("deleting 20 files = %v (%+v), want a HeldError", err, held)
		}
		if got := seen(t, v, "/memories/dir/f00.md"); got != "x\n" {
			t.Errorf("main lost the folder: %q", got)
		}
		if got := seen(t, s, "/memories/dir/f00.md"); got != "x\n" {
			t.Errorf("out of review mode the agent reads main, which holds the file; got %q", got)
		}
		ps := pending(t, v, vault.ReviewOptions{})
		if len(ps) != 1 || ps[0].Held == "" || ps[0].Deletes != 20 || ps[0].Commit != held.ID {
			t.Fatalf("pending = %+v", ps)
		}
		if _, err := v.Approve(ctx, []string{held.ID}); err != nil {
			t.Fatal(err)
		}
		if got := seen(t, v, "/memories/dir/f00.md"); got != "" {
			t.Errorf("the approved deletion did not reach main")
		}
	})
}

// TestMassDeletionRun: deletions one at a time count as a run: the sixth
// waits; a run that passes a quarter of a small memory waits sooner.
func TestMassDeletionRun(t *testing.T) {
	v := vaulttest.New(t)
	for i := range 30 {
		vaulttest.Write(t, v, fmt.Sprintf("/memories/f%02d.md", i), []byte("x\n"))
	}
	s := v.Agent(vault.AgentOptions{})
	for i := range 5 {
		if err := agentDelete(t, s, fmt.Sprintf("/memories/f%02d.md", i)); err != nil {
			t.Fatalf("delete %d: %v", i, err)
		}
	}
	if err := agentWrite(t, s, "/memories/new.md", "a write in the middle of the run\n"); err != nil {
		t.Fatal(err)
	}
	err := agentDelete(t, s, "/memories/f05.md")
	var held *vault.HeldError
	if !errors.As(err, &held) || held.Files != 6 || held.Limit != "5 files" {
		t.Fatalf("the sixth deletion = %v, want held", err)
	}
	// What was held did not reach main: the run there stays at five, and
	// each further deletion passes it again.
	if err := agentDelete(t, s, "/memories/f06.md"); !errors.As(err, &held) || held.Files != 6 {
		t.Fatalf("the seventh deletion = %v, want held too", err)
	}
	// Another session's run is its own.
	err = s.Update(context.Background(), vault.Meta{Command: "delete", Session: "s2"}, func(tx *vault.Tx) error { return tx.Remove("/memories/f07.md") })
	if err != nil {
		t.Errorf("another session's first deletion = %v", err)
	}

	small := vaulttest.New(t)
	for i := range 8 {
		vaulttest.Write(t, small, fmt.Sprintf("/memories/f%d.md", i), []byte("x\n"))
	}
	s = small.Agent(vault.AgentOptions{})
	for i := range 2 {
		if err := agentDelete(t, s, fmt.Sprintf("/memories/f%d.md", i)); err != nil {
			t.Fatalf("delete %d of 8: %v", i, err)
		}
	}
	if err := agentDelete(t, s, "/memories/f2.md"); !errors.As(err, &held) || held.Limit != "25% of the memory" {
		t.Fatalf("deleting a third of 8 files = %v, want held", err)
	}
}

// TestMassDeletionInReviewMode: in review mode a mass deletion waits as every
// write does, and its change is marked held by nothing but counted.
func TestMassDeletionInReviewMode(t *testing.T) {
	v := vaulttest.New(t)
	for i := range 10 {
		vaulttest.Write(t, v, fmt.Sprintf("/memories/d/f%d.md", i), []byte("x\n"))
	}
	s := v.Agent(vault.AgentOptions{Review: true})
	if err := agentDelete(t, s, "/memories/d"); err != nil {
		t.Fatalf("in review mode the deletion is pending, not an error: %v", err)
	}
	if got := seen(t, s, "/memories/d/f1.md"); got != "" {
		t.Errorf("the agent still reads what it deleted")
	}
	ps := pending(t, v, vault.ReviewOptions{})
	if len(ps) != 1 || ps[0].Deletes != 10 || ps[0].Held != "" {
		t.Errorf("pending = %+v", ps)
	}
}

// TestReviewLineNotPushed: sync pushes main and never the line; a change
// approved on one clone reaches the other by sync.
func TestReviewLineNotPushed(t *testing.T) {
	url := vaulttest.FileRemote(t)
	a, b, _ := vaulttest.Pair(t, url)
	if err := agentWrite(t, a.Agent(vault.AgentOptions{Review: true}), "/memories/p.md", "pending\n"); err != nil {
		t.Fatal(err)
	}
	vaulttest.MustSync(t, a)
	remote := strings.TrimPrefix(url, "file://")
	if _, err := os.Stat(filepath.Join(remote, "refs", "memvault")); err == nil {
		t.Errorf("the remote holds refs/memvault")
	}
	vaulttest.MustSync(t, b)
	if got := seen(t, b, "/memories/p.md"); got != "" {
		t.Errorf("the other clone sees a pending change: %q", got)
	}
	ps := pending(t, a, vault.ReviewOptions{})
	if _, err := a.Approve(context.Background(), []string{ps[0].Commit}); err != nil {
		t.Fatal(err)
	}
	vaulttest.MustSync(t, a)
	vaulttest.MustSync(t, b)
	if got := seen(t, b, "/memories/p.md"); got != "pending\n" {
		t.Errorf("the other clone after the approval and a sync = %q", got)
	}
}

// TestReviewAcrossRotation: a member removed from main while changes wait
// (a new vault key, every name sealed anew) leaves them readable and
// approvable.
func TestReviewAcrossRotation(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, _ := vaulttest.NewSealedAt(t, dir)
	vaulttest.Write(t, v, "/memories/a.md", []byte("a\n"))
	s := v.Agent(vault.AgentOptions{Review: true})
	if err := agentWrite(t, s, "/memories/p.md", "pending\n"); err != nil {
		t.Fatal(err)
	}
	other := vaulttest.New(t)
	rs, err := mustSnapshot(t, other).Recipients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{rs[0].Key}}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{rs[0].Key}}); err != nil {
		t.Fatal(err)
	}
	if got := seen(t, s, "/memories/p.md"); got != "pending\n" {
		t.Errorf("the view after a rotation = %q", got)
	}
	if got := seen(t, s, "/memories/a.md"); got != "a\n" {
		t.Errorf("the view after a rotation lost main's file: %q", got)
	}
	if _, err := v.Approve(ctx, []string{vault.ReviewAll}); err != nil {
		t.Fatal(err)
	}
	if got := seen(t, v, "/memories/p.md"); got != "pending\n" {
		t.Errorf("main after approval across a rotation = %q", got)
	}
	if problems, err := v.Fsck(ctx); err != nil || len(problems) > 0 {
		t.Errorf("Fsck = %v, %v", problems, err)
	}
}

// TestApproveNeedsAWriter: approving is a writer's act: a vault whose own
// signing key is no longer among the writers cannot approve, and main does
// not move.
func TestApproveNeedsAWriter(t *testing.T) {
	ctx := context.Background()
	v := vaulttest.New(t)
	if err := agentWrite(t, v.Agent(vault.AgentOptions{Review: true}), "/memories/p.md", "p\n"); err != nil {
		t.Fatal(err)
	}
	me, err := v.SigningWriter()
	if err != nil {
		t.Fatal(err)
	}
	_, bob := sshKey(t, "bob")
	if _, err := v.ChangeWriters(ctx, vault.Meta{}, []keys.Writer{bob}, []string{me.Fingerprint}); err != nil {
		t.Fatal(err)
	}
	head, _ := v.Head()
	if _, err := v.Approve(ctx, []string{vault.ReviewAll}); !errors.Is(err, vault.ErrNotWriter) {
		t.Errorf("Approve by a key that is no writer = %v, want ErrNotWriter", err)
	}
	if h, _ := v.Head(); h != head {
		t.Errorf("main moved")
	}
}

// TestMassEmptyingHeld: writing files blank over their content counts as
// deleting them.
func TestMassEmptyingHeld(t *testing.T) {
	v := vaulttest.New(t)
	for i := range 10 {
		vaulttest.Write(t, v, fmt.Sprintf("/memories/f%d.md", i), []byte("content\n"))
	}
	err := v.Agent(vault.AgentOptions{}).Update(context.Background(), vault.Meta{Command: "edit"}, func(tx *vault.Tx) error {
		for i := range 6 {
			if err := tx.WriteFile(context.Background(), fmt.Sprintf("/memories/f%d.md", i), []byte("\n")); err != nil {
				return err
			}
		}
		return nil
	})
	var held *vault.HeldError
	if !errors.As(err, &held) || held.Files != 6 {
		t.Fatalf("emptying 6 of 10 files = %v, want held", err)
	}
	if got := seen(t, v, "/memories/f0.md"); got != "content\n" {
		t.Errorf("main's f0.md = %q", got)
	}
	if ps := pending(t, v, vault.ReviewOptions{}); len(ps) != 1 || ps[0].Deletes != 6 {
		t.Errorf("pending = %+v", ps)
	}
}

// TestReviewApproveRename: an approved rename of a folder moves it on main,
// and a file's history follows it through the approved commit.
func TestReviewApproveRename(t *testing.T) {
	forFormats(t, func(t *testing.T, v *vault.Vault) {
		ctx := context.Background()
		vaulttest.Write(t, v, "/memories/old/a.md", []byte("a\n"))
		vaulttest.Write(t, v, "/memories/old/b.md", []byte("b\n"))
		s := v.Agent(vault.AgentOptions{Review: true})
		err := s.Update(ctx, vault.Meta{Command: "rename"}, func(tx *vault.Tx) error { return tx.Rename("/memories/old", "/memories/new") })
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Approve(ctx, []string{vault.ReviewAll}); err != nil {
			t.Fatal(err)
		}
		if got := seen(t, v, "/memories/new/a.md"); got != "a\n" {
			t.Errorf("main's new/a.md = %q", got)
		}
		if got := seen(t, v, "/memories/old/a.md"); got != "" {
			t.Errorf("main still holds old/a.md")
		}
		recs := vaulttest.Log(t, v, vault.LogOptions{Path: "/memories/new/a.md"})
		if len(recs) != 2 || recs[0].Command != "rename" || recs[1].Path != "/memories/old/a.md" {
			t.Errorf("the history of new/a.md = %+v, want the approved rename and the write before it", recs)
		}
	})
}

// TestReviewConcurrent: writers in review mode on two handles of one vault,
// and a writer on main, run at once: every change is pending once, the view
// holds them all and main's too.
func TestReviewConcurrent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, opts := vaulttest.NewAt(t, dir)
	other, err := vault.Open(ctx, v.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	done := make(chan error, 3)
	for g, s := range []*vault.AgentStore{v.Agent(vault.AgentOptions{Review: true}), other.Agent(vault.AgentOptions{Review: true})} {
		go func() {
			for i := range 15 {
				if err := agentWrite(t, s, fmt.Sprintf("/memories/g%d/%d.md", g, i), "x\n"); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	go func() {
		for i := range 10 {
			if err := v.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
				return tx.WriteFile(ctx, fmt.Sprintf("/memories/main/%d.md", i), []byte("m\n"))
			}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if ps := pending(t, v, vault.ReviewOptions{}); len(ps) != 30 {
		t.Errorf("%d changes pending, want 30", len(ps))
	}
	s := v.Agent(vault.AgentOptions{Review: true})
	for _, p := range []string{"/memories/g0/14.md", "/memories/g1/0.md", "/memories/main/9.md"} {
		if got := seen(t, s, p); got == "" {
			t.Errorf("the view lacks %s", p)
		}
	}
}
