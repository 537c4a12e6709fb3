package mcpserver

import (
	"net"
	"testing"
	"time"
)

// TestUnreadSeen: the lineup learns of a connection waiting in the accept
// queue, and of bytes waiting on a connection, before anything reads them,
// and reads the kernel's time of arrival of the bytes it reads, bytes sent
// before the connection was accepted included.
func TestUnreadSeen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	stampListener(ln)
	// The kernel turns on its receive times a moment after the first socket
	// asks (a deferred static key): a server asks once, as it starts.
	time.Sleep(100 * time.Millisecond)
	if acceptQueued(ln) {
		t.Fatal("acceptQueued with no connection = true")
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); !cond(); {
			if time.Now().After(end) {
				t.Fatalf("%s: not seen within 5s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor("a connection in the accept queue", func() bool { return acceptQueued(ln) })
	sent := time.Now()
	if _, err := c.Write([]byte("POST / HTTP/1.1\r\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if acceptQueued(ln) {
		t.Error("acceptQueued after the accept = true")
	}
	waitFor("bytes waiting on the connection", func() bool { return bytesQueued(s) })
	time.Sleep(20 * time.Millisecond)
	stamps := newStampReader(s)
	if stamps == nil {
		t.Fatal("newStampReader = nil on a TCP connection")
	}
	buf := make([]byte, 64)
	n, at, err := stamps.read(buf)
	if err != nil || n == 0 {
		t.Fatalf("read = %d, %v", n, err)
	}
	if at.Before(sent.Add(-time.Millisecond)) || at.After(sent.Add(15*time.Millisecond)) {
		t.Errorf("bytes sent at %v arrived, the kernel says, at %v: want the time they were sent, not that of the accept or the read (20ms and more later)", sent, at)
	}
	if bytesQueued(s) {
		t.Error("bytesQueued after they were read = true")
	}
}
