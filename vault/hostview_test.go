package vault_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestWhatTheHostSees plays the git host of a sealed vault: with plain git
// on the remote alone (ls-tree, cat-file, log, object sizes) it lists every
// fact it can learn, and checks each item of docs/what-the-host-sees.md that
// says what it cannot: that list is this test's.
func TestWhatTheHostSees(t *testing.T) {
	dir := t.TempDir()
	v, _ := vaulttest.NewSealedAt(t, dir)
	meta := vault.Meta{Command: "create", ToolUseID: "toolu_hostview", Agent: "agent-hostview", Session: "session-hostview"}
	for p, text := range map[string]string{
		"/memories/a.md":                                "tiny\n",
		"/memories/passwords.md":                        strings.Repeat("twelve bytes", 100),
		"/memories/projects/divorce-lawyer-contacts.md": "contacts\n",
	} {
		if err := v.Update(ctx, meta, func(tx *vault.Tx) error { return tx.WriteFile(ctx, p, []byte(text)) }); err != nil {
			t.Fatal(err)
		}
	}
	url := gittest.Bare(t, dir, "remote")
	if err := v.AddRemote("origin", url); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Sync(ctx, vault.SyncOptions{Host: "test"}); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		out, err := exec.Command(gittest.Git(t), append([]string{"--git-dir", url}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}

	// Names: only a stored name's length bucket (24, 48, 96 or 143 bytes of
	// name: base32 of a 16-byte tag and the padded name).
	bucketLen := map[int]bool{}
	for _, b := range []int{24, 48, 96, 143} {
		bucketLen[(16+b)*8/5+btoi((16+b)*8%5 != 0)] = true
	}
	for line := range strings.SplitSeq(strings.TrimSpace(git("ls-tree", "-r", "-t", "main", "memories")), "\n") {
		path := line[strings.IndexByte(line, '\t')+1:]
		if path == "memories" {
			continue
		}
		name := filepath.Base(path)
		if !bucketLen[len(name)] {
			t.Errorf("a stored name of %d letters tells the host more than its bucket", len(name))
		}
		if strings.Contains(name, ".md") || strings.Contains(name, "password") || strings.Contains(name, "lawyer") {
			t.Errorf("the host reads a name: %q", name)
		}
	}
	// Sizes: blobs under 1 KiB of plaintext all look alike.
	sizes := map[string]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(git("ls-tree", "-r", "-l", "main", "memories")), "\n") {
		sizes[strings.Fields(line)[3]] = true
	}
	if len(sizes) != 2 {
		t.Errorf("blob sizes %v: want two (the two files under 1 KiB alike, and the larger one)", sizes)
	}
	// Commits: one constant subject and author, dates in UTC (no time zone
	// of the writer's), a sealed trailer whose length is a bucket's, and a
	// signature that names the writer's key.
	trailerLens := map[int]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(git("log", "--format=%an <%ae>|%ai|%s", "main")), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "|")
		if f[0] != "memvault <memvault@memvault>" || f[2] != "memvault" {
			t.Errorf("a commit tells the host its author or subject: %q", line)
		}
		if !strings.HasSuffix(f[1], "+0000") {
			t.Errorf("a commit date %q carries a time zone other than UTC", f[1])
		}
	}
	for _, c := range strings.Fields(git("rev-list", "main")) {
		body := git("cat-file", "commit", c)
		if !strings.Contains(body, "-----BEGIN SSH SIGNATURE-----") {
			t.Errorf("commit %s is not signed", c)
		}
		if m := regexp.MustCompile(`Memvault-Sealed: (\S+)`).FindStringSubmatch(body); m != nil {
			trailerLens[len(m[1])] = true
		}
		for _, leak := range []string{"toolu_hostview", "agent-hostview", "session-hostview", "/memories"} {
			if strings.Contains(body, leak) {
				t.Errorf("commit %s tells the host %q", c, leak)
			}
		}
	}
	if len(trailerLens) > 2 {
		t.Errorf("sealed messages of %d lengths (%v): want a bucket or two for these short messages", len(trailerLens), trailerLens)
	}
	// What the host does read: the members' public keys and names, the
	// format, and that the key file and keychain exist.
	meta2 := git("ls-tree", "--name-only", "main", ".memvault/")
	for _, f := range []string{".memvault/format", ".memvault/key", ".memvault/keychain", ".memvault/recipients", ".memvault/writers"} {
		if !strings.Contains(meta2, f) {
			t.Errorf("the host sees no %s: the list of what it sees is out of date", f)
		}
	}
	if f := strings.TrimSpace(git("cat-file", "blob", "main:.memvault/format")); f != "3" {
		t.Errorf("format %q", f)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
