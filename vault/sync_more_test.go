package vault_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestSyncRecipientsFromRemote: a recipients change made elsewhere moves nothing
// until it is accepted.
func TestSyncRecipientsFromRemote(t *testing.T) {
	a, b := pair(t, fileRemote(t))
	other, err := keys.CreateIdentity(filepath.Join(t.TempDir(), "other"), keys.IdentityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key := other.Recipients[0].Key
	if _, err := b.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{key}}); err != nil {
		t.Fatal(err)
	}
	mustSync(t, b)
	write(t, a, "/memories/mine.md", "local\n")
	before := head(t, a)
	res, err := a.Sync(ctx, vault.SyncOptions{})
	if !errors.Is(err, vault.ErrRecipientsChanged) || !res.RecipientsChanged ||
		len(res.RecipientsAdded) != 1 || res.RecipientsAdded[0].Key != key || len(res.RecipientsRemoved) != 0 {
		t.Fatalf("Sync after a remote recipients change = %+v, %v; want ErrRecipientsChanged naming the new key", res, err)
	}
	if head(t, a) != before {
		t.Errorf("a refused sync moved the branch")
	}
	res, err = a.Sync(ctx, vault.SyncOptions{AcceptRecipients: true})
	if err != nil || res.Action != "merge" {
		t.Fatalf("Sync(AcceptRecipients) = %+v, %v; want a merge", res, err)
	}
	// The local file is now encrypted to the new key too: the other identity reads it.
	mustSync(t, b)
	ov, err := vault.Open(ctx, b.Dir(), vault.Options{IdentityFile: other.Path})
	if err != nil {
		t.Fatal(err)
	}
	defer ov.Close()
	if got, err := read(t, ov, "/memories/mine.md"); err != nil || got != "local\n" {
		t.Errorf("the new recipient reads mine.md = %q, %v; want it re-encrypted to them", got, err)
	}
}

// TestSyncRemoteFailures: a remote that cannot be reached, or refuses the
// credentials, leaves the vault as it was and says so through a sentinel.
func TestSyncRemoteFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/vault.git"
	dead.Close()
	for _, tc := range []struct {
		name, url string
		auth      vault.Credentials
		want      error
	}{
		{"unreachable", deadURL, vault.Credentials{}, vault.ErrUnreachable},
		{"auth refused", srv.URL + "/vault.git", vault.Credentials{Username: "u", Password: "s3cret-token"}, vault.ErrAuth},
		{"no such remote", "", vault.Credentials{}, vault.ErrNoRemote},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			v, _ := vaultAt(t, dir)
			if tc.url != "" {
				if err := v.AddRemote("origin", tc.url); err != nil {
					t.Fatal(err)
				}
			}
			before := head(t, v)
			_, err := v.Sync(ctx, vault.SyncOptions{Auth: tc.auth})
			if !errors.Is(err, tc.want) {
				t.Errorf("Sync = %v, want %v", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error quotes the password: %v", err)
			}
			if head(t, v) != before {
				t.Errorf("a failed sync moved the branch")
			}
		})
	}
}

// TestCloneNotRecipient: cloning with an identity the vault is not encrypted to
// fails, says which key to add, and leaves no directory behind.
func TestCloneNotRecipient(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "sealed"}[sealed], func(t *testing.T) { cloneNotRecipient(t, sealed) })
	}
}

func cloneNotRecipient(t *testing.T, sealed bool) {
	url := fileRemote(t)
	newAt := vaulttest.NewPlainAt
	if sealed {
		newAt = vaulttest.NewSealedAt
	}
	a, _ := newAt(t, t.TempDir())
	a.AddRemote("origin", url)
	mustSync(t, a)
	stranger := filepath.Join(t.TempDir(), "stranger")
	info, err := keys.CreateIdentity(stranger, keys.IdentityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "clone.git")
	_, _, err = vault.Clone(ctx, url, dir, vault.Options{IdentityFile: stranger}, vault.CloneOptions{})
	if !errors.Is(err, vault.ErrNotRecipient) || !strings.Contains(err.Error(), info.Recipients[0].Key) {
		t.Errorf("Clone with a stranger's identity = %v, want ErrNotRecipient naming its key", err)
	}
	if _, serr := os.Stat(dir); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("a failed clone left %s behind", dir)
	}
}

// TestSyncConcurrent: two vaults syncing at once through one remote (one push is
// rejected and merged again), while agents keep writing to both, all land. The
// server holds the first push's ref advertisement until the other vault's
// push asks for it too, so both push onto the same branch head and git's
// receive-pack refuses one; the test reads that refusal in the server's answer.
func TestSyncConcurrent(t *testing.T) {
	backend := httpBackend(t)
	var (
		mu       sync.Mutex
		armed    bool
		pushes   int // ref advertisements for a push, since armed
		both     = make(chan struct{})
		refusals int // receive-pack answers refusing the branch's update
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Query().Get("service") == "git-receive-pack":
			mu.Lock()
			n := 0
			if armed {
				pushes++
				n = pushes
			}
			mu.Unlock()
			switch n {
			case 1:
				select {
				case <-both:
				case <-time.After(10 * time.Second):
				}
			case 2:
				close(both)
			}
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack"):
			rec := httptest.NewRecorder()
			backend.ServeHTTP(rec, r)
			mu.Lock()
			if armed && strings.Contains(rec.Body.String(), "ng refs/heads/main") {
				refusals++
			}
			mu.Unlock()
			for k, vs := range rec.Header() {
				w.Header()[k] = vs
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	backend.Stderr = io.Discard // git http-backend says "cannot lock ref" for the refused push
	a, b := pair(t, srv.URL+"/vault.git")
	// Each vault has a commit to push at its first sync.
	write(t, a, "/memories/a/first.md", "a\n")
	write(t, b, "/memories/b/first.md", "b\n")
	mu.Lock()
	armed = true
	mu.Unlock()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i, v := range []*vault.Vault{a, b} {
		name := []string{"a", "b"}[i]
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := range 20 {
				err := v.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
					return tx.WriteFile(ctx, "/memories/"+name+"/"+string(rune('a'+j))+".md", []byte(name+"\n"))
				})
				if err != nil {
					errs <- err
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 3 {
				// Each sync ends pushed: the one whose push was refused
				// fetched, merged and pushed again before it returned.
				res, err := v.Sync(ctx, vault.SyncOptions{})
				if err == nil && !res.Pushed {
					err = fmt.Errorf("%s: Sync = %+v, not pushed", name, res)
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent write or sync: %v", err)
	}
	mu.Lock()
	if refusals == 0 {
		t.Errorf("the remote refused none of %d pushes: the two syncs never met", pushes)
	}
	mu.Unlock()
	mustSync(t, a)
	mustSync(t, b)
	mustSync(t, a)
	if n := len(files(t, a)); n != 42 || head(t, a) != head(t, b) {
		t.Errorf("after syncing: %d files (want 42), heads %s %s", n, head(t, a), head(t, b))
	}
}

// TestSyncCancelled: a sync cut off at any point leaves the vault readable and a
// later sync completes.
func TestSyncCancelled(t *testing.T) {
	a, b := pair(t, httpRemote(t))
	for i := range 30 {
		write(t, a, "/memories/x.md", strings.Repeat("a\n", i+1))
		write(t, b, "/memories/y.md", strings.Repeat("b\n", i+1))
	}
	mustSync(t, a)
	var cut []time.Duration // deadlines that cut a sync off
	for d := time.Millisecond; d < time.Second; d *= 2 {
		cctx, cancel := context.WithTimeout(ctx, d)
		_, err := b.Sync(cctx, vault.SyncOptions{})
		ended := cctx.Err()
		cancel()
		files(t, b) // every file still decrypts
		if err == nil {
			break
		}
		// A failure before the deadline is one of the sync's own, not a cut.
		// (Not every cut wraps gitlog.ErrTimeout: one during the fetch's
		// request reads as gitlog.ErrUnreachable.)
		if !errors.Is(ended, context.DeadlineExceeded) {
			t.Fatalf("Sync with a deadline of %v failed before it: %v", d, err)
		}
		cut = append(cut, d)
	}
	if len(cut) == 0 {
		t.Fatal("no deadline cut a sync off: the test proves nothing")
	}
	t.Logf("deadlines %v cut a sync off", cut)
	mustSync(t, b)
	mustSync(t, a)
	if head(t, a) != head(t, b) {
		t.Errorf("heads differ after the interrupted syncs completed")
	}
}

func vaultAt(t *testing.T, dir string) (*vault.Vault, vault.Options) {
	t.Helper()
	return vaulttest.NewAt(t, dir)
}

// TestSyncSeenByOtherOpener: a vault opened separately (as by another process,
// an agent's server) reads what a sync brought in, and its writes land on top.
func TestSyncSeenByOtherOpener(t *testing.T) {
	a, b := pair(t, fileRemote(t))
	other, err := vault.Open(ctx, b.Dir(), vault.Options{IdentityFile: b.IdentityFile()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	files(t, other)
	write(t, a, "/memories/new.md", "from a\n")
	mustSync(t, a)
	mustSync(t, b)
	if got, err := read(t, other, "/memories/new.md"); err != nil || got != "from a\n" {
		t.Errorf("the other opener reads new.md = %q, %v; want what the sync brought", got, err)
	}
	write(t, other, "/memories/other.md", "x\n")
	mustSync(t, b)
}
