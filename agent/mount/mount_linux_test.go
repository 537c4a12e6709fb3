//go:build linux

package mount_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/agent/mount"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// mountVault mounts v on a new folder for the test, and unmounts it at the end.
// It skips the test where FUSE is missing, and only there.
func mountVault(t testing.TB, v *vault.Vault, opts mount.Options) *mount.FS {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse on this machine (%v): a vault cannot be mounted", err)
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			if _, err := exec.LookPath("fusermount"); err != nil {
				t.Skip("not root and no fusermount3 (package fuse3): a vault cannot be mounted")
			}
		}
	}
	dir := filepath.Join(t.TempDir(), "memory")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	m, err := mount.Start(context.Background(), v, dir, opts)
	if err != nil {
		t.Fatalf("mount.Start: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := m.Wait(); err != nil {
			t.Errorf("Wait: %v", err)
		}
	})
	return m
}

// run runs a command line, failing the test if it fails.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// commitsSince returns the records newer than the first n of the history,
// oldest first.
func commitsSince(t *testing.T, v *vault.Vault, n int) []vault.Record {
	t.Helper()
	recs := vaulttest.Log(t, v, vault.LogOptions{})
	var out []vault.Record
	for i := len(recs) - n - 1; i >= 0; i-- {
		out = append(out, recs[i])
	}
	return out
}

func readVault(t *testing.T, v *vault.Vault, p string) (string, error) {
	t.Helper()
	snap, err := v.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := snap.ReadFile(context.Background(), p)
	return string(b), err
}

// TestMountTools writes, edits, renames and deletes files in a mounted vault
// with ordinary tools, and checks that each is one commit naming the tool,
// that the vault holds what the folder shows, and that no plaintext reached
// the vault's files. A shell's "> FILE" once made two commits (an empty file
// at the close of the duplicated descriptor, then the content).
func TestMountTools(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	v := vaulttest.New(t)
	m := mountVault(t, v, mount.Options{})
	dir := m.Dir()
	secret := fmt.Sprintf("plaintext marker %d", time.Now().UnixNano())
	src := filepath.Join(t.TempDir(), "src.md")
	if err := os.WriteFile(src, []byte("from cp: "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	py := func(code string) []string { return []string{"-c", code} }
	steps := []struct {
		name    string
		cmd     []string
		command string // the commit's Memory-Command, "" for no commit
		path    string
		newPath string
		agent   string
		want    map[string]string // memory path -> content; "" means absent
	}{
		{"mkdir", []string{"mkdir", dir + "/notes"}, "", "", "", "", nil},
		{"cp", []string{"cp", src, dir + "/notes/a.md"}, "create", "/memories/notes/a.md", "", "cp",
			map[string]string{"/memories/notes/a.md": "from cp: " + secret + "\n"}},
		{"shell append", []string{"sh", "-c", "echo appended >> " + dir + "/notes/a.md"}, "write", "/memories/notes/a.md", "", "sh",
			map[string]string{"/memories/notes/a.md": "from cp: " + secret + "\nappended\n"}},
		{"shell redirection, new file", []string{"sh", "-c", "echo 'by the shell' > " + dir + "/notes/b.md"}, "create", "/memories/notes/b.md", "", "sh",
			map[string]string{"/memories/notes/b.md": "by the shell\n"}},
		{"shell redirection over a file", []string{"sh", "-c", "echo 'again' > " + dir + "/notes/b.md"}, "write", "/memories/notes/b.md", "", "sh",
			map[string]string{"/memories/notes/b.md": "again\n"}},
		{"python open, new file", append([]string{"python3"}, py("open('"+dir+"/p.md','w').write('from python\\n')")...), "create", "/memories/p.md", "", "python3",
			map[string]string{"/memories/p.md": "from python\n"}},
		{"python open, edit", append([]string{"python3"}, py("f=open('"+dir+"/p.md','r+'); f.seek(5); f.write('PYTHON'); f.close()")...), "write", "/memories/p.md", "", "python3",
			map[string]string{"/memories/p.md": "from PYTHON\n"}},
		{"mv", []string{"mv", dir + "/notes/a.md", dir + "/a.md"}, "rename", "/memories/notes/a.md", "/memories/a.md", "mv",
			map[string]string{"/memories/notes/a.md": "", "/memories/a.md": "from cp: " + secret + "\nappended\n"}},
		{"mv over a file", []string{"mv", dir + "/p.md", dir + "/a.md"}, "rename", "/memories/p.md", "/memories/a.md", "mv",
			map[string]string{"/memories/p.md": "", "/memories/a.md": "from PYTHON\n"}},
		{"rm", []string{"rm", dir + "/notes/b.md"}, "delete", "/memories/notes/b.md", "", "rm",
			map[string]string{"/memories/notes/b.md": ""}},
		{"rmdir of the emptied folder", []string{"rmdir", dir + "/notes"}, "", "", "", "", nil},
		{"mkdir -p and cp into it", []string{"sh", "-c", "mkdir -p " + dir + "/x/y && cp " + src + " " + dir + "/x/y/z.md"}, "create", "/memories/x/y/z.md", "", "cp",
			map[string]string{"/memories/x/y/z.md": "from cp: " + secret + "\n"}},
		{"mv of a folder", []string{"mv", dir + "/x", dir + "/w"}, "rename", "/memories/x", "/memories/w", "mv",
			map[string]string{"/memories/w/y/z.md": "from cp: " + secret + "\n", "/memories/x/y/z.md": ""}},
		{"rm -r", []string{"rm", "-r", dir + "/w"}, "delete", "/memories/w/y/z.md", "", "rm",
			map[string]string{"/memories/w/y/z.md": ""}},
	}
	for _, s := range steps {
		before := len(vaulttest.Log(t, v, vault.LogOptions{}))
		run(t, s.cmd[0], s.cmd[1:]...)
		got := commitsSince(t, v, before)
		switch {
		case s.command == "" && len(got) != 0:
			t.Errorf("%s: %d commits (%s first), want none", s.name, len(got), got[0].Subject)
		case s.command != "" && len(got) != 1:
			var subj []string
			for _, r := range got {
				subj = append(subj, r.Subject)
			}
			t.Errorf("%s: %d commits %q, want one", s.name, len(got), subj)
		case s.command != "":
			r := got[0]
			if r.Command != s.command || r.Path != s.path || r.NewPath != s.newPath || r.Agent != s.agent {
				t.Errorf("%s: commit %s %s -> %s by %s, want %s %s -> %s by %s", s.name,
					r.Command, r.Path, r.NewPath, r.Agent, s.command, s.path, s.newPath, s.agent)
			}
		}
		for p, want := range s.want {
			got, err := readVault(t, v, p)
			if want == "" {
				if err == nil {
					t.Errorf("%s: %s is in the vault, want it gone", s.name, p)
				}
				continue
			}
			if err != nil || got != want {
				t.Errorf("%s: vault's %s = %q, %v; want %q", s.name, p, got, err, want)
			}
			inFolder, err := os.ReadFile(filepath.Join(dir, strings.TrimPrefix(p, "/memories/")))
			if err != nil || string(inFolder) != want {
				t.Errorf("%s: folder's %s = %q, %v; want %q", s.name, p, inFolder, err, want)
			}
		}
	}
	// The folder refuses names the memory tool refuses.
	for _, bad := range []string{"back\\slash.md", ".git", "ctl\x01.md"} {
		if err := os.WriteFile(filepath.Join(dir, bad), []byte("x"), 0o600); err == nil {
			t.Errorf("WriteFile(%q) in the folder succeeded, want a refusal", bad)
		}
	}
	if found := vaulttest.FindInRepo(t, v.Dir(), []byte(secret)); len(found) > 0 {
		t.Errorf("plaintext in the vault's files: %v", found)
	}
	// The mount is this user's alone and keeps no plaintext in the page cache.
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(info), "\n") {
		if strings.Contains(line, " "+dir+" ") {
			if strings.Contains(line, "allow_other") || !strings.Contains(line, "default_permissions") {
				t.Errorf("mount options %q: want default_permissions and no allow_other", line)
			}
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("Stat(%s) = %v, %v; want mode 0700", dir, fi, err)
	}
}
