package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

// After the sessions, the demo shows what the transcript cannot: one
// commit's decrypted diff, one undo, and what the disk holds.

// demoFind returns the newest record of command on path.
func demoFind(recs []vault.Record, command, path string) (vault.Record, error) {
	for _, r := range recs {
		if r.Command == command && r.Path == path {
			return r, nil
		}
	}
	return vault.Record{}, fmt.Errorf("demo: no %s of %s in the history", command, path)
}

// demoDiff shows the commit in which the agent added Maya's review wish to
// her profile, as memvault show prints it.
func demoDiff(ctx context.Context, v *vault.Vault, recs []vault.Record, p demoPrinter) error {
	r, err := demoFind(recs, "str_replace", profilePath)
	if err != nil {
		return err
	}
	p.section("One diff: memvault show " + shortHash(r.Commit))
	p.printf("%s\n\n", wrap("Every commit says which tool call made it, and its diff is decrypted in memory, "+
		"never on disk. Here the agent noted a wish from Maya's review:", demoWidth, ""))
	ch, err := v.Show(ctx, r.Commit)
	if err != nil {
		return err
	}
	return writeChange(p.out, ch, p.st)
}

// demoUndo reverts the agent's delete of its scratch note, as memvault revert
// does: a new commit, itself undoable, and the file is back.
func demoUndo(ctx context.Context, v *vault.Vault, recs []vault.Record, p demoPrinter) error {
	r, err := demoFind(recs, "delete", scratchPath)
	if err != nil {
		return err
	}
	p.section("One undo: memvault revert " + shortHash(r.Commit))
	p.printf("%s\n\n", wrap("Say Maya still needed the curl commands the agent deleted on Thursday. "+
		"Undo that one commit; everything since stays:", demoWidth, ""))
	res, err := v.Revert(ctx, undoMeta, r.Commit)
	if err != nil {
		return err
	}
	if err := writeUndoResult(p.out, "revert", "", res, false, p.st); err != nil {
		return err
	}
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return err
	}
	text, err := snap.ReadFile(ctx, scratchPath)
	if err != nil {
		return err
	}
	p.printf("\n$ memvault cat %s\n%s", scratchPath, escape.Text(string(text)))
	p.printf("\n%s\n", wrap("History is never rewritten: the revert is one more commit, and 'memvault revert "+
		shortHash(res.Commit)+"' would undo it.", demoWidth, ""))
	return nil
}

// demoDisk shows what the disk holds: a bare git repository with no working
// tree, and, when git is installed, git's own view of it: sealed names, a
// sealed message, and a memory file's blob, age ciphertext.
func demoDisk(ctx context.Context, v *vault.Vault, p demoPrinter) error {
	// git reads the branch as of the last flush; the demo's commits are in
	// memvault's journal until then.
	if err := v.Flush(ctx); err != nil {
		return err
	}
	dir := v.Dir()
	p.section("What the disk holds")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	p.printf("$ ls %s\n%s\n\n", shellQuote(dir), strings.Join(names, "  "))
	p.printf("%s\n", wrap("A vault is a bare git repository: no working tree, so no memory is ever a "+
		"plaintext file. Every memory is an age-encrypted blob, and in a sealed vault (the default) "+
		"the names and commit messages are sealed too. Here is git's own view:", demoWidth, ""))
	gitBin, err := exec.LookPath("git")
	if err != nil {
		p.printf("\n%s\n", p.st.dim("(git is not installed here; with git, 'git --git-dir VAULT ls-tree -r main' "+
			"and 'git --git-dir VAULT log' show the sealed names and messages.)"))
		return nil
	}
	git := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, gitBin, append([]string{"--git-dir", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "LC_ALL=C")
		return cmd.Output()
	}
	tree, err := git("ls-tree", "-r", "--name-only", "main")
	if err != nil {
		return fmt.Errorf("demo: git ls-tree: %w", err)
	}
	paths := strings.Split(strings.TrimSpace(string(tree)), "\n")
	var memories []string
	for _, t := range paths {
		if strings.HasPrefix(t, "memories/") {
			memories = append(memories, t)
		}
	}
	p.printf("\n$ git ls-tree -r --name-only main\n")
	shown := slices.DeleteFunc(slices.Clone(paths), func(t string) bool { return strings.HasPrefix(t, "memories/") })
	shown = append(shown, memories[:min(3, len(memories))]...)
	for _, t := range shown {
		p.printf("%s\n", escape.Name(t))
	}
	if len(memories) > 3 {
		p.printf("%s\n", p.st.dim(fmt.Sprintf("… %d more sealed names", len(memories)-3)))
	}
	msg, err := git("log", "-1", "--format=Author: %an <%ae>%n%n%B", "main")
	if err != nil {
		return fmt.Errorf("demo: git log: %w", err)
	}
	p.printf("\n$ git log -1 main   %s\n", p.st.dim("# the revert above, as the host sees it"))
	for _, line := range strings.Split(strings.TrimRight(string(msg), "\n"), "\n") {
		if r := []rune(line); len(r) > demoWidth {
			line = fmt.Sprintf("%s… (%d characters)", string(r[:demoWidth-20]), len(r))
		}
		p.printf("%s\n", escape.Line(line))
	}
	if len(memories) == 0 {
		return errors.New("demo: git sees no memory file")
	}
	blob, err := git("cat-file", "blob", "main:"+memories[0])
	if err != nil {
		return fmt.Errorf("demo: git cat-file: %w", err)
	}
	p.printf("\n$ git cat-file blob main:%s\n", escape.Name(memories[0]))
	p.printf("%s", ageHeader(blob))
	return nil
}

// ageHeader shows a memory file's blob as a person can read it: the lines of
// its age header (after the sealed size header, which is binary), then how
// many bytes of ciphertext follow.
func ageHeader(blob []byte) string {
	i := bytes.Index(blob, []byte("age-encryption.org/"))
	if i < 0 {
		return fmt.Sprintf("%d bytes that are no age file\n", len(blob))
	}
	var b strings.Builder
	if i > 0 {
		fmt.Fprintf(&b, "[%d bytes: the sealed size header]\n", i)
	}
	rest := blob[i:]
	for len(rest) > 0 {
		line, after, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			break
		}
		b.WriteString(escape.Line(string(line)) + "\n")
		rest = after
		if bytes.HasPrefix(line, []byte("--- ")) {
			break
		}
	}
	fmt.Fprintf(&b, "[%d bytes of ciphertext]\n", len(rest))
	return b.String()
}

// selfCommand is how to run this program again, as the demo's last lines
// tell it: "memvault" when that is this program on PATH, "go run
// ./cmd/memvault" when go run built it (the README's first command, before
// anything is installed), else its own path. The demo once ended "Run
// 'memvault demo --keep'" on a machine with no memvault installed.
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "memvault"
	}
	return selfCommandOf(exe, exec.LookPath)
}

func selfCommandOf(exe string, lookPath func(string) (string, error)) string {
	onPath, err := lookPath("memvault")
	if err == nil && sameFile(onPath, exe) {
		return "memvault"
	}
	if strings.Contains(filepath.ToSlash(exe), "/go-build") {
		return "go run ./cmd/memvault"
	}
	if err == nil {
		return "memvault"
	}
	return shellQuote(exe)
}

// sameFile tells whether paths a and b name one file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
