package vault_test

import (
	"os"
	"strings"
	"testing"

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
