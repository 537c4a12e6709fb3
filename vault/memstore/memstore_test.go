package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memvault/memvault/agent/memstoreapi"
	"github.com/memvault/memvault/agent/memstoreapi/memstoreapitest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/memstore"
	"github.com/memvault/memvault/vault/vaulttest"
)

var ctx = context.Background()

func opts(*memstoreapitest.Server) memstore.Options {
	return memstore.Options{Host: "laptop"}
}

// client speaks to the stand-in store s through the API's client, so the
// sync runs over HTTP as it does against the real API.
func client(s *memstoreapitest.Server) memstore.Store {
	return memstoreapi.New(s.Store, option.WithBaseURL(s.URL), option.WithAPIKey("sk-test"))
}

// files reads every memory file of the vault, by store path.
func files(t *testing.T, v *vault.Vault) map[string]string {
	t.Helper()
	snap, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := snap.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range ps {
		data, err := snap.ReadFile(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(p, vault.Root)] = string(data)
	}
	return out
}

func same(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func write(t *testing.T, v *vault.Vault, p, content string) {
	t.Helper()
	err := v.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error { return tx.WriteFile(ctx, p, []byte(content)) })
	if err != nil {
		t.Fatal(err)
	}
}

func sync(t *testing.T, v *vault.Vault, s *memstoreapitest.Server) memstore.Result {
	t.Helper()
	res, err := memstore.Sync(ctx, v, client(s), opts(s))
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return res
}

// originCount counts the vault's commits that replay each store version.
func originCount(t *testing.T, v *vault.Vault) map[string]int {
	t.Helper()
	log, err := v.Log(ctx, vault.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, r := range log {
		if r.Origin != "" {
			n[r.Origin]++
		}
	}
	return n
}

func TestPullAndPush(t *testing.T) {
	s := memstoreapitest.New(t)
	agent := memstoreapitest.Session("sesn_01")
	s.Write("/notes.md", "one\n", agent)
	s.Write("/projects/a.md", "alpha\n", memstoreapitest.APIKey("apikey_01"))
	s.Write("/notes.md", "one\ntwo\n", agent)
	s.Move("/projects/a.md", "/projects/b.md", agent)
	s.Write("/gone.md", "bye\n", agent)
	s.Delete("/gone.md", agent)
	v := vaulttest.New(t)

	res := sync(t, v, s)
	same(t, "the vault after a pull", files(t, v), s.Files())
	if res.Pulled != 6 || res.Pushed != 0 {
		t.Errorf("first sync = %+v, want 6 versions pulled, nothing pushed", res)
	}
	log, _ := v.Log(ctx, vault.LogOptions{})
	first := log[len(log)-1]
	for _, r := range log {
		if r.Origin == memstore.Scheme+s.Store+" memver_000002" {
			first = r
		}
	}
	if first.Agent != "session sesn_01" || first.Session != "sesn_01" || first.Command != "store created" ||
		first.Path != "/memories/notes.md" || !first.Time.Equal(first.Time.UTC()) || first.Time.Year() != 2026 {
		t.Errorf("the commit of the first version = %+v", first)
	}
	for o, n := range originCount(t, v) {
		if n != 1 {
			t.Errorf("%s made %d commits", o, n)
		}
	}

	// Local changes go to the store; the versions they make are not pulled back.
	write(t, v, "/memories/notes.md", "one\ntwo\nthree\n")
	write(t, v, "/memories/new.md", "fresh\n")
	if err := v.Update(ctx, vault.Meta{Command: "delete"}, func(tx *vault.Tx) error { return tx.Remove("/memories/projects/b.md") }); err != nil {
		t.Fatal(err)
	}
	res = sync(t, v, s)
	if res.Pushed != 3 || res.Pulled != 0 {
		t.Errorf("second sync = %+v, want 3 pushed, nothing pulled", res)
	}
	same(t, "the store after a push", s.Files(), files(t, v))
	if res := sync(t, v, s); res.Pushed != 0 || res.Pulled != 0 {
		t.Errorf("a sync with nothing new = %+v", res)
	}
}

// Both sides change the same file: the merge keeps both changes, and a change
// both made to the same line stays in the file between markers, never "the
// server wins".
func TestBothSidesChanged(t *testing.T) {
	s := memstoreapitest.New(t)
	agent := memstoreapitest.Session("sesn_01")
	s.Write("/plan.md", "a\nb\nc\nd\ne\n", agent)
	s.Write("/todo.md", "x\n", agent)
	v := vaulttest.New(t)
	sync(t, v, s)

	write(t, v, "/memories/plan.md", "A here\nb\nc\nd\ne\n")
	write(t, v, "/memories/todo.md", "x (ours)\n")
	s.Write("/plan.md", "a\nb\nc\nd\nE there\n", agent)
	s.Write("/todo.md", "x (theirs)\n", agent)

	res := sync(t, v, s)
	got := files(t, v)
	if got["/plan.md"] != "A here\nb\nc\nd\nE there\n" {
		t.Errorf("plan.md merged to %q", got["/plan.md"])
	}
	todo := got["/todo.md"]
	if !strings.Contains(todo, "x (ours)") || !strings.Contains(todo, "x (theirs)") || !strings.Contains(todo, "<<<<<<<") {
		t.Errorf("todo.md = %q: want both sides between conflict markers", todo)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0] != "/memories/todo.md" {
		t.Errorf("conflicts = %v", res.Conflicts)
	}
	same(t, "the store after the merge is pushed", s.Files(), got)
}

// An agent writes to the store between this vault's pull and its push: the
// store refuses the push (409), and the sync pulls, merges and pushes again.
func TestPushRace(t *testing.T) {
	s := memstoreapitest.New(t)
	s.Write("/shared.md", "1\n2\n3\n4\n5\n", memstoreapitest.Session("sesn_01"))
	v := vaulttest.New(t)
	sync(t, v, s)
	write(t, v, "/memories/shared.md", "1 ours\n2\n3\n4\n5\n")
	s.RaceNextWrite("/shared.md", "1\n2\n3\n4\n5 theirs\n")

	sync(t, v, s)
	want := "1 ours\n2\n3\n4\n5 theirs\n"
	if got := files(t, v)["/shared.md"]; got != want {
		t.Errorf("the vault after the race = %q, want %q", got, want)
	}
	if got := s.Files()["/shared.md"]; got != want {
		t.Errorf("the store after the race = %q, want %q", got, want)
	}
}

// A pull stopped by errors it cannot retry past, by a cancel in the middle,
// or by a kill before it saved its cursor, resumes where it stopped: each
// version becomes exactly one commit.
func TestInterruptedPullResumes(t *testing.T) {
	s := memstoreapitest.New(t)
	for i := range 300 {
		s.Write(fmt.Sprintf("/m/%03d.md", i%40), fmt.Sprintf("version %d\n", i), memstoreapitest.Session("sesn_01"))
	}
	v := vaulttest.New(t)
	o := opts(s)
	o.Pull = true
	if _, err := memstore.Sync(ctx, v, client(s), o); err != nil {
		t.Fatal(err)
	}
	states, _ := filepath.Glob(filepath.Join(v.Dir(), "memvault", "memory-store-*.json"))
	if len(states) != 1 {
		t.Fatalf("state files: %v", states)
	}
	early, err := os.ReadFile(states[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1200 {
		s.Write(fmt.Sprintf("/m/%03d.md", i%50), fmt.Sprintf("later %d\n", i), memstoreapitest.Session("sesn_02"))
	}

	// Fail the listing past the client's retries.
	s.Fail(500, 500, 500, 500, 500, 500, 500, 500)
	if _, err := memstore.Sync(ctx, v, client(s), o); err == nil || !strings.Contains(err.Error(), "HTTP 500") {
		t.Fatalf("sync through 8 failures: err = %v, want the HTTP 500", err)
	}
	// Cancel when 500 of the 1,200 versions are in.
	cctx, cancel := context.WithCancel(ctx)
	o.Progress = cancelAt{"500 of", cancel}
	if _, err := memstore.Sync(cctx, v, client(s), o); !errors.Is(err, context.Canceled) {
		t.Fatalf("sync cancelled in the middle: err = %v", err)
	}
	if n := len(originCount(t, v)); n < 800 || n >= 1500 {
		t.Fatalf("%d versions in after the cancel, want 500 or so more than 300", n)
	}
	// A kill loses the cursor saved since: put back the one of before.
	if err := os.WriteFile(states[0], early, 0o600); err != nil {
		t.Fatal(err)
	}
	sync(t, v, s)
	same(t, "the vault after the resumed pull", files(t, v), s.Files())
	counts := originCount(t, v)
	if len(counts) != 1500 {
		t.Errorf("%d versions became commits, want 1,500", len(counts))
	}
	for o, n := range counts {
		if n != 1 {
			t.Errorf("%s made %d commits", o, n)
		}
	}
}

// cancelAt cancels when a progress line holds its text.
type cancelAt struct {
	text   string
	cancel func()
}

func (c cancelAt) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.text) {
		c.cancel()
	}
	return len(p), nil
}

// 429 and 5xx are retried with back-off, honouring retry-after.
func TestRetriesThrottling(t *testing.T) {
	s := memstoreapitest.New(t)
	s.Write("/a.md", "a\n", memstoreapitest.Session("sesn_01"))
	v := vaulttest.New(t)
	s.Fail(http.StatusTooManyRequests, http.StatusTooManyRequests, http.StatusServiceUnavailable)
	sync(t, v, s)
	same(t, "the vault after throttled requests", files(t, v), s.Files())
}

// A redacted version's content is not fetched again; the commit before it
// keeps what this vault pulled earlier.
func TestRedactedVersion(t *testing.T) {
	s := memstoreapitest.New(t)
	s.Write("/a.md", "public\n", memstoreapitest.Session("sesn_01"))
	s.Write("/a.md", "secret\n", memstoreapitest.Session("sesn_01"))
	s.Redact("/a.md")
	v := vaulttest.New(t)
	res := sync(t, v, s)
	if len(res.Redacted) != 1 {
		t.Errorf("redacted = %v, want one version", res.Redacted)
	}
	if got := files(t, v)["/a.md"]; got != "public\n" {
		t.Errorf("a.md = %q, want the content before the redacted version", got)
	}
}

// The store's limits are checked before a byte is sent, naming the file.
func TestLimitsBeforeSending(t *testing.T) {
	s := memstoreapitest.New(t)
	v := vaulttest.New(t)
	write(t, v, "/memories/ok.md", "fine\n")
	write(t, v, "/memories/big.md", strings.Repeat("x", 102401))
	before := s.Requests
	_, err := memstore.Sync(ctx, v, client(s), opts(s))
	if err == nil || !strings.Contains(err.Error(), "/memories/big.md is 102401 bytes") {
		t.Fatalf("sync of a file over the limit: err = %v", err)
	}
	if len(s.Files()) != 0 {
		t.Errorf("the store took %v though the push was refused", s.Files())
	}
	if s.Requests-before != 1 { // the pull's listing only
		t.Errorf("%d requests, want only the pull's", s.Requests-before)
	}
}

// TestPullHoldsAWindow: a pull lists the store's versions without their text
// and fetches contents a window at a time, so a store of many large versions
// is never held whole (it was: every version since the cursor, text and all,
// sat in memory until the pull ended). Each version's content is sent about
// once, a full listing matches at most about a window, and a second in which
// more versions than a window were written is read one version at a time.
func TestPullHoldsAWindow(t *testing.T) {
	s := memstoreapitest.New(t)
	s.Step = 150 * time.Millisecond
	const n = 1000
	for i := range n {
		s.Write(fmt.Sprintf("/m/%03d.md", i%70), fmt.Sprintf("version %d\n%s", i, strings.Repeat("x", 500)), memstoreapitest.Session("sesn_01"))
	}
	v := vaulttest.New(t)
	if res := sync(t, v, s); res.Pulled != n {
		t.Fatalf("pulled %d versions, want %d", res.Pulled, n)
	}
	same(t, "the vault after the pull", files(t, v), s.Files())
	if s.Widest > 250 {
		t.Errorf("a full listing matched %d versions; want a window's, about 200", s.Widest)
	}
	if s.Contents > n+n/10 {
		t.Errorf("%d contents sent for %d versions; want each about once", s.Contents, n)
	}

	// 600 more in under a second: too many for a window, read one by one.
	s.Step = time.Millisecond
	before, widest := s.Contents, s.Widest
	for i := range 600 {
		s.Write(fmt.Sprintf("/m/%03d.md", i%70), fmt.Sprintf("dense %d\n", i), memstoreapitest.Session("sesn_02"))
	}
	if res := sync(t, v, s); res.Pulled != 600 {
		t.Fatalf("pulled %d versions, want 600", res.Pulled)
	}
	same(t, "the vault after the dense pull", files(t, v), s.Files())
	if s.Widest != widest || s.Contents-before != 600 {
		t.Errorf("the dense second: widest full listing %d (was %d), %d contents sent; want no wider listing and 600",
			s.Widest, widest, s.Contents-before)
	}
}
