package vault_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

func TestPermissionWarnings(t *testing.T) {
	v := vaulttest.New(t)
	cases := []struct {
		mode os.FileMode
		want string // "" means no warning
	}{
		{0o700, ""},
		{0o750, "may read memory file names"},
		{0o705, "may read memory file names"},
		{0o770, "may change its history"},
		{0o777, "may change its history"},
	}
	for _, c := range cases {
		if err := os.Chmod(v.Dir(), c.mode); err != nil {
			t.Fatal(err)
		}
		got := v.PermissionWarnings()
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("PermissionWarnings() at mode %v = %q, want none", c.mode, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("PermissionWarnings() at mode %v = %q, want one saying %q", c.mode, got, c.want)
		}
	}
	os.Chmod(v.Dir(), 0o700)
}

// A vault folder, or an identity, that other users can write is refused with
// the command that closes it: one of them could rewrite the history and the
// recipients, or put their own key in place of the identity. It was only
// warned about by fsck.
func TestOthersCanWriteRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows keeps no group or other write bits")
	}
	dir := t.TempDir()
	v, opts := vaulttest.NewAt(t, dir)
	vaulttest.Write(t, v, "/memories/a", []byte("a"))
	v.Close()
	if err := os.Chmod(v.Dir(), 0o770); err != nil {
		t.Fatal(err)
	}
	_, err := vault.Open(context.Background(), v.Dir(), opts)
	if !errors.Is(err, vault.ErrOthersCanWrite) || !strings.Contains(err.Error(), "chmod 700 "+v.Dir()) {
		t.Errorf("Open of a vault folder at mode 0770 = %v; want ErrOthersCanWrite naming chmod 700", err)
	}
	if err := os.Chmod(v.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(opts.IdentityFile, 0o620); err != nil {
		t.Fatal(err)
	}
	w, err := vault.Open(context.Background(), v.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// A sealed vault reads its key, with the identity, at the snapshot.
	s, err := w.Snapshot(context.Background())
	if err == nil {
		_, err = s.ReadFile(context.Background(), "/memories/a")
	}
	if !errors.Is(err, vault.ErrOthersCanWrite) || !strings.Contains(err.Error(), "chmod 600 "+opts.IdentityFile) {
		t.Errorf("a read with an identity at mode 0620 = %v; want ErrOthersCanWrite naming chmod 600", err)
	}
}
