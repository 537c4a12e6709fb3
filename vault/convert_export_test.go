package vault

import (
	"context"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog"
)

// PutForeignFileForTest commits, through gitlog and not through the vault's
// writer, a memory file at tree path tp encrypted to a key of its own, which
// the vault's identity cannot open: what a damaged tool or another key's
// writer could leave.
func PutForeignFileForTest(v *Vault, tp string) error {
	other, err := age.GenerateX25519Identity()
	if err != nil {
		return err
	}
	ct, err := encrypt([]byte("not yours"), []age.Recipient{other.Recipient()})
	if err != nil {
		return err
	}
	ctx := context.Background()
	head, err := v.repo.Head()
	if err != nil {
		return err
	}
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return err
	}
	defer w.Unlock()
	sig := gitlog.Signature{Name: "x", Email: "x@x"}
	_, err = w.Commit(context.Background(), head, []gitlog.Change{{Op: gitlog.Put, Path: tp, Data: ct}}, gitlog.CommitInfo{Message: "create /" + tp + "\n", Author: sig, Committer: sig})
	return err
}
