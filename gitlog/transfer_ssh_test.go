package gitlog

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshd is an ssh server on loopback that takes only the client keys it is
// told to, records the keys it was offered, and answers git's exec with an
// empty repository's advertisement.
type sshd struct {
	addr string
	host ssh.PublicKey
	mu   sync.Mutex
	take map[string]bool // authorized keys, marshalled
	seen []string        // the keys offered, marshalled, in order
}

func newSSHD(t *testing.T, take ...ssh.PublicKey) *sshd {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	host, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	d := &sshd{host: host.PublicKey(), take: map[string]bool{}}
	for _, k := range take {
		d.take[string(k.Marshal())] = true
	}
	config := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.seen = append(d.seen, string(k.Marshal()))
		if d.take[string(k.Marshal())] {
			return nil, nil
		}
		return nil, errors.New("not authorized")
	}}
	config.AddHostKey(host)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, chans, reqs, err := ssh.NewServerConn(c, config)
				if err != nil {
					return
				}
				go ssh.DiscardRequests(reqs)
				for nc := range chans {
					ch, creqs, err := nc.Accept()
					if err != nil {
						return
					}
					go func() {
						defer ch.Close()
						for r := range creqs {
							r.Reply(r.Type == "exec", nil)
							if r.Type == "exec" {
								// An empty repository's advertisement; then, as
								// git upload-pack does, wait for the client's end.
								ch.Write([]byte("0000"))
								io.Copy(io.Discard, ch)
								ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{0}))
								return
							}
						}
					}()
				}
			}()
		}
	}()
	d.addr = ln.Addr().String()
	return d
}

// offered tells whether the server was offered k.
func (d *sshd) offered(k ssh.PublicKey) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.seen {
		if s == string(k.Marshal()) {
			return true
		}
	}
	return false
}

// knownHostsFile writes a known_hosts file naming addr with key.
func knownHostsFile(t *testing.T, path, addr string, key ssh.PublicKey) {
	t.Helper()
	line := knownhosts.Line([]string{knownhosts.Normalize(addr)}, key)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// clientKey makes an ed25519 key, writes it to path (with passphrase, when
// not empty) and returns it.
func clientKey(t *testing.T, path, passphrase string) (ed25519.PrivateKey, ssh.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(priv, "")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return priv, sp
}

// startAgent serves an ssh agent holding keys at a socket in dir and points
// SSH_AUTH_SOCK at it.
func startAgent(t *testing.T, dir string, keys ...ed25519.PrivateKey) {
	t.Helper()
	kr := agent.NewKeyring()
	for _, k := range keys {
		if err := kr.Add(agent.AddedKey{PrivateKey: k}); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(dir, "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix socket for an ssh agent here: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); agent.ServeAgent(kr, c) }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
}

// TestSSHFailuresSayWhatTheyAre: an ssh fetch that fails says why, as ssh
// would, with a sentinel for each: no key to offer, the keys refused, a host
// known_hosts does not name, no known_hosts at all, and a host key that
// changed (a possible man in the middle, said loudly). They all once read
// "remote refused authentication". And without an agent the default key
// files of ~/.ssh are offered, as git (through ssh) offers them: they were
// not tried at all.
func TestSSHFailuresSayWhatTheyAre(t *testing.T) {
	fetch := func(t *testing.T, d *sshd, a TransferOptions) error {
		t.Helper()
		r, err := Init(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.AddRemote("origin", "ssh://git@"+d.addr+"/vault.git"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err = r.Fetch(ctx, "origin", a)
		return err
	}
	// Each case has a home of its own and no agent unless it starts one.
	setup := func(t *testing.T) (home string) {
		home = t.TempDir()
		t.Setenv("HOME", home)
		t.Setenv("SSH_AUTH_SOCK", "")
		t.Setenv("SSH_KNOWN_HOSTS", "")
		return home
	}
	check := func(t *testing.T, err, want error, says ...string) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Fatalf("Fetch = %v, want %v", err, want)
		}
		for _, s := range says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("Fetch = %v, want it to say %q", err, s)
			}
		}
	}

	t.Run("no agent and no key", func(t *testing.T) {
		home := setup(t)
		d := newSSHD(t)
		knownHostsFile(t, filepath.Join(home, ".ssh", "known_hosts"), d.addr, d.host)
		check(t, fetch(t, d, TransferOptions{}), ErrAuth, "no key to offer", "no ssh agent (SSH_AUTH_SOCK is not set)", "no key in ~/.ssh")
	})
	t.Run("a default key that needs its passphrase", func(t *testing.T) {
		home := setup(t)
		clientKey(t, filepath.Join(home, ".ssh", "id_ed25519"), "secret")
		d := newSSHD(t)
		knownHostsFile(t, filepath.Join(home, ".ssh", "known_hosts"), d.addr, d.host)
		check(t, fetch(t, d, TransferOptions{}), ErrAuth, "no key to offer", "~/.ssh/id_ed25519 needs its passphrase")
	})
	t.Run("the default key file, with no agent", func(t *testing.T) {
		home := setup(t)
		_, pub := clientKey(t, filepath.Join(home, ".ssh", "id_ed25519"), "")
		d := newSSHD(t, pub)
		knownHostsFile(t, filepath.Join(home, ".ssh", "known_hosts"), d.addr, d.host)
		if err := fetch(t, d, TransferOptions{}); err != nil {
			t.Fatalf("Fetch with ~/.ssh/id_ed25519 the server takes = %v, want the empty remote fetched", err)
		}
		if !d.offered(pub) {
			t.Error("the server was not offered ~/.ssh/id_ed25519")
		}
	})
	t.Run("the agent's key, then the files", func(t *testing.T) {
		home := setup(t)
		inAgent, agentPub := clientKey(t, filepath.Join(t.TempDir(), "k"), "")
		startAgent(t, t.TempDir(), inAgent)
		_, filePub := clientKey(t, filepath.Join(home, ".ssh", "id_rsa"), "")
		d := newSSHD(t, filePub)
		knownHostsFile(t, filepath.Join(home, ".ssh", "known_hosts"), d.addr, d.host)
		if err := fetch(t, d, TransferOptions{}); err != nil {
			t.Fatalf("Fetch with a key the agent holds and ~/.ssh/id_rsa = %v, want the empty remote fetched", err)
		}
		if !d.offered(agentPub) || !d.offered(filePub) {
			t.Error("the server was not offered both the agent's key and ~/.ssh/id_rsa")
		}
	})
	t.Run("every key refused", func(t *testing.T) {
		home := setup(t)
		clientKey(t, filepath.Join(home, ".ssh", "id_ed25519"), "")
		d := newSSHD(t)
		knownHostsFile(t, filepath.Join(home, ".ssh", "known_hosts"), d.addr, d.host)
		check(t, fetch(t, d, TransferOptions{}), ErrAuth, "refused the key(s) offered (~/.ssh/id_ed25519)")
	})
	t.Run("a host known_hosts does not name", func(t *testing.T) {
		home := setup(t)
		_, pub := clientKey(t, filepath.Join(home, ".ssh", "id_ed25519"), "")
		d := newSSHD(t, pub)
		knownHostsFile(t, filepath.Join(home, ".ssh", "known_hosts"), "192.0.2.1:22", d.host)
		err := fetch(t, d, TransferOptions{})
		check(t, err, ErrUnknownHost, "is not in known_hosts (~/.ssh/known_hosts", "nothing was sent")
		if errors.Is(err, ErrAuth) || d.offered(pub) {
			t.Errorf("Fetch from an unknown host = %v, offered the key: %v; want no key offered and no ErrAuth", err, d.offered(pub))
		}
	})
	t.Run("no known_hosts file", func(t *testing.T) {
		home := setup(t)
		clientKey(t, filepath.Join(home, ".ssh", "id_ed25519"), "")
		t.Setenv("SSH_KNOWN_HOSTS", filepath.Join(home, ".ssh", "known_hosts"))
		check(t, fetch(t, newSSHD(t), TransferOptions{}), ErrUnknownHost, "no known_hosts file (~/.ssh/known_hosts)")
	})
	t.Run("a host key that changed", func(t *testing.T) {
		home := setup(t)
		_, pub := clientKey(t, filepath.Join(home, ".ssh", "id_ed25519"), "")
		d := newSSHD(t, pub)
		_, other := clientKey(t, filepath.Join(t.TempDir(), "other"), "")
		knownHostsFile(t, filepath.Join(home, ".ssh", "known_hosts"), d.addr, other)
		err := fetch(t, d, TransferOptions{})
		check(t, err, ErrHostKeyChanged, "WARNING: THE HOST KEY OF "+d.addr+" HAS CHANGED", "~/.ssh/known_hosts:1", "man in the middle")
		if d.offered(pub) {
			t.Error("the key was offered to a host whose key changed")
		}
	})
	t.Run("a named key and known_hosts file", func(t *testing.T) {
		setup(t)
		dir := t.TempDir()
		key := filepath.Join(dir, "deploy")
		_, pub := clientKey(t, key, "")
		d := newSSHD(t)
		known := filepath.Join(dir, "known")
		knownHostsFile(t, known, d.addr, d.host)
		check(t, fetch(t, d, TransferOptions{SSHKey: key, KnownHosts: known}), ErrAuth, "refused the key(s) offered ("+key+")")
		if !d.offered(pub) {
			t.Error("the named key was not offered")
		}
	})
}

// TestSSHNoKeyMaterialInErrors: what an ssh failure says names key files,
// never what is in them.
func TestSSHNoKeyMaterialInErrors(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", "")
	t.Setenv("SSH_KNOWN_HOSTS", "")
	path := filepath.Join(home, ".ssh", "id_ed25519")
	clientKey(t, path, "")
	pemBytes, _ := os.ReadFile(path)
	d := newSSHD(t)
	knownHostsFile(t, filepath.Join(home, ".ssh", "known_hosts"), d.addr, d.host)
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AddRemote("origin", "ssh://git@"+d.addr+"/vault.git"); err != nil {
		t.Fatal(err)
	}
	_, err = r.Fetch(context.Background(), "origin", TransferOptions{})
	body := bytes.Split(pemBytes, []byte("\n"))[1]
	if err == nil || strings.Contains(err.Error(), string(body[:20])) {
		t.Errorf("Fetch = %v, want an error that quotes nothing of the key", err)
	}
}
