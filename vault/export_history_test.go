package vault

import "context"

// BlobForTest returns the hash and the ciphertext of the memory file p at
// revision rev, for tests that check what undo wrote.
func BlobForTest(v *Vault, rev, p string) (string, []byte, error) {
	s, err := v.SnapshotAt(context.Background(), rev)
	if err != nil {
		return "", nil, err
	}
	e, found, err := s.lookup(p)
	if err != nil || !found {
		return "", nil, ErrNotExist
	}
	ct, err := v.repo.ReadBlob(e.Hash)
	return e.Hash.String(), ct, err
}
