package autosync_test

import (
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

func write(t *testing.T, v *vault.Vault, p, content string) {
	t.Helper()
	vaulttest.Write(t, v, p, []byte(content))
}

func read(t *testing.T, v *vault.Vault, p string) (string, error) {
	t.Helper()
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.ReadFile(ctx, p)
	return string(b), err
}

// files is every memory file of v with its content.
func files(t *testing.T, v *vault.Vault) map[string]string {
	t.Helper()
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := s.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range ps {
		b, err := s.ReadFile(ctx, p)
		if err != nil {
			t.Fatalf("ReadFile(%s): %v", p, err)
		}
		out[p] = string(b)
	}
	return out
}

func head(t *testing.T, v *vault.Vault) string {
	t.Helper()
	h, err := v.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustSync(t *testing.T, v *vault.Vault) vault.SyncResult {
	t.Helper()
	res, err := v.Sync(ctx, vault.SyncOptions{Host: "test"})
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	return res
}

// hostilePair is a vault a that pushed to url, and b, a clone of it.
func hostilePair(t *testing.T, url string) (a, b *vault.Vault, opts vault.Options) {
	t.Helper()
	return vaulttest.Pair(t, url)
}
