//go:build linux

package mount_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/memvault/memvault/agent/mount"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestMountAtomicWriters writes a file through the mount as each common
// atomic writer does (a temporary file beside the target, written, perhaps
// synced, closed, then renamed over it): every save is one commit of the
// target, and no temporary file is ever committed. Python's tempfile with
// the prefix NAME.tmp once became a create of /memories/prefs.md.tmpbet8rmsq
// and then a rename.
func TestMountAtomicWriters(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	v := vaulttest.New(t)
	m := mountVault(t, v, mount.Options{})
	dir := m.Dir()
	run(t, "sh", "-c", "printf 'one\\n' > "+dir+"/a.md")
	// save writes content to target through a temporary file made by the
	// Python expression tmp (an open file object f, or a descriptor fd).
	save := func(tmp, target, content string) []string {
		return []string{"python3", "-c", `
import os, sys, tempfile
d, target, content = sys.argv[1], sys.argv[2], sys.argv[3].encode()
` + tmp + `
os.replace(name, os.path.join(d, target))
`, dir, target, content}
	}
	byName := func(name string) string {
		return "name = os.path.join(d, '" + name + "')\nfd = os.open(name, os.O_WRONLY|os.O_CREAT|os.O_EXCL, 0o600)\nos.write(fd, content)\nos.fsync(fd)\nos.close(fd)"
	}
	steps := []struct {
		name    string
		cmd     []string
		command string
		path    string
		want    string
	}{
		{"Python's tempfile, prefix NAME.tmp", save("f = tempfile.NamedTemporaryFile('wb', dir=d, prefix='a.md.tmp', delete=False)\nf.write(content); f.close(); name = f.name", "a.md", "two\n"),
			"write", "/memories/a.md", "two\n"},
		{"Python's tempfile, prefix .NAME", save("fd, name = tempfile.mkstemp(dir=d, prefix='.a.md')\nos.write(fd, content); os.close(fd)", "a.md", "three\n"),
			"write", "/memories/a.md", "three\n"},
		{"Python's tempfile, prefix .NAME.", save("fd, name = tempfile.mkstemp(dir=d, prefix='.a.md.')\nos.write(fd, content); os.close(fd)", "a.md", "four\n"),
			"write", "/memories/a.md", "four\n"},
		{"Python's tempfile, prefix .NAME., letters alone drawn", save(byName(".a.md.yqwnsvda"), "a.md", "four and a half\n"),
			"write", "/memories/a.md", "four and a half\n"},
		{"mkstemp: NAME.tmpXXXXXX", save(byName("a.md.tmpAb3xQ9"), "a.md", "five\n"),
			"write", "/memories/a.md", "five\n"},
		{"Node's write-file-atomic: NAME.<32-bit hash>", save(byName("a.md.2983745612"), "a.md", "six\n"),
			"write", "/memories/a.md", "six\n"},
		{"Go's os.CreateTemp(dir, NAME): NAME<random>", save(byName("a.md3141592653"), "a.md", "seven\n"),
			"write", "/memories/a.md", "seven\n"},
		{"Go's renameio: a probe .NAME<random>, then .NAME<63-bit random>", save(
			"p = os.path.join(d, '.a.md2718281828'); os.close(os.open(p, os.O_WRONLY|os.O_CREAT|os.O_EXCL, 0o600)); os.remove(p)\n"+byName(".a.md8674665223082153551"), "a.md", "eight\n"),
			"write", "/memories/a.md", "eight\n"},
		{"rsync: .NAME.XXXXXX", save(byName(".a.md.Xy3kQ9"), "a.md", "nine\n"),
			"write", "/memories/a.md", "nine\n"},
		{"a backup NAME~ and vim's swap file", []string{"sh", "-c", "cp " + dir + "/a.md " + dir + "/a.md~ && echo swap > " + dir + "/.a.md.swp && printf 'ten\\n' > " + dir + "/a.md && rm " + dir + "/a.md~ " + dir + "/.a.md.swp"},
			"write", "/memories/a.md", "ten\n"},
		// A first save, with nothing yet at the target: the name alone says.
		{"first save, Python's tempfile, prefix NAME.tmp", save("f = tempfile.NamedTemporaryFile('wb', dir=d, prefix='b.md.tmp', delete=False)\nf.write(content); f.close(); name = f.name", "b.md", "b\n"),
			"create", "/memories/b.md", ""},
		{"first save, renameio", save(byName(".c.md8674665223082153551"), "c.md", "c\n"),
			"create", "/memories/c.md", ""},
		{"first save, write-file-atomic", save(byName("d.md.2983745612"), "d.md", "d\n"),
			"create", "/memories/d.md", ""},
		{"first save, rsync", save(byName(".e.md.Xy3kQ9"), "e.md", "e\n"),
			"create", "/memories/e.md", ""},
	}
	for _, s := range steps {
		before := len(vaulttest.Log(t, v, vault.LogOptions{}))
		run(t, s.cmd[0], s.cmd[1:]...)
		got := commitsSince(t, v, before)
		var subj []string
		for _, r := range got {
			subj = append(subj, r.Subject)
		}
		if len(got) != 1 || got[0].Command != s.command || got[0].Path != s.path {
			t.Errorf("%s: commits %q, want one: %s %s", s.name, subj, s.command, s.path)
		}
		if s.want != "" {
			if c, err := readVault(t, v, "/memories/a.md"); err != nil || c != s.want {
				t.Errorf("%s: a.md = %q, %v; want %q", s.name, c, err, s.want)
			}
		}
	}
	snap, err := v.Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	files, err := snap.Files(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/memories/a.md", "/memories/b.md", "/memories/c.md", "/memories/d.md", "/memories/e.md"}; !equal(files, want) {
		t.Errorf("the vault holds %q, want %q", files, want)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

const threadWriterEnv = "MEMVAULT_TEST_THREAD_WRITER"

// TestMountAuthorIsTheProgram: a commit is authored by the program that
// wrote, not by the thread that made the call. Claude Code writes from a
// thread named "Bun Pool 0", and its commits were authored so; a file made
// by touch (committed when the kernel releases it, a request that names no
// process) was authored "mount".
func TestMountAuthorIsTheProgram(t *testing.T) {
	v := vaulttest.New(t)
	m := mountVault(t, v, mount.Options{})
	dir := m.Dir()

	before := len(vaulttest.Log(t, v, vault.LogOptions{}))
	cmd := exec.Command(os.Args[0], "-test.run=^TestMountThreadWriter$")
	cmd.Env = append(os.Environ(), threadWriterEnv+"="+filepath.Join(dir, "by-thread.md"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writer process: %v\n%s", err, out)
	}
	run(t, "touch", filepath.Join(dir, "touched.md"))
	time.Sleep(200 * time.Millisecond) // the release comes a moment after touch exits
	want := map[string]string{
		"/memories/by-thread.md": filepath.Base(os.Args[0]),
		"/memories/touched.md":   "touch",
	}
	got := commitsSince(t, v, before)
	if len(got) != len(want) {
		t.Fatalf("%d commits %+v, want %d", len(got), got, len(want))
	}
	for _, r := range got {
		if r.Command != "create" || r.Agent != want[r.Path] {
			t.Errorf("commit %s %s by %q, want create by %q", r.Command, r.Path, r.Agent, want[r.Path])
		}
	}
}

// TestMountThreadWriter is the writer process of TestMountAuthorIsTheProgram:
// it names its thread as Bun names its pool's, and writes a file from it.
func TestMountThreadWriter(t *testing.T) {
	p := os.Getenv(threadWriterEnv)
	if p == "" {
		t.Skip("the writer process of TestMountAuthorIsTheProgram")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := os.WriteFile("/proc/thread-self/comm", []byte("Bun Pool 0"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("written from a named thread\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}
