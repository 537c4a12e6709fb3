package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"filippo.io/age"
	"filippo.io/age/plugin"

	"github.com/memvault/memvault/gitlog"
)

// keyring loads the identity once, on first use, and keeps the parsed recipients
// of the vault by the content of its recipients file.
type keyring struct {
	path string
	pass func(prompt string) ([]byte, error)
	repo *gitlog.Repo // to name the vault's recipients when a file cannot be decrypted

	mu  sync.Mutex
	id  *identityFile
	err error

	rmu        sync.Mutex
	recipients map[string][]age.Recipient      // recipients file content -> parsed
	byBlob     map[gitlog.Hash][]age.Recipient // recipients file blob -> parsed: a write reads no blob
}

func newKeyring(opts Options, repo *gitlog.Repo) *keyring {
	return &keyring{path: opts.IdentityFile, pass: opts.Passphrase, repo: repo, recipients: map[string][]age.Recipient{}, byBlob: map[gitlog.Hash][]age.Recipient{}}
}

// identity loads the identity once per keyring, so a passphrase is asked for
// at most once, whatever the number of files decrypted. A failure is kept too,
// a wrong passphrase included: a loop over files must not ask again for each
// (a UI that lets the user try again opens the vault again).
func (k *keyring) identity() (*identityFile, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.id != nil || k.err != nil {
		return k.id, k.err
	}
	id, err := readIdentityFile(k.path, k.pass, true)
	if err != nil {
		k.err = fmt.Errorf("%w (%s)", err, k.expected())
		return nil, k.err
	}
	k.id = id
	return id, nil
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
	var content []byte
	if err == nil {
		var e gitlog.Entry
		if e, err = k.repo.Lookup(root, recipientsPath); err == nil {
			content, err = k.repo.ReadBlob(e.Hash)
		}
	}
	var f *recipientsFile
	if err == nil {
		f, err = parseRecipientsFile(content)
	}
	if err != nil {
		return "the vault's recipients are unknown"
	}
	var keys []string
	for _, r := range f.entries {
		s := abbrev(r.Key)
		if !strings.HasPrefix(r.Type, "ssh-") {
			s = r.Type + " " + s
		}
		if r.Comment != "" && !strings.HasPrefix(r.Type, "ssh-") {
			s += " (" + r.Comment + ")"
		}
		keys = append(keys, s)
	}
	return "the vault is encrypted to " + strings.Join(keys, ", ")
}

// parseRecipients parses a recipients file into age recipients, caching by its
// content. The error wraps ErrRecipients.
func (k *keyring) parseRecipients(content []byte) ([]age.Recipient, error) {
	k.rmu.Lock()
	defer k.rmu.Unlock()
	if rs, ok := k.recipients[string(content)]; ok {
		return rs, nil
	}
	f, err := parseRecipientsFile(content)
	if err == nil {
		err = f.check()
	}
	var rs []age.Recipient
	if err == nil {
		rs, err = f.ageRecipients(pluginUI(k.pass))
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
// ErrDecrypt when it is not a recipient of the file or the file is damaged; it
// names the identity tried and the keys the vault expects.
func (k *keyring) decrypt(p string, ct []byte) ([]byte, error) {
	id, err := k.identity()
	if err != nil {
		return nil, err
	}
	r, err := age.Decrypt(bytes.NewReader(ct), id.ids...)
	var nomatch *age.NoIdentityMatchError
	if errors.As(err, &nomatch) {
		return nil, fmt.Errorf("vault: decrypt %s: the identity %s is not one of its recipients (the file is encrypted to %s; %s): %w",
			p, id.describe(), stanzaSummary(nomatch.StanzaTypes), k.expected(), ErrDecrypt)
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
