package vault_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/keys"
	"github.com/memvault/memvault/vault/vaulttest"
)

// sharedWithMallory makes alice's vault (plain or sealed) with two versions of
// notes.md, pushed to a bare remote, and mallory added as a reader and a
// writer; mallory's identity and its signing key are in dir. It returns
// alice, the remote's path and the commit mallory last saw.
func sharedWithMallory(t *testing.T, dir string, plain bool) (alice *vault.Vault, remote, malloryID string, seen string) {
	t.Helper()
	remote = gittest.Bare(t, dir, "remote")
	if plain {
		alice, _ = vaulttest.NewPlainAt(t, filepath.Join(dir, "alice"))
	} else {
		alice, _ = vaulttest.NewAt(t, filepath.Join(dir, "alice"))
	}
	write(t, alice, "/memories/notes.md", "version one\n")
	write(t, alice, "/memories/notes.md", "version two\n")
	malloryID = filepath.Join(dir, "mallory")
	info, err := keys.CreateIdentity(malloryID, keys.IdentityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	signer, err := keys.LoadSigner(malloryID, keys.Passphrases{}) // makes mallory.signing
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Add: []string{info.Recipients[0].Key}, Comment: "mallory"}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.ChangeWriters(ctx, vault.Meta{}, []keys.Writer{keys.WriterOf(signer.PublicKey(), "mallory")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := alice.AddRemote("origin", remote); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Sync(ctx, vault.SyncOptions{Host: "alice"}); err != nil {
		t.Fatal(err)
	}
	seen, err = alice.Head()
	if err != nil {
		t.Fatal(err)
	}
	return alice, remote, malloryID, seen
}

// removeMallory removes mallory as a writer and a reader, in two commits of
// alice's.
func removeMallory(t *testing.T, alice *vault.Vault, malloryID string) {
	t.Helper()
	signer, err := keys.LoadSigner(malloryID, keys.Passphrases{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.ChangeWriters(ctx, vault.Meta{}, nil, []string{keys.WriterOf(signer.PublicKey(), "").Fingerprint}); err != nil {
		t.Fatalf("remove mallory as a writer: %v", err)
	}
	info, err := keys.ReadIdentity(malloryID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.ChangeRecipients(ctx, vault.Meta{}, vault.RecipientChange{Remove: []string{info.Recipients[0].Key}}); err != nil {
		t.Fatalf("remove mallory as a reader: %v", err)
	}
}

// mallorysCommit crafts, in the remote itself with git's plumbing, the commit
// mallory signs with her real key after her removal: its parent is parent,
// the last commit she saw, where she was still a writer, and its tree is
// parent's with notes.md put back to its first version. It is never written
// by memvault. It returns the commit.
func mallorysCommit(t *testing.T, remote, malloryID, parent string) string {
	t.Helper()
	gitBin := gittest.Git(t)
	git := func(stdin string, args ...string) string {
		cmd := exec.Command(gitBin, append([]string{"--git-dir", remote, "-c", "gpg.format=ssh",
			"-c", "user.signingkey=" + keys.SigningKeyFile(malloryID), "-c", "user.name=mallory", "-c", "user.email=m@example"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	memoryEntry := func(rev string) string {
		for _, line := range strings.Split(git("", "ls-tree", "-r", rev), "\n") {
			if strings.Contains(line, "\tmemories/") {
				return line
			}
		}
		t.Fatalf("no memory file in %s", rev)
		return ""
	}
	now := memoryEntry(parent)
	// The first version: the commit that made notes.md, the second of the history.
	first := strings.Fields(git("", "rev-list", "--reverse", parent))[1]
	old := strings.Fields(memoryEntry(first))[2]
	path := now[strings.IndexByte(now, '\t')+1:]
	var lines []string
	for _, line := range strings.Split(git("", "ls-tree", "-r", parent), "\n") {
		if strings.HasSuffix(line, "\t"+path) {
			line = "100644 blob " + old + "\t" + path
		}
		lines = append(lines, line)
	}
	// mktree takes one level: rebuild the trees with git's index instead.
	index := filepath.Join(t.TempDir(), "index")
	env := append(os.Environ(), "GIT_INDEX_FILE="+index)
	update := exec.Command(gitBin, "--git-dir", remote, "update-index", "--add", "--index-info")
	update.Env, update.Stdin = env, strings.NewReader(strings.Join(lines, "\n")+"\n")
	if out, err := update.CombinedOutput(); err != nil {
		t.Fatalf("git update-index: %v\n%s", err, out)
	}
	writeTree := exec.Command(gitBin, "--git-dir", remote, "write-tree")
	writeTree.Env = env
	tree, err := writeTree.Output()
	if err != nil {
		t.Fatal(err)
	}
	return git("", "commit-tree", "-S", "-p", parent, "-m", "memvault", strings.TrimSpace(string(tree)))
}

// setRemoteMain points the remote's main at c, as its host (or a writer with
// push rights) can.
func setRemoteMain(t *testing.T, remote, c string) {
	t.Helper()
	if out, err := exec.Command(gittest.Git(t), "--git-dir", remote, "update-ref", "refs/heads/main", c).CombinedOutput(); err != nil {
		t.Fatalf("git update-ref: %v\n%s", err, out)
	}
}

// TestRemovedWriterStillWrites: mallory, removed as a reader and a writer,
// signs with her real key a commit whose parent is the last commit from
// before her removal (where she was a writer), and puts it on the remote.
// Alice's sync once said "the remote went backwards", admitted it (the signer
// "is a writer in each of its parents"), merged the planted change and pushed
// it. Now:
//
//   - when the remote went back to put it there, sync refuses the fork, keeps
//     refusing it, and leaves main and the remote-tracking ref alone;
//   - even a fork a person accepted, or a commit that arrives with no fork
//     (alice had not pushed her removal yet), is refused: its signer was
//     removed in the state alice holds, and no current writer vouched for it;
//   - a person who looked may still take it (AcceptRemoved).
func TestRemovedWriterStillWrites(t *testing.T) {
	for _, format := range []struct {
		name  string
		plain bool
	}{{"plain", true}, {"sealed", false}} {
		t.Run(format.name+"/fork", func(t *testing.T) {
			dir := t.TempDir()
			alice, remote, malloryID, seen := sharedWithMallory(t, dir, format.plain)
			removeMallory(t, alice, malloryID)
			if _, err := alice.Sync(ctx, vault.SyncOptions{Host: "alice"}); err != nil {
				t.Fatal(err)
			}
			head, _ := alice.Head()
			setRemoteMain(t, remote, mallorysCommit(t, remote, malloryID, seen))
			for try := 1; try <= 2; try++ {
				res, err := alice.Sync(ctx, vault.SyncOptions{Host: "alice"})
				if !errors.Is(err, vault.ErrFork) {
					t.Fatalf("sync %d with a remote that went back and grew mallory's commit = %+v, %v; want ErrFork", try, res, err)
				}
				if now, _ := alice.Head(); now != head {
					t.Fatalf("sync %d refused the fork and moved main from %s to %s", try, head, now)
				}
			}
			if got, err := read(t, alice, "/memories/notes.md"); err != nil || got != "version two\n" {
				t.Errorf("after the refused fork notes.md = %q, %v", got, err)
			}
			_, err := alice.Sync(ctx, vault.SyncOptions{Host: "alice", AcceptFork: true})
			if !errors.Is(err, vault.ErrRemovedWriter) {
				t.Fatalf("sync accepting the fork = %v; want ErrRemovedWriter: mallory's commit is still hers", err)
			}
			if now, _ := alice.Head(); now != head {
				t.Fatalf("the refused commit moved main")
			}
		})
		t.Run(format.name+"/no fork", func(t *testing.T) {
			dir := t.TempDir()
			alice, remote, malloryID, seen := sharedWithMallory(t, dir, format.plain)
			removeMallory(t, alice, malloryID) // not pushed yet
			head, _ := alice.Head()
			setRemoteMain(t, remote, mallorysCommit(t, remote, malloryID, seen))
			_, err := alice.Sync(ctx, vault.SyncOptions{Host: "alice"})
			if !errors.Is(err, vault.ErrRemovedWriter) || !strings.Contains(err.Error(), "mallory") {
				t.Fatalf("sync with mallory's commit on top of what alice saw = %v; want ErrRemovedWriter naming mallory", err)
			}
			if now, _ := alice.Head(); now != head {
				t.Fatalf("the refused commit moved main")
			}
			if got, err := read(t, alice, "/memories/notes.md"); err != nil || got != "version two\n" {
				t.Errorf("after the refusal notes.md = %q, %v", got, err)
			}
			if _, err := alice.Sync(ctx, vault.SyncOptions{Host: "alice", AcceptRemoved: true}); err != nil {
				t.Fatalf("sync taking mallory's commit after a person looked: %v", err)
			}
		})
	}
}
