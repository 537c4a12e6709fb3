package vault

import "github.com/go-git/go-git/v5/plumbing"

// SnapshotAtForTest exposes a past state to the tests of package vault_test, which
// read old history with it.
func SnapshotAtForTest(v *Vault, commit string) (*Snapshot, error) {
	return v.snapshotAt(plumbing.NewHash(commit))
}

// SetPickaxeBatchForTest makes the pickaxe's batches n commits long, so that a
// short history fills several; it returns the function that restores the size.
func SetPickaxeBatchForTest(n int) func() {
	old := pickaxeBatchSize
	pickaxeBatchSize = n
	return func() { pickaxeBatchSize = old }
}
