package seal

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// PathID names the memory path p in local records that must not show it (the
// record of which files were read, in the vault's folder): HMAC-SHA256 under
// a subkey of k, in hex. A thief of the folder without the key cannot tell
// which path an ID is, nor test a guess; the same key gives the same ID. A
// rotated key gives other IDs, so a reader matches an ID against every key it
// holds.
func (k *Key) PathID(p string) string {
	k.idOnce.Do(func() {
		sub, err := hkdf.Key(sha256.New, k.raw[:], nil, "memvault seal path ids v1", 32)
		if err != nil {
			panic(err) // only for a length HKDF cannot give, and 32 it can
		}
		k.idKey = sub
	})
	m := hmac.New(sha256.New, k.idKey)
	m.Write([]byte(p))
	return hex.EncodeToString(m.Sum(nil)[:16])
}
