package vault

import (
	"bytes"
	"fmt"
)

// Decrypt returns the plaintext of one memory file's ciphertext, as stored in the
// vault's repository, with the identity opts names (IdentityFile, and Passphrase
// if it is protected). It needs no vault: git's textconv calls it on the blobs of
// a clone. The error wraps ErrNoIdentity or ErrPassphrase when the identity
// cannot be loaded and ErrDecrypt when the data is not age ciphertext the
// identity can open; it quotes none of the data.
func Decrypt(opts Options, ciphertext []byte) ([]byte, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(ciphertext, []byte("age-encryption.org/")) {
		return nil, fmt.Errorf("vault: decrypt: not an age file: %w", ErrDecrypt)
	}
	return newKeyring(opts, nil).decrypt("the file", ciphertext)
}
