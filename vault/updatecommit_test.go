package vault_test

import (
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// UpdateCommit names the commit its own write made, even when others
// committed after it, and "" when nothing was staged. The UI once looked for
// its write among the newest 100 commits of the log instead.
func TestUpdateCommit(t *testing.T) {
	v := vaulttest.New(t)
	meta := vault.Meta{Command: "create"}
	c, err := v.UpdateCommit(ctx, meta, func(tx *vault.Tx) error {
		return tx.WriteFile(ctx, "/memories/a.md", []byte("a\n"))
	})
	if err != nil || c == "" {
		t.Fatalf("UpdateCommit(create /memories/a.md) = %q, %v; want a commit", c, err)
	}
	write(t, v, "/memories/b.md", "b\n") // someone else's, after it
	recs, err := v.Log(ctx, vault.LogOptions{Path: "/memories/a.md"})
	if err != nil || len(recs) != 1 || recs[0].Commit != c {
		t.Errorf("Log(/memories/a.md) = %+v, %v; want the one commit %s", recs, err, c)
	}
	none, err := v.UpdateCommit(ctx, meta, func(tx *vault.Tx) error { return nil })
	if err != nil || none != "" {
		t.Errorf("UpdateCommit(nothing staged) = %q, %v; want \"\", nil", none, err)
	}
}
