package keys

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"unicode/utf8"

	"filippo.io/age"
	"filippo.io/age/agessh"
	"filippo.io/age/plugin"
	"golang.org/x/crypto/ssh"
)

// Recipient types, as Recipient.Type names them. A plugin key's type is
// "plugin:" followed by the plugin's name ("plugin:yubikey").
const (
	TypeX25519     = "x25519"
	TypeHybrid     = "mlkem768x25519" // post-quantum: ML-KEM-768 with X25519
	TypeSSHEd25519 = "ssh-ed25519"
	TypeSSHRSA     = "ssh-rsa"
	typePlugin     = "plugin:"
)

// RecipientsPath is where a vault's tree keeps its recipients file.
const RecipientsPath = ".memvault/recipients"

// Recipient is one public key of a vault's recipients file: every memory file
// is encrypted to each of them.
type Recipient struct {
	// Key is the public key without any comment: "age1…", "age1pq1…",
	// "ssh-ed25519 AAAA…", "ssh-rsa AAAA…" or a plugin's "age1yubikey1…".
	Key string
	// Type is TypeX25519, TypeHybrid, TypeSSHEd25519, TypeSSHRSA, or
	// "plugin:NAME" for a key that the program age-plugin-NAME handles.
	Type string
	// Comment is an SSH key's own comment, else the comment lines just above
	// the key in the recipients file, without their "#".
	Comment string
	// PostQuantum is true for a hybrid key. A plugin's key may be post-quantum
	// too; only the plugin knows until it is used.
	PostQuantum bool
}

// ParseRecipient parses one recipient as a user gives it: an age key ("age1…",
// "age1pq1…"), an SSH public key line ("ssh-ed25519 AAAA… comment", as in a
// .pub file) or an age plugin key ("age1NAME1…"). The error wraps
// ErrRecipients; it never quotes a secret key pasted by mistake.
func ParseRecipient(s string) (Recipient, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) (Recipient, error) {
		return Recipient{}, fmt.Errorf("vault: recipient %s: %s: %w", QuoteKey(s), why, ErrRecipients)
	}
	switch {
	case strings.HasPrefix(strings.ToUpper(s), "AGE-"), strings.HasPrefix(s, "-----BEGIN"):
		return bad("this is a secret key (an identity), not a recipient: keep it private and give its public key instead")
	case strings.HasPrefix(s, "age1pq1"):
		r, err := age.ParseHybridRecipient(s)
		if err != nil {
			return bad("malformed post-quantum age key")
		}
		return Recipient{Key: r.String(), Type: TypeHybrid, PostQuantum: true}, nil
	case strings.HasPrefix(s, "age1") && strings.Count(s, "1") > 1 && !isX25519(s):
		name, _, err := plugin.ParseRecipient(s)
		if err != nil {
			return bad("malformed age key")
		}
		return Recipient{Key: strings.ToLower(s), Type: typePlugin + name}, nil
	case strings.HasPrefix(s, "age1"):
		r, err := age.ParseX25519Recipient(s)
		if err != nil {
			return bad("malformed age key")
		}
		return Recipient{Key: r.String(), Type: TypeX25519}, nil
	case strings.HasPrefix(s, "ssh-"):
		pub, comment, _, _, err := ssh.ParseAuthorizedKey([]byte(s))
		if err != nil {
			return bad("malformed SSH public key")
		}
		if _, err := agessh.ParseRecipient(s); err != nil {
			return bad("age accepts only ssh-ed25519 keys and ssh-rsa keys of 2048 bits or more")
		}
		return Recipient{Key: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))), Type: pub.Type(), Comment: comment}, nil
	}
	return bad("not an age, post-quantum age, SSH or age plugin public key")
}

// isX25519 tells a plain X25519 key ("age1" + 58 characters) from a plugin key
// whose data happens to hold a "1".
func isX25519(s string) bool {
	_, err := age.ParseX25519Recipient(s)
	return err == nil
}

// QuoteKey names a recipient in an error: public keys are abbreviated, and
// anything that might be secret is not shown at all.
func QuoteKey(s string) string {
	if !strings.HasPrefix(s, "age1") && !strings.HasPrefix(s, "ssh-") {
		return "(not shown)"
	}
	return fmt.Sprintf("%q", Abbrev(s))
}

// Abbrev shortens a long key for messages: post-quantum keys are ~2,000 characters.
func Abbrev(s string) string {
	if i := strings.IndexAny(s, " \t"); strings.HasPrefix(s, "ssh-") && i > 0 {
		if pub, comment, _, _, err := ssh.ParseAuthorizedKey([]byte(s)); err == nil {
			return strings.TrimSpace(pub.Type() + " " + ssh.FingerprintSHA256(pub) + " " + comment)
		}
	}
	if len(s) <= 72 {
		return s
	}
	return s[:20] + "…" + s[len(s)-8:]
}

// RecipientsFile is a parsed .memvault/recipients: the lines before the first
// key, then each key with the comment and blank lines since the key before it,
// then the lines after the last key. Rendering it again gives the same bytes.
type RecipientsFile struct {
	Header  []string
	Entries []RecipientEntry
	Trailer []string
}

type RecipientEntry struct {
	Above []string // comment and blank lines since the previous key
	Line  string   // the key as written (an SSH key keeps its comment)
	Recipient
}

// ParseRecipientsFile parses a recipients file. Blank lines and lines starting
// with "#" are comments. The error wraps ErrRecipients.
func ParseRecipientsFile(content []byte) (*RecipientsFile, error) {
	f := &RecipientsFile{}
	var pending []string
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(nil, 64<<10)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if !utf8.ValidString(line) {
			return nil, fmt.Errorf("vault: %s line %d: not UTF-8: %w", RecipientsPath, n, ErrRecipients)
		}
		if line == "" || strings.HasPrefix(line, "#") {
			pending = append(pending, line)
			continue
		}
		r, err := ParseRecipient(line)
		if err != nil {
			return nil, fmt.Errorf("vault: %s line %d: %w", RecipientsPath, n, err)
		}
		e := RecipientEntry{Line: line, Recipient: r}
		if len(f.Entries) == 0 {
			// The file's header ends at its last blank line; comment lines
			// after it belong to the first key, as a member's name does.
			cut := slices.Index(pending, "")
			for i := len(pending) - 1; i >= 0; i-- {
				if pending[i] == "" {
					cut = i
					break
				}
			}
			f.Header, e.Above = pending, nil
			if cut >= 0 && cut < len(pending)-1 {
				f.Header, e.Above = pending[:cut+1], pending[cut+1:]
				if e.Comment == "" {
					e.Comment = commentText(e.Above)
				}
			}
		} else {
			e.Above = pending
			if e.Comment == "" {
				e.Comment = commentText(pending)
			}
		}
		f.Entries = append(f.Entries, e)
		pending = nil
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("vault: %s: %v: %w", RecipientsPath, err, ErrRecipients)
	}
	f.Trailer = pending
	return f, nil
}

func commentText(lines []string) string {
	var parts []string
	for _, l := range lines {
		if t := strings.TrimSpace(strings.TrimPrefix(l, "#")); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " ")
}

// bytes renders the file again: unchanged entries keep their comments.
func (f *RecipientsFile) Bytes() []byte {
	var b bytes.Buffer
	for _, l := range f.Header {
		b.WriteString(l + "\n")
	}
	for _, e := range f.Entries {
		for _, l := range e.Above {
			b.WriteString(l + "\n")
		}
		b.WriteString(e.Line + "\n")
	}
	for _, l := range f.Trailer {
		b.WriteString(l + "\n")
	}
	return b.Bytes()
}

func (f *RecipientsFile) Index(key string) int {
	return slices.IndexFunc(f.Entries, func(e RecipientEntry) bool { return e.Key == key })
}

func (f *RecipientsFile) List() []Recipient {
	out := make([]Recipient, len(f.Entries))
	for i, e := range f.Entries {
		out[i] = e.Recipient
	}
	return out
}

// fingerprint names the set of keys, whatever their order and comments: two
// files with the same fingerprint encrypt to the same people.
func (f *RecipientsFile) Fingerprint() [32]byte {
	keys := make([]string, len(f.Entries))
	for i, e := range f.Entries {
		keys[i] = e.Key
	}
	slices.Sort(keys)
	return sha256.Sum256([]byte(strings.Join(slices.Compact(keys), "\n")))
}

// check refuses a set age could not encrypt to, or could only with a surprise:
// no key at all, or post-quantum keys mixed with classical ones.
func (f *RecipientsFile) Check() error {
	if len(f.Entries) == 0 {
		return fmt.Errorf("vault: %s names no recipient: nobody could read the memory: %w", RecipientsPath, ErrRecipients)
	}
	var pq, classical *RecipientEntry
	for i := range f.Entries {
		e := &f.Entries[i]
		switch {
		case e.PostQuantum:
			pq = e
		case !strings.HasPrefix(e.Type, typePlugin):
			classical = e
		}
	}
	if pq != nil && classical != nil {
		return fmt.Errorf("vault: recipients %s (post-quantum) and %s (%s): "+
			"age refuses to encrypt a file to both, since anyone who breaks the classical key "+
			"(as a future quantum computer could) would read what the post-quantum key protects: %w",
			QuoteKey(pq.Key), QuoteKey(classical.Key), classical.Type, ErrMixedRecipients)
	}
	return nil
}

// ageRecipients builds the age recipients of f. Plugin keys need their plugin
// program on PATH; the error says which is missing and wraps ErrRecipients.
func (f *RecipientsFile) AgeRecipients(ui *plugin.ClientUI) ([]age.Recipient, error) {
	rs := make([]age.Recipient, 0, len(f.Entries))
	for _, e := range f.Entries {
		var r age.Recipient
		var err error
		switch {
		case e.Type == TypeX25519:
			r, err = age.ParseX25519Recipient(e.Key)
		case e.Type == TypeHybrid:
			r, err = age.ParseHybridRecipient(e.Key)
		case strings.HasPrefix(e.Type, "ssh-"):
			r, err = agessh.ParseRecipient(e.Key)
		default:
			name := strings.TrimPrefix(e.Type, typePlugin)
			if _, lerr := exec.LookPath("age-plugin-" + name); lerr != nil {
				return nil, fmt.Errorf("vault: recipient %s needs the age plugin program age-plugin-%s, which is not on PATH: install it, or remove that recipient: %w",
					QuoteKey(e.Key), name, ErrRecipients)
			}
			r, err = plugin.NewRecipient(e.Key, ui)
		}
		if err != nil {
			return nil, fmt.Errorf("vault: recipient %s: %v: %w", QuoteKey(e.Key), err, ErrRecipients)
		}
		rs = append(rs, r)
	}
	return rs, nil
}
