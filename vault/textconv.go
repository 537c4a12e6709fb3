package vault

import "github.com/memvault/memvault/vault/seal"

// Decrypt returns the plaintext of one memory file's ciphertext, as stored in the
// vault's repository, with the identity opts names (IdentityFile, and Passphrase
// if it is protected). It needs no vault: git's textconv calls it on the blobs of
// a clone. The error wraps ErrBadEntry when the data is not an age file (no
// age header, or one that does not parse), which no identity could open;
// ErrNoIdentity or ErrPassphrase when the identity cannot be loaded; and
// ErrDecrypt when the identity cannot open the age file. It quotes none of
// the data. A blob of the sealed format (a size header, then the age file of
// padded plaintext) needs no vault key: the header is skipped and the padding
// stripped.
func Decrypt(opts Options, ciphertext []byte) ([]byte, error) {
	ct, sealed := unsealBlob(ciphertext)
	if reason := ageReason(ct, int64(len(ct))); reason != "" {
		return nil, badEntry("the blob", reason)
	}
	if err := opts.fill(); err != nil {
		return nil, err
	}
	plain, err := newKeyring(opts, nil).decrypt("the file", ct)
	if err != nil || !sealed {
		return plain, err
	}
	if plain, err = seal.Unpad(plain); err != nil {
		return nil, badEntry("the blob", "padding memvault did not write")
	}
	return plain, nil
}
