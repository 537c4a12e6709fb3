//go:build !linux

package mcpserver

import (
	"net"
	"time"
)

// stampReader reads a connection with the time its bytes arrived. Outside
// Linux there is none: the time of the read stands in.
type stampReader interface {
	read(p []byte) (int, time.Time, error)
}

func newStampReader(net.Conn) stampReader { return nil }

func stampListener(net.Listener) {}

func canTellUnread(net.Listener) bool { return false }

func acceptQueued(net.Listener) bool { return false }

func bytesQueued(net.Conn) bool { return false }
