package gitlog

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// A signed commit verifies with git's own verify-commit (gpg.format=ssh), and
// SignedCommit hands back exactly the bytes that were signed; a commit whose
// bytes differ from those never verifies.
func TestSignedCommitsVerifyWithGit(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("git verifies SSH signatures with ssh-keygen, which this machine lacks")
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(payload []byte) (string, error) {
		sig, err := sshsig.Sign(bytes.NewReader(payload), signer, sshsig.HashSHA512, "git")
		if err != nil {
			return "", err
		}
		return string(sshsig.Armor(sig)), nil
	}
	dir := filepath.Join(t.TempDir(), "v.git")
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := r.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	who := Signature{Name: "agent", Email: "agent@memvault", When: time.Unix(1_800_000_000, 0).UTC()}
	first, err := w.Commit(context.Background(), ZeroHash, []Change{{Op: Put, Path: "a", Data: []byte("a")}}, CommitInfo{Message: "one\n", Author: who, Committer: who, Sign: sign})
	if err != nil {
		t.Fatal(err)
	}
	second, err := w.Commit(context.Background(), first, []Change{{Op: Put, Path: "b", Data: []byte("b")}}, CommitInfo{Message: "two\n\nAgent: x\n", Author: who, Committer: who, Sign: sign})
	if err != nil {
		t.Fatal(err)
	}
	w.Unlock()
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}

	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	line := "memvault " + string(ssh.MarshalAuthorizedKey(signer.PublicKey()))
	if err := os.WriteFile(allowed, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, h := range []Hash{first, second} {
		cmd := exec.Command("git", "--git-dir", dir, "-c", "gpg.format=ssh", "-c", "gpg.ssh.allowedSignersFile="+allowed, "verify-commit", h.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("git verify-commit %s: %v\n%s", h, err, out)
		}
		payload, armored, err := r.SignedCommit(h)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := sshsig.Unarmor([]byte(armored))
		if err != nil {
			t.Fatalf("%s: unarmor %q: %v", h, armored, err)
		}
		if err := sshsig.Verify(bytes.NewReader(payload), sig, signer.PublicKey(), sshsig.HashSHA512, "git"); err != nil {
			t.Errorf("%s: the payload SignedCommit returns does not verify: %v", h, err)
		}
		if strings.Contains(string(payload), "gpgsig") || !strings.HasPrefix(string(payload), "tree ") {
			t.Errorf("%s: payload = %q", h, payload)
		}
	}
}

// The signature header is cut out as git cuts it; a commit with two is
// unsigned, and a header that only starts like one is kept in the payload.
func TestSplitSignature(t *testing.T) {
	for _, c := range []struct {
		raw, payload, sig string
	}{
		{"tree t\nauthor a\ngpgsig -----BEGIN\n x\n -----END\ncommitter c\n\nmsg\n gpgsig y\n", "tree t\nauthor a\ncommitter c\n\nmsg\n gpgsig y\n", "-----BEGIN\nx\n-----END"},
		{"tree t\n\nmsg\n", "tree t\n\nmsg\n", ""},
		{"tree t\ngpgsig a\ngpgsig b\n\nm\n", "tree t\ngpgsig a\ngpgsig b\n\nm\n", ""},
		{"tree t\ngpgsig-sha256 a\n\nm\n", "tree t\ngpgsig-sha256 a\n\nm\n", ""},
	} {
		p, s := splitSignature([]byte(c.raw))
		if string(p) != c.payload || s != c.sig {
			t.Errorf("splitSignature(%q) = %q, %q; want %q, %q", c.raw, p, s, c.payload, c.sig)
		}
	}
}
