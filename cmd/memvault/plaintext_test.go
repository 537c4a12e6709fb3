package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault/vaulttest"
)

// TestNoPlaintextAtRest writes unique markers through the memvault process, then looks
// for them in every file the process could have written, raw and decompressed, and
// in every git object, loose and packed. It finds none, nor the memory file's name
// (the vault is sealed, as new vaults are); the same scan does find the vault's
// recipient (public, in .memvault/recipients), and cat does find the markers, so
// the test would see plaintext if it were there.
func TestNoPlaintextAtRest(t *testing.T) {
	root := t.TempDir()
	mv := newProcess(t, root)
	name := "secret-" + randomHex(t) + ".md"
	markers := []string{"MARKER-A-" + randomHex(t), "MARKER-B-" + randomHex(t), "MARKER-C-" + randomHex(t)}

	mv.run(t, "", "init")
	mv.tool(t, map[string]any{"command": "create", "path": "/memories/" + name,
		"file_text": "line one " + markers[0] + "\nline two\n"})
	mv.tool(t, map[string]any{"command": "str_replace", "path": "/memories/" + name,
		"old_str": "line two", "new_str": "line two " + markers[1]})
	mv.tool(t, map[string]any{"command": "insert", "path": "/memories/" + name,
		"insert_line": 1, "insert_text": "inserted " + markers[2]})
	mv.tool(t, map[string]any{"command": "view", "path": "/memories/" + name})
	mv.tool(t, map[string]any{"command": "rename", "old_path": "/memories/" + name,
		"new_path": "/memories/kept/" + name})

	plain := mv.run(t, "", "cat", "/memories/kept/"+name)
	for _, m := range markers {
		if !strings.Contains(plain, m) {
			t.Fatalf("memvault cat = %q, want it to hold %s: the markers never went in", plain, m)
		}
	}
	// The provenance commands decrypt every version, in memory only.
	for _, args := range [][]string{
		{"blame", "/memories/kept/" + name}, {"grep", "MARKER"}, {"log", "-S", markers[1]}, {"log", "-G", "MARKER-C"},
	} {
		out := mv.run(t, "", args...)
		if args[0] != "log" && !strings.Contains(out, markers[0]) || args[0] == "log" && !strings.Contains(out, "str_replace") && !strings.Contains(out, "insert") {
			t.Fatalf("memvault %v = %q: it did not read the plaintext", args, out)
		}
	}
	secret := identitySecret(t, mv.identity)
	recipient := strings.TrimSpace(mv.run(t, "", "identity", "show"))

	packed := filepath.Join(root, "packed.git")
	copyDir(t, mv.vault, packed)
	gitGC(t, packed)

	for _, dir := range []string{mv.vault, packed} {
		if len(vaulttest.FindInObjects(t, dir, []byte(recipient))) == 0 {
			t.Fatalf("the object scan of %s did not find the recipient %s: it is blind", dir, recipient)
		}
		for _, m := range append(markers, name) {
			if found := vaulttest.FindInObjects(t, dir, []byte(m)); len(found) > 0 {
				t.Errorf("plaintext marker in git objects of %s: %v", dir, found)
			}
		}
	}
	for _, m := range append(markers, secret) {
		if found := vaulttest.FindInFiles(t, root, []byte(m), mv.identity); len(found) > 0 {
			t.Errorf("plaintext or key material on disk: %v", found)
		}
	}
	if len(vaulttest.FindInFiles(t, filepath.Join(mv.vault, "objects"), []byte(recipient))) == 0 {
		t.Fatalf("the file scan did not find the recipient %s in the loose objects: it is blind", recipient)
	}
}

// process runs the memvault command as its own process (the test binary under the
// name memvault, see TestMain) with every place it may write inside one directory.
type process struct {
	exe, vault, identity string
	env                  []string
}

func newProcess(t *testing.T, root string) *process {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin")
	tmp := filepath.Join(root, "tmp")
	for _, d := range []string{bin, tmp, filepath.Join(root, "home")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	p := &process{
		exe:      filepath.Join(bin, "memvault"),
		vault:    filepath.Join(root, "data", "vault.git"),
		identity: filepath.Join(root, "config", "memvault", "identity"),
	}
	if err := os.Symlink(self, p.exe); err != nil {
		t.Fatal(err)
	}
	p.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(root, "home"),
		"TMPDIR=" + tmp,
		"XDG_DATA_HOME=" + filepath.Join(root, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(root, "config"),
		"XDG_CACHE_HOME=" + filepath.Join(root, "cache"),
		envVault + "=" + p.vault,
		envIdentity + "=" + p.identity,
	}
	// The race detector's settings, as testscript passes them on: CI cuts the
	// second a race-built process sleeps at exit, and these tests start
	// hundreds.
	if v, ok := os.LookupEnv("GORACE"); ok {
		p.env = append(p.env, "GORACE="+v)
	}
	return p
}

// run runs memvault with args and stdin, wants status 0, and returns its stdout.
func (p *process) run(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(p.exe, args...)
	cmd.Env = p.env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("memvault %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

func (p *process) tool(t *testing.T, input map[string]any) {
	t.Helper()
	b, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	p.run(t, string(b), "tool", "--tool-use-id", "toolu_plain_"+input["command"].(string))
}

func randomHex(t *testing.T) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// identitySecret returns the AGE-SECRET-KEY line of the identity file.
func identitySecret(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k := regexp.MustCompile(`AGE-SECRET-KEY-[0-9A-Z]+`).Find(b)
	if k == nil {
		t.Fatalf("no AGE-SECRET-KEY in %s", path)
	}
	return string(k)
}

// copyDir copies the regular files and directories under src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o700)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o600)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// gitGC packs every object of the repository at dir with git itself, so the scan
// also reads objects as a pack holds them (compressed, some as deltas), and checks
// that no loose object is left.
func gitGC(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: cannot pack the vault to scan packed objects")
	}
	cmd := exec.Command("git", "-C", dir, "gc", "--quiet", "--prune=now")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git gc: %v\n%s", err, out)
	}
	packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	loose, _ := filepath.Glob(filepath.Join(dir, "objects", "[0-9a-f][0-9a-f]", "*"))
	if len(packs) == 0 || len(loose) > 0 {
		t.Fatalf("after git gc: %d packs, %d loose objects; want packs and no loose object", len(packs), len(loose))
	}
}
