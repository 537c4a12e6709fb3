package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"

	"filippo.io/age"
	"filippo.io/age/plugin"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// keyring loads the identity once, on first use, and keeps the parsed recipients
// of the vault by the content of its recipients file.
type keyring struct {
	path  string
	extra []string // more identity files, to read with only
	pass  func(prompt string) ([]byte, error)
	repo  *gitlog.Repo // to name the vault's recipients when a file cannot be decrypted

	mu  sync.Mutex
	id  *keys.File
	err error
	// given is the passphrase that unlocked the identity, tried first on a
	// retired key (a rotation keeps the protection), so one that shares it
	// costs no second prompt.
	given []byte

	omu     sync.Mutex
	loaded  bool
	others  []*keys.File // retired and extra identities, loaded on first need
	skipped []string     // those that could not be read, each with why

	// generations returns the identities of the vault keys opened so far
	// (format 3), which open a file written before this identity was a
	// member; nil outside a vault.
	generations func() []age.Identity

	rmu        sync.Mutex
	recipients map[string][]age.Recipient      // recipients file content -> parsed
	byBlob     map[gitlog.Hash][]age.Recipient // recipients file blob -> parsed: a write reads no blob
}

func newKeyring(opts Options, repo *gitlog.Repo) *keyring {
	return &keyring{path: opts.IdentityFile, extra: opts.ReadIdentities, pass: opts.Passphrase, repo: repo,
		recipients: map[string][]age.Recipient{}, byBlob: map[gitlog.Hash][]age.Recipient{}}
}

// identity loads the identity once per keyring, so a passphrase is asked for
// at most once, whatever the number of files decrypted. A failure is kept too,
// a wrong passphrase included: a loop over files must not ask again for each
// (a UI that lets the user try again opens the vault again).
func (k *keyring) identity() (*keys.File, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.id != nil || k.err != nil {
		return k.id, k.err
	}
	pass := k.pass
	if pass != nil {
		pass = func(prompt string) ([]byte, error) {
			pw, err := k.pass(prompt)
			if err == nil {
				k.given = append([]byte(nil), pw...)
			}
			return pw, err
		}
	}
	if rekeyUnfinished(k.path) {
		// A rekey stopped after its commit, between moving the old identity
		// aside and the new one in, or before its signing keys moved: the
		// new keys are the identity's now.
		if _, err := installRekeyed(k.path); err != nil {
			k.err = err
			return nil, err
		}
	}
	id, err := keys.ReadFile(k.path, pass, true)
	if err != nil {
		k.err = fmt.Errorf("%w (%s)", err, k.expected())
		return nil, k.err
	}
	k.id = id
	return id, nil
}

// unlockingPassphrase returns a copy of the passphrase that unlocked the
// identity, unlocking it first (one prompt for the identity and its signing
// key); nil when it has none.
func (k *keyring) unlockingPassphrase() []byte {
	k.identity()
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]byte(nil), k.given...)
}

// rememberPassphrase keeps a passphrase that unlocked the signing key, to
// try first on the identity's other keys.
func (k *keyring) rememberPassphrase(pw []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.given) == 0 {
		k.given = append([]byte(nil), pw...)
	}
}

// expected says which keys the vault's current files are encrypted to, for errors.
func (k *keyring) expected() string {
	if k.repo == nil {
		return "the vault's recipients are unknown"
	}
	head, err := k.repo.Head()
	if err != nil {
		return "the vault's recipients are unknown"
	}
	root, err := k.repo.RootTree(head)
	var f *keys.RecipientsFile
	if err == nil {
		f, err = k.recipientsFileIn(root)
	}
	if err != nil {
		return "the vault's recipients are unknown"
	}
	return "the vault is encrypted to " + fileKeys(f)
}

// fileKeys names the keys of a recipients file, abbreviated.
func fileKeys(f *keys.RecipientsFile) string {
	var names []string
	for _, r := range f.Entries {
		s := keys.Abbrev(r.Key)
		if !strings.HasPrefix(r.Type, "ssh-") {
			s = r.Type + " " + s
		}
		if r.Comment != "" && !strings.HasPrefix(r.Type, "ssh-") {
			s += " (" + r.Comment + ")"
		}
		names = append(names, s)
	}
	return strings.Join(names, ", ")
}

// parseRecipients parses a recipients file into age recipients, caching by its
// content. The error wraps ErrRecipients.
func (k *keyring) parseRecipients(content []byte) ([]age.Recipient, error) {
	k.rmu.Lock()
	defer k.rmu.Unlock()
	if rs, ok := k.recipients[string(content)]; ok {
		return rs, nil
	}
	f, err := keys.ParseRecipientsFile(content)
	if err == nil {
		err = f.Check()
	}
	var rs []age.Recipient
	if err == nil {
		rs, err = f.AgeRecipients(keys.PluginUI(k.pass))
	}
	if err != nil {
		return nil, err
	}
	k.recipients[string(content)] = rs
	return rs, nil
}

func encrypt(plain []byte, rs []age.Recipient) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(plain) + 256*len(rs) + 64)
	w, err := age.Encrypt(&buf, rs...)
	var missing *plugin.NotFoundError
	if errors.As(err, &missing) {
		return nil, fmt.Errorf("vault: encrypt: a recipient needs the age plugin program age-plugin-%s, which is not on PATH: %w", missing.Name, ErrRecipients)
	}
	if err != nil {
		return nil, fmt.Errorf("vault: encrypt: %v: %w", err, ErrRecipients)
	}
	if _, err := w.Write(plain); err != nil {
		return nil, fmt.Errorf("vault: encrypt: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("vault: encrypt: %w", err)
	}
	return buf.Bytes(), nil
}

// decrypt opens the ciphertext of the memory file at path p. The error wraps
// ErrNoIdentity or ErrPassphrase when the identity cannot be loaded, and
// ErrDecrypt when neither it nor any other key it reads with is a recipient
// of the file, or the file is damaged; it names every key tried and the keys
// the vault expects.
func (k *keyring) decrypt(p string, ct []byte) ([]byte, error) {
	return k.decryptAt(p, ct, gitlog.Hash{})
}

// decryptAt is decrypt for a file of the tree root (the zero hash: the
// current one), whose recipients an error names as the keys the file needs.
func (k *keyring) decryptAt(p string, ct []byte, root gitlog.Hash) ([]byte, error) {
	id, err := k.identity()
	if err != nil {
		return nil, err
	}
	r, err := age.Decrypt(bytes.NewReader(ct), id.IDs...)
	var nomatch *age.NoIdentityMatchError
	if errors.As(err, &nomatch) {
		// Only a file the identity cannot open pays for the other keys.
		if ids := k.otherIDs(); len(ids) > 0 {
			r, err = age.Decrypt(bytes.NewReader(ct), ids...)
		}
	}
	if errors.As(err, &nomatch) && k.generations != nil {
		if ids := k.generations(); len(ids) > 0 {
			r, err = age.Decrypt(bytes.NewReader(ct), ids...)
		}
	}
	if errors.As(err, &nomatch) {
		return nil, fmt.Errorf("vault: decrypt %s: the identity %s is not one of its recipients%s (the file is encrypted to %s%s; %s): %w",
			p, id.Describe(), k.triedToo(), stanzaSummary(nomatch.StanzaTypes), k.recipientsAt(root), k.expected(), ErrDecrypt)
	}
	if err != nil {
		return nil, fmt.Errorf("vault: decrypt %s: damaged ciphertext (%v): %w", p, err, ErrDecrypt)
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("vault: decrypt %s: damaged or truncated ciphertext (%v): %w", p, err, ErrDecrypt)
	}
	return plain, nil
}

// otherIDs loads, once, the identities read with besides the identity: the
// extra identity files, and the keys rotations retired beside each. One that
// cannot be read is left out and named in errors, never fatal: the identity
// alone still reads what is current.
func (k *keyring) otherIDs() []age.Identity {
	k.omu.Lock()
	defer k.omu.Unlock()
	if !k.loaded {
		k.loaded = true
		seen := map[string]bool{k.path: true}
		var paths []string
		// A rekey stopped after its commit and before its moves left the
		// key the current files are encrypted to at IDENTITY.new.
		for _, p := range append([]string{k.path}, k.extra...) {
			qs := []string{p}
			if !missing(p + ".new") {
				qs = append(qs, p+".new")
			}
			for _, q := range append(qs, keys.RetiredIdentities(p)...) {
				if !seen[q] {
					seen[q] = true
					paths = append(paths, q)
				}
			}
		}
		for _, p := range paths {
			id, err := k.readOther(p)
			if err != nil {
				k.skipped = append(k.skipped, fmt.Sprintf("%s (%s)", p, identityTrouble(err)))
				continue
			}
			k.others = append(k.others, id)
		}
	}
	var ids []age.Identity
	for _, id := range k.others {
		ids = append(ids, id.IDs...)
	}
	return ids
}

// readOther reads an identity file read with besides the identity: first
// with the passphrase that unlocked the identity, then asking.
func (k *keyring) readOther(path string) (*keys.File, error) {
	k.mu.Lock()
	given := append([]byte(nil), k.given...)
	k.mu.Unlock()
	defer clear(given)
	if len(given) > 0 {
		id, err := keys.ReadFile(path, func(string) ([]byte, error) { return append([]byte(nil), given...), nil }, true)
		if !errors.Is(err, ErrPassphrase) {
			return id, err
		}
	}
	return keys.ReadFile(path, k.pass, true)
}

// identityTrouble says in a few words why an identity file was left out.
func identityTrouble(err error) string {
	switch {
	case errors.Is(err, ErrPassphrase):
		return "not unlocked"
	case errors.Is(err, fs.ErrNotExist):
		return "missing"
	}
	return "unreadable"
}

// triedToo names the other keys a failed decryption tried, for its error.
func (k *keyring) triedToo() string {
	k.omu.Lock()
	defer k.omu.Unlock()
	var parts []string
	for _, id := range k.others {
		parts = append(parts, id.Describe())
	}
	parts = append(parts, k.skipped...)
	if len(parts) == 0 {
		return ""
	}
	return ", nor are the other keys tried: " + strings.Join(parts, ", ")
}

// recipientsAt names the keys of the recipients file in the tree root, the
// keys its memory files were encrypted to, for an error: ", written for
// KEYS", or "" when root is zero or its recipients cannot be read.
func (k *keyring) recipientsAt(root gitlog.Hash) string {
	if k.repo == nil || root.IsZero() {
		return ""
	}
	f, err := k.recipientsFileIn(root)
	if err != nil {
		return ""
	}
	return ", written for " + fileKeys(f)
}

func (k *keyring) recipientsFileIn(root gitlog.Hash) (*keys.RecipientsFile, error) {
	e, err := k.repo.Lookup(root, recipientsPath)
	if err != nil {
		return nil, err
	}
	content, err := k.repo.ReadBlob(e.Hash)
	if err != nil {
		return nil, err
	}
	return keys.ParseRecipientsFile(content)
}

// stanzaSummary counts a file's recipients by type: "2 x25519 keys, 1 ssh-ed25519 key".
func stanzaSummary(types []string) string {
	count := map[string]int{}
	var order []string
	for _, t := range types {
		t = strings.ToLower(t)
		if count[t] == 0 {
			order = append(order, t)
		}
		count[t]++
	}
	var parts []string
	for _, t := range order {
		noun := "keys"
		if count[t] == 1 {
			noun = "key"
		}
		parts = append(parts, fmt.Sprintf("%d %s %s", count[t], t, noun))
	}
	return strings.Join(parts, ", ")
}
