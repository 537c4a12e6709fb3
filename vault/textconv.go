package vault

// Decrypt returns the plaintext of one memory file's ciphertext, as stored in the
// vault's repository, with the identity opts names (IdentityFile, and Passphrase
// if it is protected). It needs no vault: git's textconv calls it on the blobs of
// a clone. The error wraps ErrBadEntry when the data is not an age file (no
// age header, or one that does not parse), which no identity could open;
// ErrNoIdentity or ErrPassphrase when the identity cannot be loaded; and
// ErrDecrypt when the identity cannot open the age file. It quotes none of
// the data.
func Decrypt(opts Options, ciphertext []byte) ([]byte, error) {
	if reason := ageReason(ciphertext, int64(len(ciphertext))); reason != "" {
		return nil, badEntry("the blob", reason)
	}
	if err := opts.fill(); err != nil {
		return nil, err
	}
	return newKeyring(opts, nil).decrypt("the file", ciphertext)
}
