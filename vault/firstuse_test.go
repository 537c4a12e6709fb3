package vault_test

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/vault"
)

// TestOpenOrInitCreatesOnFirstUse: a missing vault, or an empty folder, is
// created with its identity; the next call opens it and creates nothing.
func TestOpenOrInitCreatesOnFirstUse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(dir string) error
	}{
		{"missing", func(string) error { return nil }},
		{"empty folder", func(dir string) error { return os.Mkdir(dir, 0o700) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			dir, idFile := filepath.Join(tmp, "v.git"), filepath.Join(tmp, "cfg", "identity")
			if err := tc.setup(dir); err != nil {
				t.Fatal(err)
			}
			opts := vault.Options{IdentityFile: idFile}
			v, res, err := vault.OpenOrInit(ctx, dir, opts)
			if err != nil {
				t.Fatalf("OpenOrInit(%s) = %v", tc.name, err)
			}
			if !res.VaultCreated || !res.IdentityCreated || res.Recipient == "" {
				t.Errorf("OpenOrInit(%s) result %+v, want vault and identity created", tc.name, res)
			}
			write(t, v, "/memories/a.md", "first use\n")
			v.Close()
			v, res, err = vault.OpenOrInit(ctx, dir, opts)
			if err != nil {
				t.Fatalf("second OpenOrInit = %v", err)
			}
			defer v.Close()
			if res.VaultCreated || res.IdentityCreated {
				t.Errorf("second OpenOrInit result %+v, want nothing created", res)
			}
			if got, err := read(t, v, "/memories/a.md"); err != nil || got != "first use\n" {
				t.Errorf("ReadFile after reopening = %q, %v", got, err)
			}
		})
	}
}

// TestOpenOrInitNeverRecreates: a vault that exists but is damaged, a folder
// that holds something else, and an identity that exists but cannot be read
// are reported, and nothing on the disk changes.
func TestOpenOrInitNeverRecreates(t *testing.T) {
	garbage := []byte("AGE-SECRET-KEY-NOT-REALLY\n")
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir, idFile string)
		want   error
	}{
		{"main names a missing commit", func(t *testing.T, dir, _ string) {
			writeFile(t, filepath.Join(dir, "refs", "heads", "main"), []byte(strings.Repeat("5", 40)+"\n"))
		}, vault.ErrDamaged},
		{"main names garbage", func(t *testing.T, dir, _ string) {
			writeFile(t, filepath.Join(dir, "refs", "heads", "main"), []byte("not a hash\n"))
		}, vault.ErrNotVault},
		{"main is gone", func(t *testing.T, dir, _ string) {
			// vault.Init would make a new first commit here, hiding the history.
			if err := os.Remove(filepath.Join(dir, "refs", "heads", "main")); err != nil {
				t.Fatal(err)
			}
		}, vault.ErrNotVault},
		{"a folder of other things", func(t *testing.T, dir, _ string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "notes.txt"), []byte("mine\n"))
		}, vault.ErrNotVault},
		// A vault path given by mistake: once "readdirent DIR: not a directory".
		{"a regular file", func(t *testing.T, dir, _ string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, []byte("mine\n"))
		}, vault.ErrNotVault},
		{"identity unreadable, vault missing", func(t *testing.T, dir, idFile string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			writeFile(t, idFile, garbage)
		}, vault.ErrNoIdentity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			dir, idFile := filepath.Join(tmp, "v.git"), filepath.Join(tmp, "identity")
			opts := vault.Options{IdentityFile: idFile}
			v, _, err := vault.Init(ctx, dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			write(t, v, "/memories/a.md", "keep me\n")
			v.Close()
			tc.damage(t, dir, idFile)
			before := diskFiles(t, tmp)
			v, res, err := vault.OpenOrInit(ctx, dir, opts)
			if err == nil {
				v.Close()
			}
			if !errors.Is(err, tc.want) || res.VaultCreated || res.IdentityCreated {
				t.Fatalf("OpenOrInit = %+v, %v; want an error wrapping %v and nothing created", res, err, tc.want)
			}
			if after := diskFiles(t, tmp); !maps.EqualFunc(before, after, func(a, b string) bool { return a == b }) {
				t.Errorf("OpenOrInit changed the disk:\nbefore %v\nafter  %v", sortedKeys(before), sortedKeys(after))
			}
		})
	}
}

// TestOpenOrInitAtOnce: processes starting on the same new vault at the same
// moment all open the one vault that one of them made.
func TestOpenOrInitAtOnce(t *testing.T) {
	tmp := t.TempDir()
	dir, opts := filepath.Join(tmp, "v.git"), vault.Options{IdentityFile: filepath.Join(tmp, "identity")}
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	created := make([]bool, n)
	for i := range n {
		wg.Go(func() {
			v, res, err := vault.OpenOrInit(ctx, dir, opts)
			errs[i], created[i] = err, res.VaultCreated
			if err == nil {
				write(t, v, "/memories/"+string(rune('a'+i))+".md", "x")
				v.Close()
			}
		})
	}
	wg.Wait()
	made := 0
	for i := range n {
		if errs[i] != nil {
			t.Errorf("OpenOrInit #%d = %v", i, errs[i])
		}
		if created[i] {
			made++
		}
	}
	if made != 1 {
		t.Errorf("%d callers say they created the vault, want 1", made)
	}
	v, err := vault.Open(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	log, err := v.Log(ctx, vault.LogOptions{})
	if err != nil || len(log) != n+1 {
		t.Errorf("Log = %d commits, %v; want init and %d writes on one history", len(log), err, n)
	}
}

func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// diskFiles maps every file under root to its content, and every folder (with
// a final "/") to "", leaving out a vault's local state.
func diskFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == "memvault":
			return filepath.SkipDir
		case d.IsDir():
			m[p+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		m[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// TestUnlock: a long-lived process learns at start that its identity cannot
// be read, though opening the vault reads no identity.
func TestUnlock(t *testing.T) {
	tmp := t.TempDir()
	dir, idFile := filepath.Join(tmp, "v.git"), filepath.Join(tmp, "identity")
	v, _, err := vault.Init(ctx, dir, vault.Options{IdentityFile: idFile})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Unlock(); err != nil {
		t.Errorf("Unlock with the vault's identity = %v", err)
	}
	v.Close()
	for name, content := range map[string][]byte{"damaged": []byte("AGE-SECRET-KEY-1NOTAKEY\n"), "empty": nil} {
		bad := filepath.Join(tmp, name)
		writeFile(t, bad, content)
		v, err := vault.Open(ctx, dir, vault.Options{IdentityFile: bad})
		if err != nil {
			t.Fatalf("Open with a %s identity = %v; want it to open, reading no identity", name, err)
		}
		if err := v.Unlock(); !errors.Is(err, vault.ErrNoIdentity) {
			t.Errorf("Unlock with a %s identity = %v, want ErrNoIdentity", name, err)
		}
		v.Close()
	}
}

// TestInitLeavesLostBranch: init on a vault whose main branch is gone, but
// whose objects are there, refuses rather than hide the history behind a new
// first commit; a repository with no objects yet (an init cut off before its
// commit) is completed.
func TestInitLeavesLostBranch(t *testing.T) {
	tmp := t.TempDir()
	dir, opts := filepath.Join(tmp, "v.git"), vault.Options{IdentityFile: filepath.Join(tmp, "identity")}
	v, _, err := vault.Init(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	write(t, v, "/memories/a.md", "keep me\n")
	v.Close()
	if err := os.Remove(filepath.Join(dir, "refs", "heads", "main")); err != nil {
		t.Fatal(err)
	}
	before := diskFiles(t, tmp)
	if v, _, err := vault.Init(ctx, dir, opts); !errors.Is(err, vault.ErrHoldsObjects) {
		if err == nil {
			v.Close()
		}
		t.Fatalf("Init on a vault whose main is gone = %v, want ErrHoldsObjects", err)
	}
	if after := diskFiles(t, tmp); !maps.Equal(before, after) {
		t.Errorf("Init changed the disk:\nbefore %v\nafter  %v", sortedKeys(before), sortedKeys(after))
	}

	// A bare repository with nothing in it yet: Init makes the vault there.
	empty := filepath.Join(tmp, "cut-off.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", empty).CombinedOutput(); err != nil {
		t.Skipf("git init: %v\n%s", err, out)
	}
	v, res, err := vault.Init(ctx, empty, opts)
	if err != nil || !res.VaultCreated {
		t.Fatalf("Init on an empty repository = %+v, %v; want a vault made there", res, err)
	}
	v.Close()
}

// init into a folder that is there already, readable by everyone, makes it
// private: its config may come to hold a remote's token.
func TestInitMakesAnExistingFolderPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v.git")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	v, _, err := vault.Init(ctx, dir, vault.Options{IdentityFile: filepath.Join(t.TempDir(), "id")})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the vault folder's mode = %v, %v; want 0700", fi.Mode().Perm(), err)
	}
}
