package gittest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// DaemonServer is git daemon serving one repository on a fixed loopback port,
// which a test can stop (the remote goes away: connections are refused) and
// start again at the same URL.
type DaemonServer struct {
	URL string // git://127.0.0.1:PORT/vault.git

	t    testing.TB
	root string
	addr string
	log  string

	mu  sync.Mutex
	cmd *exec.Cmd // nil while stopped
}

// NewDaemon starts a DaemonServer serving a new empty repository. It is
// stopped at cleanup.
func NewDaemon(t testing.TB) *DaemonServer {
	t.Helper()
	d := &DaemonServer{t: t, root: t.TempDir(), log: filepath.Join(t.TempDir(), "daemon.log")}
	Bare(t, d.root, "vault")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d.addr = ln.Addr().String()
	ln.Close()
	d.URL = "git://" + d.addr + "/vault.git"
	d.Start()
	t.Cleanup(d.Stop)
	return d
}

// Start starts the daemon on its port, if it is stopped, and returns once it
// takes connections.
func (d *DaemonServer) Start() {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cmd != nil {
		return
	}
	_, port, _ := net.SplitHostPort(d.addr)
	cmd := exec.Command(Git(d.t), "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr",
		"--listen=127.0.0.1", "--port="+port, "--base-path="+d.root, d.root)
	// A file, not a pipe, and a process group of its own: see Daemon.
	logf, err := os.OpenFile(d.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		d.t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		d.t.Fatalf("git daemon: %v", err)
	}
	d.cmd = cmd
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.Dial("tcp", d.addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(d.log)
			d.t.Fatalf("git daemon did not start on %s: %v\n%s", d.addr, err, log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop kills the daemon and every process it started: connections to its
// port are refused until Start.
func (d *DaemonServer) Stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cmd == nil {
		return
	}
	killGroup(d.cmd)
	d.cmd.Wait()
	d.cmd = nil
}
