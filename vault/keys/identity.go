// Package keys reads and writes the keys of a vault: identity files (age
// X25519 and post-quantum, passphrase-protected, SSH, plugin) and the
// recipients file (.memvault/recipients) that names who every memory file is
// encrypted to. It knows nothing of the store: package vault reads a vault's
// recipients file from its tree and hands the bytes here.
package keys

import (
	"bufio"
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"syscall"

	"filippo.io/age"
	"filippo.io/age/agessh"
	"filippo.io/age/armor"
	"filippo.io/age/plugin"
	"golang.org/x/crypto/ssh"

	"github.com/memvault/memvault/vault/internal/keyhook"
)

// IdentityInfo describes an identity file.
type IdentityInfo struct {
	Path string
	// Recipients are the public keys of the secret keys in the file, as a
	// recipients file names them. A plugin identity's key is known only when
	// the file says it in a comment ("# Recipient: age1…"), as plugins write.
	Recipients []Recipient
	// Protected is true for a passphrase-protected file: an age file encrypted
	// with a passphrase (scrypt), or an encrypted SSH private key.
	Protected bool
}

// File is an identity file as read: its age identities (none when it
// was read only for its public keys) and what describes it.
type File struct {
	IdentityInfo
	IDs []age.Identity
}

// The largest identity file memvault reads.
const maxIdentitySize = 1 << 20

// ReadFile reads and parses the identity file at path. A protected age
// file is unlocked with a passphrase from pass (an age file must be, even to
// learn its public keys); an encrypted SSH key only when unlock is set. Errors
// wrap ErrNoIdentity, or ErrPassphrase for a wrong or missing passphrase. No
// error quotes the file's content.
func ReadFile(path string, pass func(string) ([]byte, error), unlock bool) (*File, error) {
	data, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	defer clear(data)
	trimmed := bytes.TrimSpace(data)
	switch {
	case bytes.HasPrefix(trimmed, []byte(armor.Header)), bytes.HasPrefix(data, []byte("age-encryption.org/")):
		plain, err := unlockAgeFile(path, data, pass)
		if err != nil {
			return nil, err
		}
		defer clear(plain)
		id, err := parseAgeIdentities(path, plain, pass)
		if err == nil {
			id.Protected = true
		}
		return id, err
	case bytes.HasPrefix(trimmed, []byte("-----BEGIN")):
		return parseSSHIdentity(path, data, pass, unlock)
	}
	return parseAgeIdentities(path, data, pass)
}

// readKeyFile reads the identity file at path, which must be a regular file:
// a FIFO, a device or a directory is refused at once. The open does not block
// (O_NONBLOCK: opening a FIFO would wait for a writer), and the type is read
// from the opened file, so the path cannot be swapped between check and read.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("vault: identity %s does not exist: %w", path, ErrNoIdentity)
	}
	if err != nil {
		return nil, fmt.Errorf("vault: identity %s cannot be opened (%v): %w", path, errors.Unwrap(err), ErrNoIdentity)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("vault: identity %s cannot be read (%v): %w", path, errors.Unwrap(err), ErrNoIdentity)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("vault: identity %s is %s, not a regular file: give the path of an identity file: %w",
			path, fileKind(fi.Mode()), ErrNoIdentity)
	}
	if err := OthersCanWrite(path, fi.Mode(), "chmod 600"); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIdentitySize+1))
	if err != nil {
		return nil, fmt.Errorf("vault: identity %s cannot be read (%v): %w", path, errors.Unwrap(err), ErrNoIdentity)
	}
	if len(data) > maxIdentitySize {
		return nil, fmt.Errorf("vault: identity %s is too large to be an identity file: %w", path, ErrNoIdentity)
	}
	return data, nil
}

// OthersCanWrite refuses a key file or vault folder at path, of mode m, that
// users other than its owner can write: one of them could put their own key
// in place of this one, or rewrite a vault's history and recipients. fix is
// the command that closes it. Windows keeps no such bits.
func OthersCanWrite(path string, m fs.FileMode, fix string) error {
	if runtime.GOOS == "windows" || m.Perm()&0o022 == 0 {
		return nil
	}
	return fmt.Errorf("vault: %s has mode %v: %w, so nothing was read; make it yours alone: %s %s",
		path, m.Perm(), ErrOthersCanWrite, fix, path)
}

// fileKind names the type of a file that is not a regular one.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// askPassphrase asks pass for the passphrase described by what.
func askPassphrase(pass func(string) ([]byte, error), path, what string) ([]byte, error) {
	if pass == nil {
		return nil, fmt.Errorf("vault: identity %s is protected by a passphrase and there is no way to ask for it: %w", path, ErrPassphrase)
	}
	pw, err := pass(fmt.Sprintf("Enter the passphrase of %s %s:", what, path))
	if err != nil {
		return nil, fmt.Errorf("vault: identity %s: read the passphrase: %v: %w", path, err, ErrPassphrase)
	}
	if len(pw) == 0 {
		return nil, fmt.Errorf("vault: identity %s: empty passphrase: %w", path, ErrPassphrase)
	}
	return pw, nil
}

// countedScrypt counts scrypt runs, so tests can check that an identity is
// unlocked once per process and not once per file.
type countedScrypt struct{ *age.ScryptIdentity }

func (c countedScrypt) Unwrap(ss []*age.Stanza) ([]byte, error) {
	if len(ss) == 1 && ss[0].Type == "scrypt" {
		keyhook.ScryptRuns.Add(1)
	}
	return c.ScryptIdentity.Unwrap(ss)
}

// unlockAgeFile decrypts an identity file protected with a passphrase.
func unlockAgeFile(path string, data []byte, pass func(string) ([]byte, error)) ([]byte, error) {
	pw, err := askPassphrase(pass, path, "identity file")
	if err != nil {
		return nil, err
	}
	sid, err := age.NewScryptIdentity(string(pw))
	clear(pw)
	if err != nil {
		return nil, fmt.Errorf("vault: identity %s: %v: %w", path, err, ErrPassphrase)
	}
	var src io.Reader = bytes.NewReader(data)
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte(armor.Header)) {
		src = armor.NewReader(bytes.NewReader(bytes.TrimSpace(data)))
	}
	r, err := age.Decrypt(src, countedScrypt{sid})
	var nomatch *age.NoIdentityMatchError
	switch {
	case errors.As(err, &nomatch) && len(nomatch.StanzaTypes) == 1 && nomatch.StanzaTypes[0] == "scrypt":
		return nil, fmt.Errorf("vault: identity %s: wrong passphrase: %w", path, ErrPassphrase)
	case errors.As(err, &nomatch):
		return nil, fmt.Errorf("vault: identity %s is an age file encrypted to keys, not to a passphrase: %w", path, ErrNoIdentity)
	case err != nil:
		return nil, fmt.Errorf("vault: identity %s: damaged passphrase-protected file (%v): %w", path, err, ErrNoIdentity)
	}
	plain, err := io.ReadAll(io.LimitReader(r, maxIdentitySize))
	if err != nil {
		clear(plain)
		return nil, fmt.Errorf("vault: identity %s: damaged passphrase-protected file (%v): %w", path, err, ErrNoIdentity)
	}
	return plain, nil
}

// parseAgeIdentities parses an age identity file: one secret key a line
// (AGE-SECRET-KEY-1…, AGE-SECRET-KEY-PQ-1…, AGE-PLUGIN-…), "#" comments.
func parseAgeIdentities(path string, text []byte, pass func(string) ([]byte, error)) (*File, error) {
	id := &File{IdentityInfo: IdentityInfo{Path: path}}
	var comments []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			comments = append(comments, line)
			continue
		}
		upper := strings.ToUpper(line)
		switch {
		case strings.HasPrefix(upper, "AGE-SECRET-KEY-PQ-1"):
			k, err := age.ParseHybridIdentity(line)
			if err != nil {
				return nil, badIdentityLine(path, n, "malformed post-quantum age secret key")
			}
			id.IDs = append(id.IDs, k)
			id.Recipients = append(id.Recipients, Recipient{Key: k.Recipient().String(), Type: TypeHybrid, PostQuantum: true})
		case strings.HasPrefix(upper, "AGE-SECRET-KEY-1"):
			k, err := age.ParseX25519Identity(line)
			if err != nil {
				return nil, badIdentityLine(path, n, "malformed age secret key")
			}
			id.IDs = append(id.IDs, k)
			id.Recipients = append(id.Recipients, Recipient{Key: k.Recipient().String(), Type: TypeX25519})
		case strings.HasPrefix(upper, "AGE-PLUGIN-"):
			k, err := plugin.NewIdentity(line, PluginUI(pass))
			if err != nil {
				return nil, badIdentityLine(path, n, "malformed age plugin identity")
			}
			id.IDs = append(id.IDs, k)
			r := Recipient{Type: typePlugin + k.Name()}
			if known, ok := commentedRecipient(comments); ok {
				r = known
			}
			id.Recipients = append(id.Recipients, r)
		case strings.HasPrefix(line, "age1"), strings.HasPrefix(line, "ssh-"):
			return nil, badIdentityLine(path, n, "a public key (a recipient), where a secret key belongs")
		default:
			return nil, badIdentityLine(path, n, "not an age secret key")
		}
		comments = nil
	}
	if err := sc.Err(); err != nil || len(id.IDs) == 0 {
		return nil, fmt.Errorf("vault: identity %s holds no age secret key or SSH private key: %w", path, ErrNoIdentity)
	}
	return id, nil
}

func badIdentityLine(path string, n int, why string) error {
	return fmt.Errorf("vault: identity %s line %d: %s: %w", path, n, why, ErrNoIdentity)
}

// commentedRecipient finds the public key a plugin wrote above its identity
// ("#    Recipient: age1yubikey1…") or age-keygen's "# public key: age1…".
func commentedRecipient(comments []string) (Recipient, bool) {
	for _, c := range comments {
		for _, label := range []string{"recipient:", "public key:"} {
			if i := strings.Index(strings.ToLower(c), label); i >= 0 {
				if r, err := ParseRecipient(c[i+len(label):]); err == nil {
					return r, true
				}
			}
		}
	}
	return Recipient{}, false
}

// parseSSHIdentity reads an SSH private key. An encrypted one is unlocked,
// asking pass once, only when unlock is set; its public key comes from the
// key file itself (OpenSSH format) or from path.pub.
func parseSSHIdentity(path string, data []byte, pass func(string) ([]byte, error), unlock bool) (*File, error) {
	id := &File{IdentityInfo: IdentityInfo{Path: path}}
	key, err := ssh.ParseRawPrivateKey(data)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) {
		id.Protected = true
		pub := missing.PublicKey
		if pub == nil {
			if pub, err = readSSHPub(path); err != nil {
				return nil, err
			}
		}
		id.Recipients = []Recipient{sshRecipient(pub)}
		if !unlock {
			return id, nil
		}
		pw, perr := askPassphrase(pass, path, "SSH key")
		if perr != nil {
			return nil, perr
		}
		key, err = ssh.ParseRawPrivateKeyWithPassphrase(data, pw)
		clear(pw)
		if errors.Is(err, x509.IncorrectPasswordError) {
			return nil, fmt.Errorf("vault: identity %s: wrong passphrase: %w", path, ErrPassphrase)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("vault: identity %s is not a usable SSH private key: %w", path, ErrNoIdentity)
	}
	ai, pub, err := sshAgeIdentity(key)
	if err != nil {
		return nil, fmt.Errorf("vault: identity %s: %v: %w", path, err, ErrNoIdentity)
	}
	id.IDs = []age.Identity{ai}
	id.Recipients = []Recipient{sshRecipient(pub)}
	return id, nil
}

// sshAgeIdentity makes an age identity of a parsed SSH private key.
func sshAgeIdentity(key any) (age.Identity, ssh.PublicKey, error) {
	var ai age.Identity
	var err error
	switch k := key.(type) {
	case *ed25519.PrivateKey:
		ai, err = agessh.NewEd25519Identity(*k)
	case ed25519.PrivateKey:
		ai, err = agessh.NewEd25519Identity(k)
	case *rsa.PrivateKey:
		ai, err = agessh.NewRSAIdentity(k)
	default:
		return nil, nil, errors.New("age can use only ssh-ed25519 and ssh-rsa keys")
	}
	if err != nil {
		return nil, nil, err
	}
	pub, err := ssh.NewPublicKey(key.(crypto.Signer).Public())
	return ai, pub, err
}

func readSSHPub(path string) (ssh.PublicKey, error) {
	b, err := os.ReadFile(path + ".pub")
	if err != nil {
		return nil, fmt.Errorf("vault: identity %s is an encrypted SSH key in an old format, and its public key %s.pub cannot be read: %w", path, path, ErrNoIdentity)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		return nil, fmt.Errorf("vault: identity %s: %s.pub is not an SSH public key: %w", path, path, ErrNoIdentity)
	}
	return pub, nil
}

func sshRecipient(pub ssh.PublicKey) Recipient {
	return Recipient{Key: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))), Type: pub.Type()}
}

// PluginUI lets an age plugin ask for a PIN or passphrase through pass. The
// plugin's other messages are not shown: package vault never prints.
func PluginUI(pass func(string) ([]byte, error)) *plugin.ClientUI {
	return &plugin.ClientUI{
		DisplayMessage: func(name, message string) error { return nil },
		RequestValue: func(name, prompt string, secret bool) (string, error) {
			if pass == nil {
				return "", errors.New("no way to ask")
			}
			v, err := pass(fmt.Sprintf("age-plugin-%s: %s", name, prompt))
			return string(v), err
		},
		Confirm: func(name, prompt, yes, no string) (bool, error) {
			return false, errors.New("no way to ask")
		},
	}
}

// describe names the identity in an error: its file and public keys.
func (id *IdentityInfo) Describe() string {
	var keys []string
	for _, r := range id.Recipients {
		switch {
		case r.Key == "":
			keys = append(keys, r.Type)
		case strings.HasPrefix(r.Type, "ssh-"):
			keys = append(keys, Abbrev(r.Key))
		default:
			keys = append(keys, r.Type+" "+Abbrev(r.Key))
		}
	}
	return fmt.Sprintf("%s (%s)", id.Path, strings.Join(keys, ", "))
}
