package keys

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// WritersPath lists the vault's writers: the public SSH keys whose signatures
// make a commit believed. It is in the tree, like the recipients, so changing
// it takes a commit signed by a writer listed before the change.
const WritersPath = ".memvault/writers"

// RemovedPath lists the signing keys removed as writers, in the writers
// file's form: a commit a removed writer signed after leaving is refused
// whatever parent it names, and a clone that meets this list refuses the
// commits of its keys it never held (docs/membership.md).
const RemovedPath = ".memvault/removed"

// Writer is a key that may sign the vault's commits.
type Writer struct {
	Key         string // the public key, as in authorized_keys: "ssh-ed25519 AAAA…"
	Fingerprint string // SHA256:…, as ssh-keygen -l prints it
	Comment     string // the rest of its line
	Public      ssh.PublicKey
}

// ParseWriter reads one writer's line: "ssh-ed25519 AAAA… [comment]". The
// error wraps ErrWriter.
func ParseWriter(line string) (Writer, error) {
	pub, comment, opts, rest, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil || len(opts) > 0 || len(bytes.TrimSpace(rest)) > 0 {
		return Writer{}, fmt.Errorf("vault: %q is not a writer's public SSH key (ssh-ed25519 AAAA… name): %w", oneLine(line), ErrWriter)
	}
	return WriterOf(pub, comment), nil
}

// WriterOf is the writer of a public key.
func WriterOf(pub ssh.PublicKey, comment string) Writer {
	return Writer{Key: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))), Fingerprint: ssh.FingerprintSHA256(pub),
		Comment: oneLine(comment), Public: pub}
}

// ParseWriters reads a writers file: one key a line; blank lines and lines
// starting with '#' are comments.
func ParseWriters(content []byte) ([]Writer, error) {
	var out []Writer
	for n, line := range strings.Split(string(content), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		w, err := ParseWriter(line)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", WritersPath, n+1, err)
		}
		out = append(out, w)
	}
	return out, nil
}

// FormatWriters writes a writers file.
func FormatWriters(ws []Writer) []byte {
	return formatKeys("# memvault: a commit is believed only when one of these keys signed it.\n", ws)
}

// FormatRemoved writes the file of removed writers.
func FormatRemoved(ws []Writer) []byte {
	return formatKeys("# memvault: writers removed; their commits are refused unless a clone held them already.\n", ws)
}

func formatKeys(header string, ws []Writer) []byte {
	var b strings.Builder
	b.WriteString(header)
	for _, w := range ws {
		b.WriteString(w.Key)
		if w.Comment != "" {
			b.WriteString(" " + w.Comment)
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// FindWriter returns the writer among ws whose key is pub.
func FindWriter(ws []Writer, pub ssh.PublicKey) (Writer, bool) {
	want := pub.Marshal()
	for _, w := range ws {
		if bytes.Equal(w.Public.Marshal(), want) {
			return w, true
		}
	}
	return Writer{}, false
}

// SignerFingerprint is the fingerprint of the key an armored signature
// names, unverified; "" for none, "unreadable signature" for one that does
// not parse.
func SignerFingerprint(armored string) string {
	if armored == "" {
		return ""
	}
	sig, err := sshsig.Unarmor([]byte(armored))
	if err != nil {
		return "unreadable signature"
	}
	return ssh.FingerprintSHA256(sig.PublicKey)
}

// oneLine keeps a comment on one line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}
