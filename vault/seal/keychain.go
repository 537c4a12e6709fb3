package seal

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// keychainHeader is the first line of a keychain's file form.
const keychainHeader = "memvault-keychain/v1\n"

// MaxKeychain bounds a keychain's file form: a few thousand generations and
// key files. A longer one is refused before anything is decrypted.
const MaxKeychain = 1 << 20

// ErrBadKeychain is wrapped by the error [Key.OpenKeychain] returns for a file
// that is not a keychain sealed under the key.
var ErrBadKeychain = errors.New("not a keychain sealed under this vault's key")

// A Keychain is what a generation carries of the ones before it, so that
// whoever opens the current key opens every older one: a member added later
// reads the whole history, and a member removed (who holds only older keys)
// reads nothing of the generations after. It is sealed under the current key
// ([Key.SealKeychain]), as Keybase boxes each older team key under the newer.
type Keychain struct {
	// Keys are the older generations, each once.
	Keys []*Key
	// Files names, for each older key file of the history (the hex of its
	// git blob hash), the fingerprint of the key it wraps: how a reader finds
	// the key of a tree whose key file it cannot open (one encrypted to the
	// members of its time).
	Files map[string]string
}

// Add puts k and the key file that wrapped it (its blob's hex hash, or "") in
// c, unless they are there already.
func (c *Keychain) Add(k *Key, file string) {
	if !slices.ContainsFunc(c.Keys, k.Equal) {
		c.Keys = append(c.Keys, k)
	}
	if file != "" {
		if c.Files == nil {
			c.Files = map[string]string{}
		}
		c.Files[file] = k.fingerprint
	}
}

// Merge adds what o holds to c.
func (c *Keychain) Merge(o Keychain) {
	for _, k := range o.Keys {
		c.Add(k, "")
	}
	for f, fp := range o.Files {
		if c.Files == nil {
			c.Files = map[string]string{}
		}
		c.Files[f] = fp
	}
}

// Without returns c without the key k (the current one, which a keychain
// sealed under it need not hold).
func (c Keychain) Without(k *Key) Keychain {
	out := Keychain{Files: c.Files}
	for _, o := range c.Keys {
		if !o.Equal(k) {
			out.Keys = append(out.Keys, o)
		}
	}
	return out
}

// KeyOfFile returns the key that the key file whose blob has the hex hash
// file wraps, when c names it.
func (c Keychain) KeyOfFile(file string) (*Key, bool) {
	fp, ok := c.Files[file]
	if !ok {
		return nil, false
	}
	for _, k := range c.Keys {
		if k.fingerprint == fp {
			return k, true
		}
	}
	return nil, false
}

// SealKeychain returns the file form of c sealed under k: a version line,
// then AES-SIV over a random nonce and the keychain, in base64. The older keys
// are inside in their own file form; nothing of them shows.
func (k *Key) SealKeychain(c Keychain) ([]byte, error) {
	var pt bytes.Buffer
	nonce := make([]byte, msgNonce)
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal: keychain: %w", err)
	}
	pt.Write(nonce)
	for _, o := range c.Keys {
		pt.WriteString("key " + base64.StdEncoding.EncodeToString(o.Marshal()) + "\n")
	}
	files := make([]string, 0, len(c.Files))
	for f := range c.Files {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, f := range files {
		pt.WriteString("file " + f + " " + c.Files[f] + "\n")
	}
	defer clear(pt.Bytes())
	ct, err := k.chain.EncryptDeterministically(pt.Bytes(), []byte(keychainHeader))
	if err != nil {
		return nil, fmt.Errorf("seal: keychain: %w", err)
	}
	out := []byte(keychainHeader)
	out = base64.StdEncoding.AppendEncode(out, ct)
	return append(out, '\n'), nil
}

// OpenKeychain reads what SealKeychain sealed in b. The error wraps
// [ErrBadKeychain] for anything else (another version, bad base64, a wrong
// tag, a line it does not know, a key that does not parse), and quotes
// nothing of b: a remote writes it.
func (k *Key) OpenKeychain(b []byte) (Keychain, error) {
	bad := func(why string) (Keychain, error) {
		return Keychain{}, fmt.Errorf("seal: open keychain: %w (%s)", ErrBadKeychain, why)
	}
	if len(b) > MaxKeychain {
		return bad("too large")
	}
	rest, ok := bytes.CutPrefix(b, []byte(keychainHeader))
	if !ok {
		return bad("no version line this memvault knows")
	}
	enc, ok := bytes.CutSuffix(rest, []byte("\n"))
	if !ok || bytes.IndexByte(enc, '\n') >= 0 {
		return bad("not one line")
	}
	ct := make([]byte, base64.StdEncoding.DecodedLen(len(enc)))
	n, err := base64.StdEncoding.Strict().Decode(ct, enc)
	if err != nil {
		return bad("bad base64")
	}
	pt, err := k.chain.DecryptDeterministically(ct[:n], []byte(keychainHeader))
	if err != nil {
		return bad("does not open")
	}
	defer clear(pt)
	if len(pt) < msgNonce {
		return bad("too short")
	}
	var c Keychain
	for _, line := range strings.Split(string(pt[msgNonce:]), "\n") {
		f := strings.Fields(line)
		switch {
		case line == "":
		case len(f) == 2 && f[0] == "key":
			raw, err := base64.StdEncoding.Strict().DecodeString(f[1])
			if err != nil {
				return bad("a key that is not base64")
			}
			o, err := ParseKey(raw)
			clear(raw)
			if err != nil {
				return bad("a key that does not parse")
			}
			c.Add(o, "")
		case len(f) == 3 && f[0] == "file" && isHex(f[1], 40) && isHex(f[2], 16):
			if c.Files == nil {
				c.Files = map[string]string{}
			}
			c.Files[f[1]] = f[2]
		default:
			return bad("a line this memvault does not know")
		}
	}
	return c, nil
}

// isHex reports whether s is n lower-case hex digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}
