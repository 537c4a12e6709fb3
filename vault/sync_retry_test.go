package vault_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault"
)

// movingRemote is a git server (git http-backend) that moves under a pusher:
// while armed, each push that starts first waits for move, which pushes
// something else to the same server. The pusher's view of the remote, taken at
// its fetch, is then stale. at says where the push is held: "advertisement"
// (the refs the pusher reads before it sends anything: go-git sees the moved
// branch and refuses a non-fast-forward) or "update" (the pack and ref update
// already sent: the server's compare-and-swap of the branch refuses it).
type movingRemote struct {
	backend http.Handler
	at      string
	move    func(n int) error // the nth move, counting from 1 over the server's life

	inflight sync.WaitGroup // moves under way

	mu     sync.Mutex
	moving bool // a move's own requests pass straight through
	moves  int  // moves left; -1 for no end
	moved  int  // moves made
	pushes int  // pushes begun since arm, other than the moves'
	errs   []error
}

func (m *movingRemote) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	push := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack")
	if m.at == "advertisement" {
		push = r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/info/refs") &&
			r.URL.Query().Get("service") == "git-receive-pack"
	}
	m.mu.Lock()
	if push && !m.moving {
		m.pushes++
		if m.moves != 0 {
			m.moves--
			m.moving = true
			m.moved++
			n := m.moved
			m.inflight.Add(1)
			m.mu.Unlock()
			err := m.move(n)
			m.inflight.Done()
			m.mu.Lock()
			m.moving = false
			if err != nil {
				m.errs = append(m.errs, err)
			}
		}
	}
	m.mu.Unlock()
	m.backend.ServeHTTP(w, r)
}

// arm makes the next n pushes (-1: all) wait for a move, and counts pushes
// from zero.
func (m *movingRemote) arm(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.moves, m.pushes = n, 0
}

// begun returns the pushes begun since arm.
func (m *movingRemote) begun() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pushes
}

// deadlineAfter returns a context whose deadline passes (Err is
// context.DeadlineExceeded) as soon as reached reports true, looked at every
// few milliseconds; it bounds only a test that would otherwise hang, at a
// minute.
func deadlineAfter(parent context.Context, reached func() bool) context.Context {
	ctx := &passedDeadline{Context: parent, done: make(chan struct{})}
	go func() {
		defer close(ctx.done)
		for end := time.Now().Add(time.Minute); !reached() && time.Now().Before(end); {
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return ctx
}

// passedDeadline is a context whose deadline passes when done closes.
type passedDeadline struct {
	context.Context
	done chan struct{}
}

func (c *passedDeadline) Done() <-chan struct{} { return c.done }

func (c *passedDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// disarm stops the moves, waits for one under way, and returns the pushes begun
// since arm and the moves' errors.
func (m *movingRemote) disarm() (pushes int, errs []error) {
	m.mu.Lock()
	m.moves = 0
	m.mu.Unlock()
	m.inflight.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.moves = 0
	return m.pushes, m.errs
}

// TestSyncPushRejected: a push rejected because the remote moved
// between this vault's fetch and its push fetches and merges again, and the
// sync ends with a pushed merge holding both sides. Against a remote that moves
// before every push, Sync keeps merging again until its context's deadline
// (not a fixed number of rounds), then fails with an error wrapping
// gitlog.ErrRejected and gitlog.ErrTimeout, and the vault intact.
func TestSyncPushRejected(t *testing.T) {
	for _, at := range []string{"advertisement", "update"} {
		t.Run(at, func(t *testing.T) {
			backend := httpBackend(t)
			// git http-backend says "cannot lock ref" on stderr for each push the
			// test makes it refuse.
			backend.Stderr = io.Discard
			m := &movingRemote{backend: backend, at: at}
			srv := httptest.NewServer(m)
			t.Cleanup(srv.Close)
			a, b := pair(t, srv.URL+"/vault.git")
			// b is the other machine: each move is a memory it writes and pushes.
			m.move = func(n int) error {
				err := b.Update(ctx, vault.Meta{Command: "create"}, func(tx *vault.Tx) error {
					return tx.WriteFile(ctx, fmt.Sprintf("/memories/moved-%d.md", n), []byte("moved\n"))
				})
				if err != nil {
					return err
				}
				res, err := b.Sync(ctx, vault.SyncOptions{Host: "b"})
				if err == nil && !res.Pushed {
					err = fmt.Errorf("move %d: Sync = %+v, not pushed", n, res)
				}
				return err
			}

			t.Run("moves once", func(t *testing.T) {
				write(t, a, "/memories/a.md", "from a\n")
				write(t, b, "/memories/b.md", "from b\n")
				mustSync(t, b)
				m.arm(1)
				res := mustSync(t, a)
				pushes, errs := m.disarm()
				if len(errs) > 0 {
					t.Fatalf("the move failed: %v", errs)
				}
				if pushes != 2 {
					t.Errorf("a's sync began %d pushes, want 2: one rejected, one after merging again", pushes)
				}
				if res.Action != "merge" || !res.Pushed || res.Head != head(t, a) {
					t.Errorf("Sync = %+v, want a pushed merge at the head %s", res, head(t, a))
				}
				recs, err := a.Log(ctx, vault.LogOptions{Limit: 1})
				if err != nil || len(recs) != 1 || recs[0].Command != "merge" || len(recs[0].Parents) != 2 {
					t.Fatalf("Log(Limit 1) = %+v, %v; want a merge commit with two parents", recs, err)
				}
				want := map[string]string{"/memories/a.md": "from a\n", "/memories/b.md": "from b\n", "/memories/moved-1.md": "moved\n"}
				if got := files(t, a); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("after the sync a holds %q, want %q", got, want)
				}
				if r := mustSync(t, b); r.Action != "fast-forward" || head(t, b) != head(t, a) {
					t.Errorf("b's sync = %+v, want a fast-forward to a's pushed merge %s", r, head(t, a))
				}
			})

			t.Run("keeps moving", func(t *testing.T) {
				write(t, a, "/memories/a2.md", "again from a\n")
				write(t, b, "/memories/b2.md", "again from b\n")
				mustSync(t, b)
				before := head(t, a)
				m.arm(-1)
				// The deadline passes once the remote has refused a few rounds,
				// not at a fixed time: on a loaded machine one round (a fetch,
				// a merge, the other machine's push) can take seconds, and a
				// deadline met before the first refusal proves nothing here.
				sctx := deadlineAfter(ctx, func() bool { return m.begun() >= 3 })
				_, err := a.Sync(sctx, vault.SyncOptions{Host: "a"})
				ended := sctx.Err()
				pushes, errs := m.disarm()
				if len(errs) > 0 {
					t.Fatalf("a move failed: %v", errs)
				}
				if !errors.Is(err, gitlog.ErrRejected) || !errors.Is(err, gitlog.ErrTimeout) {
					t.Fatalf("Sync against a remote that always moves = %v, want an error wrapping gitlog.ErrRejected and gitlog.ErrTimeout", err)
				}
				if !errors.Is(ended, context.DeadlineExceeded) {
					t.Errorf("Sync gave up before its context's deadline (ctx.Err() = %v), want it to keep trying until then", ended)
				}
				if pushes < 2 {
					t.Errorf("a's sync began %d pushes, want several: each rejection starts another round", pushes)
				}
				// Intact: every local commit is still in the history, and the head
				// is a complete merge of what the last fetch brought.
				recs, err := a.Log(ctx, vault.LogOptions{})
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, r := range recs {
					found = found || r.Commit == before
				}
				if !found {
					t.Errorf("the head before the sync, %s, is no longer in a's history", before)
				}
				if recs[0].Command != "merge" || len(recs[0].Parents) != 2 {
					t.Errorf("a's head = %+v, want a merge commit", recs[0])
				}
				got := files(t, a)
				var names []string
				for p := range got {
					names = append(names, p)
				}
				sort.Strings(names)
				// Round j's fetch saw moves 1 to j, and push j set off move j+1.
				// The deadline ended it in a back-off or a fetch (a holds moves 1
				// to pushes), or between a merge and its push (1 to pushes+1).
				want := func(moves int) string {
					w := []string{"/memories/a.md", "/memories/a2.md", "/memories/b.md", "/memories/b2.md"}
					for n := 1; n <= moves; n++ {
						w = append(w, fmt.Sprintf("/memories/moved-%d.md", n))
					}
					sort.Strings(w)
					return strings.Join(w, " ")
				}
				if got := strings.Join(names, " "); got != want(pushes) && got != want(pushes+1) {
					t.Errorf("a's files after giving up = %v, want %v (or one move more)", got, want(pushes))
				}
				if problems, err := a.Fsck(ctx); err != nil || len(problems) > 0 {
					t.Errorf("Fsck after giving up = %v, %v", problems, err)
				}
				// Once the remote holds still, the same vaults sync and agree.
				mustSync(t, a)
				mustSync(t, b)
				if head(t, a) != head(t, b) {
					t.Errorf("heads differ after the remote held still")
				}
				// Move 1 came in "moves once", moves 2 to pushes+1 here.
				for _, v := range []*vault.Vault{a, b} {
					var got []string
					for p := range files(t, v) {
						got = append(got, p)
					}
					sort.Strings(got)
					if strings.Join(got, " ") != want(pushes+1) {
						t.Errorf("after the remote held still a vault holds %v, want %v", got, want(pushes+1))
					}
				}
			})
		})
	}
}
