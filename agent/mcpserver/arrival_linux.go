package mcpserver

import (
	"errors"
	"io"
	"net"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// stampReader reads a connection with the time the kernel received its
// bytes (SO_TIMESTAMPNS), which does not depend on when Go got round to
// reading them.
type stampReader interface {
	read(p []byte) (int, time.Time, error)
}

type kernelStamps struct {
	rc  syscall.RawConn
	oob []byte
}

// newStampReader returns nil for a connection whose kernel times cannot be
// read: then the time of the read stands in.
func newStampReader(c net.Conn) stampReader {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	return &kernelStamps{rc: rc, oob: make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))))}
}

func (k *kernelStamps) read(p []byte) (int, time.Time, error) {
	var n, oobn int
	var rerr error
	err := k.rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), p, k.oob, 0)
		return !errors.Is(rerr, unix.EAGAIN)
	})
	if err == nil && rerr != nil {
		err = &net.OpError{Op: "read", Net: "tcp", Err: rerr}
	}
	if err != nil {
		return 0, time.Time{}, err
	}
	if n == 0 && len(p) > 0 {
		return 0, time.Time{}, io.EOF
	}
	at := time.Now()
	if msgs, perr := unix.ParseSocketControlMessage(k.oob[:oobn]); perr == nil {
		for _, m := range msgs {
			if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
				ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
				at = time.Unix(ts.Unix())
			}
		}
	}
	return n, at, nil
}

// stampListener asks the kernel to note when each byte ln's connections
// receive arrived: set on the listening socket, the option is inherited by
// every connection accepted from it, so the bytes a client sends before its
// connection is accepted are noted too (set on the connection after accept,
// they are not, and their time is that of the read).
func stampListener(ln net.Listener) {
	if tl, ok := ln.(*net.TCPListener); ok {
		if rc, err := tl.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) {
				_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
			})
		}
	}
}

// canTellUnread tells whether acceptQueued can read ln's accept queue.
func canTellUnread(ln net.Listener) bool {
	_, ok := ln.(*net.TCPListener)
	return ok
}

// acceptQueued tells whether connections wait in ln's accept queue: for a
// listening socket, TCP_INFO's unacked field is the length of that queue.
func acceptQueued(ln net.Listener) bool {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return false
	}
	rc, err := tl.SyscallConn()
	if err != nil {
		return false
	}
	queued := false
	rc.Control(func(fd uintptr) {
		info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		queued = err == nil && info.Unacked > 0
	})
	return queued
}

// bytesQueued tells whether c holds received bytes not yet read.
func bytesQueued(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	queued := false
	rc.Control(func(fd uintptr) {
		n, err := unix.IoctlGetInt(int(fd), unix.SIOCINQ)
		queued = err == nil && n > 0
	})
	return queued
}
