package gitlog

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshServer starts an ssh server on loopback (x/crypto/ssh's, taking any
// key) that answers every exec with serve's writes on the channel, and
// returns its address, a known_hosts file naming its host key, and a client
// key file.
func sshServer(t *testing.T, ctx context.Context, serve func(ctx context.Context, w func([]byte) error)) (addr, knownHosts, keyFile string) {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	host, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	config := &ssh.ServerConfig{PublicKeyCallback: func(ssh.ConnMetadata, ssh.PublicKey) (*ssh.Permissions, error) { return nil, nil }}
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
					if nc.ChannelType() != "session" {
						nc.Reject(ssh.UnknownChannelType, "no")
						continue
					}
					ch, creqs, err := nc.Accept()
					if err != nil {
						return
					}
					go func() {
						defer ch.Close()
						for r := range creqs {
							r.Reply(r.Type == "exec", nil)
							if r.Type == "exec" {
								serve(ctx, func(b []byte) error { _, err := ch.Write(b); return err })
								return
							}
						}
					}()
				}
			}()
		}
	}()
	addr = ln.Addr().String()
	dir := t.TempDir()
	knownHosts = filepath.Join(dir, "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(addr)}, host.PublicKey())
	if err := os.WriteFile(knownHosts, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, clientPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(clientPriv, "")
	if err != nil {
		t.Fatal(err)
	}
	keyFile = filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return addr, knownHosts, keyFile
}

// TestFetchEndlessAdvertisementSSH: over ssh, whose connection go-git keeps
// to itself and encrypts, a server that never ended its ref advertisement was
// bounded only in time. A real ssh server on loopback sends one; the bytes it
// sends before the advertisement ends are counted, and the fetch is refused
// once they pass the bound, with an error that says so.
func TestFetchEndlessAdvertisementSSH(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, known, key := sshServer(t, ctx, endlessAdvert)
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AddRemote("origin", "ssh://git@"+addr+"/vault.git"); err != nil {
		t.Fatal(err)
	}
	fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
	defer fcancel()
	start := time.Now()
	_, err = r.Fetch(fctx, "origin", TransferOptions{SSHKey: key, KnownHosts: known})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "ref advertisement is over 16 MiB") {
		t.Fatalf("Fetch over ssh from a server whose advertisement never ends = %v (after %v), want ErrTooLarge: the advertisement is over 16 MiB", err, time.Since(start))
	}
}
