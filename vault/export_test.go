package vault

import (
	"errors"
	"os"

	"github.com/memvault/memvault/gitlog"
)

// SnapshotAtForTest exposes a past state to the tests of package vault_test, which
// read old history with it.
func SnapshotAtForTest(v *Vault, commit string) (*Snapshot, error) {
	h, err := gitlog.ParseHash(commit)
	if err != nil {
		return nil, err
	}
	return v.snapshotAt(h)
}

// SetPickaxeBatchForTest makes the pickaxe's batches n commits long, so that a
// short history fills several; it returns the function that restores the size.
func SetPickaxeBatchForTest(n int) func() {
	old := pickaxeBatchSize
	pickaxeBatchSize = n
	return func() { pickaxeBatchSize = old }
}

// StopRekeyMovesAfter makes a rekey's moves of its key files stop, as a
// process killed there would, after n renames; it returns the function that
// restores them.
func StopRekeyMovesAfter(n int) func() {
	rekeyRename = func(from, to string) error {
		if n == 0 {
			return errors.New("stopped here")
		}
		n--
		return os.Rename(from, to)
	}
	return func() { rekeyRename = os.Rename }
}
