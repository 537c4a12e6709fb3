package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestCloneExpectWriter: a new clone trusts the writers it first sees; with
// --expect-writer it takes only the writers named. The remote's writers file
// gains mallory's key in a commit signed by a writer gone bad (built with git
// plumbing): a clone naming only the victim's own writer is refused with
// nothing left behind, mallory marked; naming both clones; naming nothing
// clones and lists them (trust on first use, as before).
func TestCloneExpectWriter(t *testing.T) {
	v := newVictim(t)
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	spub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	mallory := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(spub))) + " mallory@host"
	malloryFP := ssh.FingerprintSHA256(spub)
	listed := v.must(t, "", "writers")
	own := strings.Fields(listed)[0]
	if !strings.HasPrefix(own, "SHA256:") {
		t.Fatalf("memvault writers printed %q, want a fingerprint first", listed)
	}

	h := v.collaborator(t, v.url)
	head := h.Head()
	writers := h.Git("cat-file", "blob", head+":.memvault/writers") + "\n" + mallory + "\n"
	tree := h.Set(head+"^{tree}", ".memvault/writers", gittest.TreeEntry{Mode: "100644", Hash: h.Blob([]byte(writers))})
	h.Push(h.Commit(tree, "writers\n", head))

	dir := filepath.Join(t.TempDir(), "c.git")
	out, code, stderr := v.cli("", "clone", "--expect-writer", own, v.url, dir)
	if code != exitSetup || !strings.Contains(stderr, "1 writer(s) you did not name") {
		t.Fatalf("clone --expect-writer OWN = status %d, stderr %q; want status %d naming the writer not named", code, stderr, exitSetup)
	}
	if !strings.Contains(out, malloryFP+"  mallory@host  (NOT EXPECTED)") || !strings.Contains(out, own+" ") || !strings.Contains(out, "(expected)") {
		t.Errorf("clone printed\n%s\nwant both writers, mallory's marked NOT EXPECTED", out)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused clone left %s: %v", dir, err)
	}

	if out, code, stderr = v.cli("", "clone", "--expect-writer", own, "--expect-writer", mallory, v.url, dir); code != exitOK {
		t.Fatalf("clone naming both writers = status %d\n%s%s", code, out, stderr)
	}
	dir2 := filepath.Join(t.TempDir(), "d.git")
	if out, code, stderr = v.cli("", "clone", v.url, dir2); code != exitOK || !strings.Contains(out, malloryFP) {
		t.Fatalf("clone with no --expect-writer = status %d, want 0 listing mallory's fingerprint\n%s%s", code, out, stderr)
	}
	if _, code, stderr = v.cli("", "clone", "--expect-writer", "nonsense", v.url, filepath.Join(t.TempDir(), "e.git")); code != exitSetup || !strings.Contains(stderr, "neither a fingerprint") {
		t.Errorf("clone --expect-writer nonsense = status %d, stderr %q; want a usage error", code, stderr)
	}
}
