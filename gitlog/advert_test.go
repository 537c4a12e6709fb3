package gitlog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// endlessAdvert writes a ref advertisement that never ends: a new ref a
// line, as a hostile server did until the client held gigabytes.
func endlessAdvert(ctx context.Context, w func([]byte) error) {
	first := "0000000000000000000000000000000000000001 HEAD\x00multi_ack side-band-64k ofs-delta\n"
	if w(fmt.Appendf(nil, "%04x%s", len(first)+4, first)) != nil {
		return
	}
	var buf []byte
	for i := 0; ctx.Err() == nil; i++ {
		line := fmt.Sprintf("0000000000000000000000000000000000000001 refs/heads/r%09d\n", i)
		buf = fmt.Appendf(buf, "%04x%s", len(line)+4, line)
		if len(buf) > 32<<10 {
			if w(buf) != nil {
				return
			}
			buf = buf[:0]
		}
	}
}

// TestFetchEndlessAdvertisement: an HTTP server whose ref advertisement
// never ends is refused once it passes its bound (the transport's
// maxAdvertisement), with an error that says so, well before the transfer's
// own deadline.
func TestFetchEndlessAdvertisement(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/info/refs") {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		svc := "# service=git-upload-pack\n"
		fmt.Fprintf(w, "%04x%s0000", len(svc)+4, svc)
		endlessAdvert(r.Context(), func(b []byte) error { _, err := w.Write(b); return err })
	}))
	defer srv.Close()

	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AddRemote("origin", srv.URL+"/vault.git"); err != nil {
		t.Fatal(err)
	}
	fctx, fcancel := context.WithTimeout(ctx, 20*time.Second)
	defer fcancel()
	start := time.Now()
	_, err = r.Fetch(fctx, "origin", TransferOptions{})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "ref advertisement is over 16 MiB") {
		t.Fatalf("Fetch from a server whose advertisement never ends = %v (after %v), want ErrTooLarge: the advertisement is over 16 MiB", err, time.Since(start))
	}
}

// TestFetchEndlessAdvertisementGit: over git://, where go-git keeps the
// connection to itself (0.65 GB in 20 s once), the relay cuts the
// advertisement at its bound.
func TestFetchEndlessAdvertisementGit(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Read(make([]byte, 512)) // the request
				endlessAdvert(ctx, func(b []byte) error { _, err := c.Write(b); return err })
			}()
		}
	}()
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AddRemote("origin", "git://"+ln.Addr().String()+"/vault.git"); err != nil {
		t.Fatal(err)
	}
	fctx, fcancel := context.WithTimeout(ctx, 20*time.Second)
	defer fcancel()
	_, err = r.Fetch(fctx, "origin", TransferOptions{})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "ref advertisement is over 16 MiB") {
		t.Fatalf("Fetch from a git:// server whose advertisement never ends = %v, want ErrTooLarge: the advertisement is over 16 MiB", err)
	}
}
