//go:build linux

package mount_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/agent/mount"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// mountVault mounts v on a new folder for the test, and unmounts it at the end.
// It skips the test where FUSE is missing, and only there.
func mountVault(t testing.TB, v mount.Store, opts mount.Options) *mount.FS {
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

// TestMountScratch: editors' and atomic writers' scratch files live in memory
// and are never committed, and a save through one is one commit of the file.
func TestMountScratch(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	v := vaulttest.New(t)
	m := mountVault(t, v, mount.Options{DeleteDelay: 300 * time.Millisecond})
	dir := m.Dir()
	run(t, "sh", "-c", "printf 'one\\n' > "+dir+"/a.md && printf 'gone soon\\n' > "+dir+"/b.md")
	steps := []struct {
		name    string
		cmd     []string
		command string // the one commit's command, "" for none
		path    string
		want    string // a.md's content after
	}{
		{"vim's swap file and probe", []string{"sh", "-c", "echo swap > " + dir + "/.a.md.swp && echo x > " + dir + "/4913 && rm " + dir + "/4913 && rm " + dir + "/.a.md.swp"},
			"", "", "one\n"},
		{"emacs's auto-save and lock files", []string{"sh", "-c", "echo auto > '" + dir + "/#a.md#' && echo lock > " + dir + "/.#a.md && rm '" + dir + "/#a.md#' " + dir + "/.#a.md"},
			"", "", "one\n"},
		{"an atomic writer: a .tmp file renamed over the target", []string{"python3", "-c",
			"import os; f=open('" + dir + "/a.md.tmp.42.7','w'); f.write('two\\n'); f.close(); os.replace('" + dir + "/a.md.tmp.42.7', '" + dir + "/a.md')"},
			"write", "/memories/a.md", "two\n"},
		{"python's tempfile renamed into place", []string{"python3", "-c",
			"import os, tempfile; fd, p = tempfile.mkstemp(dir='" + dir + "'); os.write(fd, b'three\\n'); os.close(fd); os.rename(p, '" + dir + "/a.md')"},
			"write", "/memories/a.md", "three\n"},
		{"a backup by rename, then the new file (emacs, vim's backupcopy=no)", []string{"sh", "-c",
			"mv " + dir + "/a.md " + dir + "/a.md~ && printf 'four\\n' > " + dir + "/a.md && rm " + dir + "/a.md~"},
			"write", "/memories/a.md", "four\n"},
		{"a backup by copy", []string{"sh", "-c",
			"cp " + dir + "/a.md " + dir + "/a.md~ && printf 'five\\n' > " + dir + "/a.md && rm " + dir + "/a.md~"},
			"write", "/memories/a.md", "five\n"},
	}
	for _, s := range steps {
		before := len(vaulttest.Log(t, v, vault.LogOptions{}))
		run(t, s.cmd[0], s.cmd[1:]...)
		time.Sleep(500 * time.Millisecond) // past the delay of a pending delete
		got := commitsSince(t, v, before)
		var subj []string
		for _, r := range got {
			subj = append(subj, r.Subject)
		}
		switch {
		case s.command == "" && len(got) != 0:
			t.Errorf("%s: commits %q, want none", s.name, subj)
		case s.command != "" && (len(got) != 1 || got[0].Command != s.command || got[0].Path != s.path):
			t.Errorf("%s: commits %q, want one: %s %s", s.name, subj, s.command, s.path)
		}
		if c, err := readVault(t, v, "/memories/a.md"); err != nil || c != s.want {
			t.Errorf("%s: a.md = %q, %v; want %q", s.name, c, err, s.want)
		}
		snap, err := v.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		files, err := snap.Files(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if mount.Scratch(filepath.Base(f)) {
				t.Errorf("%s: scratch file %s is in the vault", s.name, f)
			}
		}
	}
	// A file renamed to a backup name and not written again is deleted, by
	// one commit, once the delay has passed; its backup stays in memory only.
	before := len(vaulttest.Log(t, v, vault.LogOptions{}))
	run(t, "mv", dir+"/b.md", dir+"/b.md~")
	if _, err := os.Stat(dir + "/b.md"); err == nil {
		t.Errorf("b.md is still in the folder after mv b.md b.md~")
	}
	time.Sleep(time.Second)
	got := commitsSince(t, v, before)
	if len(got) != 1 || got[0].Command != "delete" || got[0].Path != "/memories/b.md" || got[0].Agent != "mv" {
		t.Errorf("after mv b.md b.md~: commits %+v, want one delete of /memories/b.md by mv", got)
	}
	if b, err := os.ReadFile(dir + "/b.md~"); err != nil || string(b) != "gone soon\n" {
		t.Errorf("b.md~ = %q, %v; want the old content, in memory", b, err)
	}
}

func TestScratch(t *testing.T) {
	for name, want := range map[string]bool{
		".a.md.swp": true, ".a.md.swo": true, ".a.md.swx": true, "4913": true, "a.md~": true,
		"#a.md#": true, ".#a.md": true, ".~lock.a.md#": true, ".DS_Store": true, "._a.md": true,
		"a.md.tmp": true, "a.md.tmp.123.456": true, ".a.md.tmp99": true, "tmpab_12x9z": true, "tmpab_12x9z.md": true,
		"a.md": false, "MEMORY.md": false, "swp.md": false, "a.swp": false, "tmp.md": false, "a.tmpl": false,
		"templates.md": false, "#tag.md": false, "tmpfile.md": false, "notes.tmpfile": false,
		// Atomic writers' temporary files: Python's tempfile with the prefix
		// NAME.tmp, mkstemp, Go's os.CreateTemp and renameio, rsync, Node's
		// write-file-atomic.
		"prefs.md.tmpbet8rmsq": true, "prefs.md.tmpAb3xQ9": true, ".prefs.md1234567890": true,
		".prefs.md8674665223082153551": true, ".prefs.md.Xy3kQ9": true, ".prefs.md.x7k2p9": true,
		"prefs.md.2983745612": true,
		"notes.20241129":      false, ".notes.md": false, ".config.backup": false, "prefs.md.backup": false,
		"notes.md.2024": false, "v1.2.3": false, ".hidden12345": false, "prefs.md.tmpfiles": false,
		".prefs.md.Backup": true, "prefs.md.tmplate": false,
	} {
		if got := mount.Scratch(name); got != want {
			t.Errorf("Scratch(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestMountSync: a change synced in from another clone shows in the folder,
// merged with the folder's own writes, which reach the other clone by sync.
func TestMountSync(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	origin, opts := vaulttest.NewAt(t, filepath.Join(dir, "origin"))
	vaulttest.Write(t, origin, "/memories/start.md", []byte("start\n"))
	origin.Close()
	clone := func(name string) *vault.Vault {
		c, _, err := vault.Clone(ctx, origin.Dir(), filepath.Join(dir, name), opts, vault.CloneOptions{})
		if err != nil {
			t.Fatalf("Clone: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	v, b := clone("mounted.git"), clone("other.git")
	m := mountVault(t, v, mount.Options{})
	run(t, "sh", "-c", "echo 'from the folder' > "+m.Dir()+"/here.md")

	// The other clone writes and pushes; the mounted vault's sync, run as
	// 'memvault sync' would (its own handle on the vault), merges it in.
	vaulttest.Write(t, b, "/memories/there/new.md", []byte("from the other clone\n"))
	if _, err := b.Sync(ctx, vault.SyncOptions{}); err != nil {
		t.Fatalf("the other clone's Sync: %v", err)
	}
	syncer, err := vault.Open(ctx, v.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer syncer.Close()
	if _, err := syncer.Sync(ctx, vault.SyncOptions{}); err != nil {
		t.Fatalf("the mounted vault's Sync: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := os.ReadFile(filepath.Join(m.Dir(), "there/new.md"))
		if err == nil && string(got) == "from the other clone\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the folder's there/new.md = %q, %v five seconds after the sync; want the other clone's write", got, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	entries, err := os.ReadDir(m.Dir())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "here.md,start.md,there" {
		t.Errorf("ReadDir = %v, want [here.md start.md there]", names)
	}
	if _, err := b.Sync(ctx, vault.SyncOptions{}); err != nil {
		t.Fatalf("the other clone's second Sync: %v", err)
	}
	if got, err := readVault(t, b, "/memories/here.md"); err != nil || got != "from the folder\n" {
		t.Errorf("the other clone's here.md = %q, %v; want the folder's write", got, err)
	}
}

// TestMountNameLimit: a sealed vault stores names of at most 143 bytes, and
// the folder says so where a program asks (statfs) and where it names a file:
// a longer name fails at create, mkdir and rename with ENAMETOOLONG. Such a
// create once succeeded and failed only at close with EINVAL, after the data
// was written, and such a mkdir succeeded. The plain format takes 255 bytes.
func TestMountNameLimit(t *testing.T) {
	for _, tc := range []struct {
		format string
		newAt  func(testing.TB, string) (*vault.Vault, vault.Options)
		limit  int
	}{
		{"sealed", vaulttest.NewSealedAt, 143},
		{"plain", vaulttest.NewPlainAt, 255},
	} {
		t.Run(tc.format, func(t *testing.T) {
			v, _ := tc.newAt(t, t.TempDir())
			dir := mountVault(t, v, mount.Options{}).Dir()
			var st syscall.Statfs_t
			if err := syscall.Statfs(dir, &st); err != nil || st.Namelen != int64(tc.limit) {
				t.Errorf("Statfs(%s).Namelen = %d, %v; want %d", dir, st.Namelen, err, tc.limit)
			}
			longest, over := strings.Repeat("n", tc.limit), strings.Repeat("o", tc.limit+1)
			before := len(vaulttest.Log(t, v, vault.LogOptions{}))
			if err := os.WriteFile(filepath.Join(dir, longest), []byte("fits\n"), 0o600); err != nil {
				t.Fatalf("WriteFile(a name of %d bytes): %v", tc.limit, err)
			}
			tooLong := func(op string, err error) {
				t.Helper()
				if !errors.Is(err, syscall.ENAMETOOLONG) {
					t.Errorf("%s of a name of %d bytes = %v, want ENAMETOOLONG", op, tc.limit+1, err)
				}
			}
			f, err := os.OpenFile(filepath.Join(dir, over), os.O_CREATE|os.O_WRONLY, 0o600)
			if err == nil {
				f.Close()
			}
			tooLong("create", err)
			tooLong("mkdir", os.Mkdir(filepath.Join(dir, over), 0o700))
			tooLong("rename", os.Rename(filepath.Join(dir, longest), filepath.Join(dir, over)))
			if err := os.Mkdir(filepath.Join(dir, "d"), 0o700); err != nil {
				t.Fatal(err)
			}
			tooLong("create in a new folder", os.WriteFile(filepath.Join(dir, "d", over), []byte("x"), 0o600))
			tooLong("rename into a folder", os.Rename(filepath.Join(dir, longest), filepath.Join(dir, "d", over)))
			// A scratch file is never committed: its name may be as long as
			// any Linux file system allows, as an editor's backup of the
			// longest name is.
			if err := os.WriteFile(filepath.Join(dir, longest+"~"), []byte("backup\n"), 0o600); tc.limit < 255 && err != nil {
				t.Errorf("WriteFile(a scratch name of %d bytes): %v", tc.limit+1, err)
			}
			got := commitsSince(t, v, before)
			if len(got) != 1 || got[0].Path != "/memories/"+longest {
				var subj []string
				for _, r := range got {
					subj = append(subj, r.Subject)
				}
				t.Errorf("commits %q, want one: create of the name of %d bytes", subj, tc.limit)
			}
			if s, err := readVault(t, v, "/memories/"+longest); err != nil || s != "fits\n" {
				t.Errorf("vault's file of the longest name = %q, %v; want %q", s, err, "fits\n")
			}
		})
	}
}
