package vault

import (
	"errors"

	"filippo.io/age"

	"github.com/memvault/memvault/vault/seal"
)

// Decrypt returns the plaintext of one memory file's ciphertext, as stored in the
// vault's repository, with the identity opts names (IdentityFile, and Passphrase
// if it is protected). It needs no vault: git's textconv calls it on the blobs of
// a clone. The error wraps ErrBadEntry when the data is not an age file (no
// age header, or one that does not parse), which no identity could open;
// ErrNoIdentity or ErrPassphrase when the identity cannot be loaded; and
// ErrDecrypt when the identity cannot open the age file. It quotes none of
// the data. A blob of the sealed format (a size header, then the age file of
// padded plaintext) needs no vault key for format 2: the header is skipped and
// the padding stripped. Format 3 encrypts each file to its key's generation:
// see DecryptSealed.
func Decrypt(opts Options, ciphertext []byte) ([]byte, error) {
	return DecryptSealed(opts, nil, nil, ciphertext)
}

// DecryptSealed is Decrypt for a blob of a sealed vault of format 3, given a
// key file of the vault (.memvault/key, as a clone checks it out) and the
// keychain beside it (.memvault/keychain; nil when there is none): the key
// file opens with the identity, and its generation and every older one the
// keychain holds open the files. Either may be nil, and a key file the
// identity cannot open is passed over: the identity alone is tried then.
func DecryptSealed(opts Options, keyFile, keychain, ciphertext []byte) ([]byte, error) {
	ct, sealed := unsealBlob(ciphertext)
	if reason := ageReason(ct, int64(len(ct))); reason != "" {
		return nil, badEntry("the blob", reason)
	}
	if err := opts.fill(); err != nil {
		return nil, err
	}
	k := newKeyring(opts, nil)
	if sealed && keyFile != nil {
		if ids := generationsOf(k, keyFile, keychain); len(ids) > 0 {
			k.generations = func() []age.Identity { return ids }
		}
	}
	plain, err := k.decrypt("the file", ct)
	if err != nil || !sealed {
		return plain, err
	}
	if plain, err = seal.Unpad(plain); err != nil {
		return nil, badEntry("the blob", "padding memvault did not write")
	}
	return plain, nil
}

// generationsOf returns the identities of the generation the key file wraps
// (opened with k's identity) and of every older one keychain holds; none
// when the key file does not open or is no generation.
func generationsOf(k *keyring, keyFile, keychain []byte) []age.Identity {
	if reason := ageReason(keyFile, int64(len(keyFile))); reason != "" {
		return nil
	}
	plain, err := k.decrypt(keyPath, keyFile)
	if err != nil {
		return nil
	}
	key, err := seal.ParseKey(plain)
	clear(plain)
	if err != nil || !key.Generation() {
		return nil
	}
	ids := []age.Identity{key.Identity()}
	if keychain != nil {
		c, err := key.OpenKeychain(keychain)
		if err != nil && !errors.Is(err, seal.ErrBadKeychain) {
			return ids
		}
		for _, o := range c.Keys {
			if o.Generation() {
				ids = append(ids, o.Identity())
			}
		}
	}
	return ids
}
