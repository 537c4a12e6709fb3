package memstoreapi_test

import (
	"context"
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

	"github.com/memvault/memvault/agent/memstoreapi"
)

// hostile serves, on loopback, the versions listing of a memory store that
// page answers, given the page asked for ("" for the first).
func hostile(t *testing.T, page func(w http.ResponseWriter, cursor string)) (*memstoreapi.Client, *atomic.Int64) {
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
	return memstoreapi.New("memstore_x", option.WithBaseURL(srv.URL), option.WithAPIKey("sk-test"), option.WithMaxRetries(0)), &requests
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
// used to have a sync hold every version it listed (240-750 MB after 20 s)
// until --timeout; the listing now stops at its bound in pages, and the
// listing says why.
func TestListingNeverEnds(t *testing.T) {
	c, requests := hostile(t, func(w http.ResponseWriter, cursor string) {
		k := 0
		fmt.Sscanf(cursor, "p%d", &k)
		fmt.Fprint(w, versionsPage(k, 100, fmt.Sprintf("p%d", k+1)))
	})
	done := make(chan error, 1)
	go func() {
		_, err := c.Versions(ctx, time.Time{})
		done <- err
	}()
	var peak uint64
	giveUp := time.After(time.Minute)
	for {
		select {
		case err := <-done:
			if !errors.Is(err, memstoreapi.ErrListBounds) || !strings.Contains(err.Error(), "1000 pages") {
				t.Errorf("listing = %v, want the listing's bound of 1000 pages", err)
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
			t.Fatalf("still listing after a minute; heap at %d MiB", peak>>20)
		}
	}
}

// TestListingRepeats: a server that answers the same page again and again.
func TestListingRepeats(t *testing.T) {
	c, requests := hostile(t, func(w http.ResponseWriter, cursor string) {
		fmt.Fprint(w, versionsPage(0, 100, "again"))
	})
	_, err := c.Versions(ctx, time.Time{})
	if !errors.Is(err, memstoreapi.ErrListBounds) || requests.Load() > 3 {
		t.Errorf("listing = %v after %d requests, want a refusal of the repeated page at once", err, requests.Load())
	}
}

// TestListingHugeAnswer: one answer of hundreds of megabytes (a page that
// never closes its array) is cut at the bound of an answer.
func TestListingHugeAnswer(t *testing.T) {
	c, _ := hostile(t, func(w http.ResponseWriter, cursor string) {
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
	_, err := c.Versions(ctx, time.Time{})
	if !errors.Is(err, memstoreapi.ErrListBounds) {
		t.Errorf("listing = %v, want the bound of an answer", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("listing took %v", took)
	}
}

// TestListingTrickles: a server that sends its pages a byte at a time is
// given up on at the listing's time bound, not held for the whole sync's.
func TestListingTrickles(t *testing.T) {
	defer memstoreapi.SetListTimeout(time.Second)()
	c, _ := hostile(t, func(w http.ResponseWriter, cursor string) {
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
	_, err := c.Versions(ctx, time.Time{})
	if !errors.Is(err, memstoreapi.ErrListBounds) {
		t.Errorf("listing = %v, want the listing's time bound", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("listing took %v, want about the 1s bound", took)
	}
}

var ctx = context.Background()
