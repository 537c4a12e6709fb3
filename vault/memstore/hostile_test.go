package memstore_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memvault/memvault/vault/memstore"
	"github.com/memvault/memvault/vault/memstore/memstoretest"
	"github.com/memvault/memvault/vault/vaulttest"
)

// hostile serves, on loopback, the versions listing of a memory store that
// page answers, given the page asked for ("" for the first).
func hostile(t *testing.T, page func(w http.ResponseWriter, cursor string)) (memstore.Options, *atomic.Int64) {
	t.Helper()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if !strings.HasSuffix(r.URL.Path, "/memory_versions") {
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"no"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		page(w, r.URL.Query().Get("page"))
	}))
	t.Cleanup(srv.Close)
	return memstore.Options{API: []option.RequestOption{option.WithBaseURL(srv.URL), option.WithAPIKey("sk-test"), option.WithMaxRetries(0)}}, &requests
}

// versionsPage is a page of n versions from the n*k-th on, pointing to the next.
func versionsPage(k, n int, next string) string {
	var b strings.Builder
	b.WriteString(`{"data":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		id := k*n + i
		fmt.Fprintf(&b, `{"id":"memver_%09d","type":"memory_version","memory_id":"mem_%09d","memory_store_id":"memstore_x","operation":"created","path":"/f%d.md","created_at":"2026-01-01T00:00:00Z","created_by":{"type":"api_actor","api_key_id":"k"}}`, id, id, id)
	}
	fmt.Fprintf(&b, `],"next_page":%q}`, next)
	return b.String()
}

// TestListingNeverEnds: a server that answers pages of versions forever
// used to have sync hold every version it listed (240-750 MB after 20 s)
// until --timeout; the listing now stops at its bound in pages, and the
// sync says why.
func TestListingNeverEnds(t *testing.T) {
	opts, requests := hostile(t, func(w http.ResponseWriter, cursor string) {
		k := 0
		fmt.Sscanf(cursor, "p%d", &k)
		fmt.Fprint(w, versionsPage(k, 100, fmt.Sprintf("p%d", k+1)))
	})
	v := vaulttest.New(t)
	done := make(chan error, 1)
	go func() {
		_, err := memstore.Sync(ctx, v, "memstore_x", opts)
		done <- err
	}()
	var peak uint64
	giveUp := time.After(time.Minute)
	for {
		select {
		case err := <-done:
			if !errors.Is(err, memstore.ErrListBounds) || !strings.Contains(err.Error(), "1000 pages") {
				t.Errorf("sync = %v, want the listing's bound of 1000 pages", err)
			}
			if n := requests.Load(); n > 1001 {
				t.Errorf("%d requests, want at most the 1000 pages", n)
			}
			// 1000 pages of 100 versions' metadata: tens of megabytes, where
			// the listing without end grew by tens of megabytes a second.
			if peak > 300<<20 {
				t.Errorf("heap peaked at %d MiB", peak>>20)
			}
			return
		case <-time.After(100 * time.Millisecond):
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		case <-giveUp:
			t.Fatalf("sync still listing after a minute; heap at %d MiB", peak>>20)
		}
	}
}

// TestListingRepeats: a server that answers the same page again and again.
func TestListingRepeats(t *testing.T) {
	opts, requests := hostile(t, func(w http.ResponseWriter, cursor string) {
		fmt.Fprint(w, versionsPage(0, 100, "again"))
	})
	_, err := memstore.Sync(ctx, vaulttest.New(t), "memstore_x", opts)
	if !errors.Is(err, memstore.ErrListBounds) || requests.Load() > 3 {
		t.Errorf("sync = %v after %d requests, want a refusal of the repeated page at once", err, requests.Load())
	}
}

// TestListingHugeAnswer: one answer of hundreds of megabytes (a page that
// never closes its array) is cut at the bound of an answer.
func TestListingHugeAnswer(t *testing.T) {
	opts, _ := hostile(t, func(w http.ResponseWriter, cursor string) {
		w.Write([]byte(`{"data":[`))
		one := strings.TrimSuffix(strings.TrimPrefix(versionsPage(0, 1, ""), `{"data":[`), `],"next_page":""}`) + ","
		chunk := []byte(strings.Repeat(one, 1000))
		for range 512 << 20 / len(chunk) { // half a gigabyte
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	start := time.Now()
	_, err := memstore.Sync(ctx, vaulttest.New(t), "memstore_x", opts)
	if !errors.Is(err, memstore.ErrListBounds) {
		t.Errorf("sync = %v, want the bound of an answer", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("sync took %v", took)
	}
}

// TestListingTrickles: a server that sends its pages a byte at a time is
// given up on at the listing's time bound, not held for the whole sync's.
func TestListingTrickles(t *testing.T) {
	defer memstore.SetListTimeout(time.Second)()
	opts, _ := hostile(t, func(w http.ResponseWriter, cursor string) {
		page := versionsPage(0, 100, "")
		for i := range len(page) {
			if _, err := w.Write([]byte{page[i]}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
		}
	})
	start := time.Now()
	_, err := memstore.Sync(ctx, vaulttest.New(t), "memstore_x", opts)
	if !errors.Is(err, memstore.ErrListBounds) {
		t.Errorf("sync = %v, want the listing's time bound", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("sync took %v, want about the 1s bound", took)
	}
}

// TestRefusedVersionSetAside: a version the vault refuses (its path holds
// "..") is set aside and named, and this sync and later ones go on past
// it; every later sync used to stop at it for good.
func TestRefusedVersionSetAside(t *testing.T) {
	s := memstoretest.New(t)
	s.Write("/a.md", "a", memstoretest.Session("sesn_01"))
	s.Write("/../escape.md", "out", memstoretest.Session("sesn_01"))
	s.Write("/b.md", "b", memstoretest.Session("sesn_01"))
	v := vaulttest.New(t)
	res := sync(t, v, s)
	if len(res.SetAside) != 1 || !strings.HasPrefix(res.SetAside[0], "memver_") || !strings.Contains(res.SetAside[0], "escape.md") {
		t.Errorf("set aside %q, want the version of /../escape.md, named", res.SetAside)
	}
	same(t, "the vault after the first sync", files(t, v), map[string]string{"/a.md": "a", "/b.md": "b"})

	s.Write("/c.md", "c", memstoretest.Session("sesn_01"))
	res = sync(t, v, s)
	if len(res.SetAside) != 0 || res.Pulled != 1 {
		t.Errorf("second sync: pulled %d, set aside %q; want the one new version, and nothing set aside again", res.Pulled, res.SetAside)
	}
	same(t, "the vault after the second sync", files(t, v), map[string]string{"/a.md": "a", "/b.md": "b", "/c.md": "c"})
}
