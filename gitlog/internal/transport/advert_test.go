package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// noRepo is a repository that a transfer failing at the advertisement
// never reads: any call of it but Dir panics.
type noRepo struct{ Repo }

func (noRepo) Dir() string { return "" }

// TestAdvertisementTimeBound: over git:// (and ssh), where go-git keeps the
// connection to itself, the advertisement's time is bounded.
func TestAdvertisementTimeBound(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Read(make([]byte, 512)) // the request
				first := "0000000000000000000000000000000000000001 HEAD\x00multi_ack\n"
				fmt.Fprintf(c, "%04x%s", len(first)+4, first)
				time.Sleep(time.Minute) // and never a flush
			}()
		}
	}()
	defer func(d time.Duration) { advertTimeoutHook = d }(advertTimeoutHook)
	advertTimeoutHook = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = Fetch(ctx, noRepo{}, "origin", "git://"+ln.Addr().String()+"/vault.git", Hash{}, Options{})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "ref advertisement took over") || ctx.Err() != nil {
		t.Fatalf("Fetch from a git:// server that never ends its advertisement = %v, want ErrTimeout: the advertisement took over its bound", err)
	}
}

// TestCountedConn: the count stops a connection once the server has sent
// its bound, and counts nothing once the advertisement is read.
func TestCountedConn(t *testing.T) {
	for _, done := range []bool{false, true} {
		a, b := net.Pipe()
		go func() {
			chunk := make([]byte, 32<<10)
			for {
				if _, err := b.Write(chunk); err != nil {
					return
				}
			}
		}()
		c := newAdvertCounter(1 << 20)
		c.done.Store(done)
		cc := countedConn{a, c}
		var n int64
		buf := make([]byte, 64<<10)
		var err error
		for n < 4<<20 && err == nil {
			var k int
			k, err = cc.Read(buf)
			n += int64(k)
		}
		b.Close()
		a.Close()
		switch {
		case !done && (!errors.Is(err, ErrTooLarge) || n > 1<<20+int64(len(buf))):
			t.Errorf("reads counted against 1 MiB: %d bytes, then %v; want ErrTooLarge within a read of the bound", n, err)
		case done && err != nil:
			t.Errorf("reads after the advertisement: %v after %d bytes, want no bound", err, n)
		}
	}
}
