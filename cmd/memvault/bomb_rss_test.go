//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault/keys"
)

// bombBytes is what the zlib bomb's header claims: 256 MiB, in a few hundred
// KiB of zlib. A command that inflated it whole would stand more than twice
// rssSlack above the ordinary run.
const bombBytes = 256 << 20

// rssSlack is how much more a command may take, at its peak, on a vault whose
// history holds the bomb than on an ordinary one.
const rssSlack = 100 << 20

// TestZlibBombRSS checks the memory bound from the outside: memvault, run
// as a child process, syncs with a remote whose history holds a 256 MiB zlib
// bomb (refused, then merged past with --skip-refused), and views, cats and
// fscks a vault whose own history holds it, each at a peak resident size
// (getrusage's ru_maxrss) within 100 MiB of the same command on an ordinary
// vault. The bomb is written by hand with zlib, never by memvault.
func TestZlibBombRSS(t *testing.T) {
	if raceEnabled {
		// Under the race detector the child's peak RSS is mostly the
		// detector's shadow memory, and each command takes ten times as
		// long: the figure means nothing there. It runs in the short suite.
		t.Skip("peak RSS of a race-instrumented memvault measures the race detector, not memvault")
	}
	child := newRSSChild(t)
	root := child.root
	run := child.run
	must := func(dir, stdin string, args ...string) {
		t.Helper()
		if out, code, _ := run(dir, stdin, args...); code != 0 {
			t.Fatalf("memvault %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	git := child.git

	// An ordinary vault a, pushed to two remotes; b and c clones of them.
	a := filepath.Join(root, "a.git")
	must(a, "", "init", "--plain") // the bomb is put at a plain name with git
	for i, p := range []string{"/memories/a.md", "/memories/notes/b.md", "/memories/notes/c.md"} {
		must(a, `{"command":"create","path":"`+p+`","file_text":"`+strings.Repeat("memory ", 100*(i+1))+`"}`, "tool")
	}
	plainRemote := gittest.Bare(t, root, "plain")
	bombRemote := gittest.Bare(t, root, "bomb")
	for name, url := range map[string]string{"plain": plainRemote, "bomb": bombRemote} {
		must(a, "", "remote", "add", name, url)
		must(a, "", "push", name)
	}
	b := filepath.Join(root, "b.git")
	must(b, "", "clone", plainRemote, b)
	c := filepath.Join(root, "c.git")
	must(c, "", "clone", bombRemote, c)

	// An ordinary change on the plain remote; the bomb, by hand, on the other.
	must(a, `{"command":"create","path":"/memories/d.md","file_text":"d"}`, "tool")
	must(a, "", "push", "plain")
	// The bomb's commits are signed with the vault's own signing key (a writer
	// gone bad), so that the check that meets it is the memory bound, not the
	// signature check.
	signing := keys.SigningKeyFile(filepath.Join(root, "identity"))
	h := gittest.Damage(t, bombRemote)
	h.SigningKey = signing
	bomb := h.Bomb([]byte("age-encryption.org/v1\n"), bombBytes)
	if fi, err := os.Stat(filepath.Join(bombRemote, "objects", bomb[:2], bomb[2:])); err != nil || fi.Size() > 2<<20 {
		t.Fatalf("the bomb's loose object: %v, %v; want well under 2 MiB", fi, err)
	}
	head := h.Head()
	h.Push(h.Commit(h.Set(head+"^{tree}", "memories/bomb.md", gittest.TreeEntry{Mode: "100644", Hash: bomb}), "bomb\n", head))

	type figure struct {
		what        string
		plain, bomb int64
	}
	var figs []figure
	measure := func(what, stdin string, plainDir, bombDir string, plainWant, bombWant int, args ...string) {
		t.Helper()
		out, code, p := run(plainDir, stdin, args...)
		if code != plainWant {
			t.Fatalf("%s on the ordinary vault: exit %d, want %d\n%s", what, code, plainWant, out)
		}
		out, code, q := run(bombDir, stdin, args...)
		if code != bombWant {
			t.Fatalf("%s with the bomb: exit %d, want %d\n%s", what, code, bombWant, out)
		}
		figs = append(figs, figure{what, p, q})
		if q-p > rssSlack {
			t.Errorf("%s: peak RSS %d MiB with the bomb, %d MiB without: more than 100 MiB above", what, q>>20, p>>20)
		}
	}
	// Sync: refused, then merged past; the plain clone fast-forwards.
	measure("sync (refused)", "", b, c, 0, 2, "sync")
	git("--git-dir", b, "update-ref", "refs/heads/main", git("--git-dir", b, "rev-parse", "main~1"))
	measure("sync --skip-refused", "", b, c, 0, 0, "sync", "--skip-refused")

	// A vault whose own main holds the bomb, put there by hand.
	d := filepath.Join(root, "d.git")
	must(d, "", "clone", plainRemote, d)
	hd := gittest.Damage(t, d)
	hd.SigningKey = signing
	dbomb := hd.Bomb([]byte("age-encryption.org/v1\n"), bombBytes)
	dhead := hd.Head()
	hd.Push(hd.Commit(hd.Set(dhead+"^{tree}", "memories/bomb.md", gittest.TreeEntry{Mode: "100644", Hash: dbomb}), "bomb\n", dhead))
	measure("tool view /memories", `{"command":"view","path":"/memories"}`, b, d, 0, 0, "tool")
	measure("cat /memories/a.md", "", b, d, 0, 0, "cat", "/memories/a.md")
	measure("cat /memories/bomb.md", "", b, d, 1, 2, "cat", "/memories/bomb.md")
	measure("fsck", "", b, d, 0, 1, "fsck")
	measure("fsck --repair", "", b, d, 0, 0, "fsck", "--repair")
	for _, f := range figs {
		t.Logf("%-24s peak RSS ordinary %4d MiB, with the bomb %4d MiB (%+d MiB)", f.what, f.plain>>20, f.bomb>>20, (f.bomb-f.plain)>>20)
	}
}
