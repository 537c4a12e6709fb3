package seal

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// A sealed commit carries Subject as its subject and one trailer, Trailer, whose
// value seals the commit's real message (subject and trailers) and author.
const (
	// Subject is the subject of every sealed commit.
	Subject = "memvault"
	// Trailer is the key of the one trailer of a sealed commit.
	Trailer = "Memvault-Sealed"
	// Author is the author name and email a sealed commit shows git; the real
	// author is inside the sealed trailer.
	Author = "memvault"
	// AuthorEmail goes with Author.
	AuthorEmail = "memvault@memvault"
)

const (
	msgVersion = 1
	// msgVersionBuckets is a generation's (format 3): the sealed plaintext
	// is padded to its Padmé bucket, never below msgMinBucket, so the
	// trailer's length tells little of the paths and ids inside.
	msgVersionBuckets = 2
	msgMinBucket      = 256
	msgNonce          = 16
	// msgBlock rounds the sealed plaintext up, so the trailer's length tells
	// the length of the paths and ids inside only to within 32 bytes.
	msgBlock = 32
	// MaxMessage bounds what OpenMessage decodes: a trailer longer than this
	// is refused before any allocation that follows its length.
	MaxMessage = 1 << 20
)

// ErrBadMessage is wrapped by the error [Key.OpenMessage] returns for a commit
// message that is not one sealed under this key.
var ErrBadMessage = errors.New("not a commit message sealed under this vault's key")

// Message is what a sealed commit hides: its real message (subject, blank line,
// trailers) and its author's name and email.
type Message struct {
	Text        string
	AuthorName  string
	AuthorEmail string
}

// SealMessage returns the whole commit message of a sealed commit for m:
// Subject, a blank line and the Trailer line. Each call gives a different
// message, even for the same m (a random nonce goes in), so the host cannot
// tell two equal commands apart from two different ones.
func (k *Key) SealMessage(m Message) (string, error) {
	pt := make([]byte, msgNonce, msgNonce+1+3*binary.MaxVarintLen64+len(m.Text)+len(m.AuthorName)+len(m.AuthorEmail)+msgBlock)
	if _, err := rand.Read(pt); err != nil {
		return "", fmt.Errorf("seal: message: %w", err)
	}
	version := byte(msgVersion)
	if k.gen != nil {
		version = msgVersionBuckets
	}
	pt = append(pt, version)
	for _, s := range []string{m.AuthorName, m.AuthorEmail, m.Text} {
		pt = binary.AppendUvarint(pt, uint64(len(s)))
		pt = append(pt, s...)
	}
	for len(pt) < msgPadded(version, len(pt)) {
		pt = append(pt, 0)
	}
	ct, err := k.msgs.EncryptDeterministically(pt, []byte(Trailer))
	if err != nil {
		return "", fmt.Errorf("seal: message: %w", err)
	}
	return Subject + "\n\n" + Trailer + ": " + base64.RawStdEncoding.EncodeToString(ct) + "\n", nil
}

// IsSealed reports whether msg has the shape of a sealed commit message, opened
// or not: what a reader checks to choose between OpenMessage and the old format.
func IsSealed(msg string) bool {
	return strings.HasPrefix(msg, Subject+"\n\n"+Trailer+": ")
}

// OpenMessage returns what SealMessage sealed in msg. The error wraps
// [ErrBadMessage] for anything else: another shape, bad base64, a wrong tag (a
// message written without the key, or altered), an unknown version, bad
// lengths or padding. A remote writes commit messages, so msg may be anything;
// the error never quotes it.
func (k *Key) OpenMessage(msg string) (Message, error) {
	enc, ok := strings.CutPrefix(msg, Subject+"\n\n"+Trailer+": ")
	if !ok {
		return Message{}, fmt.Errorf("seal: open message: %w (not the sealed shape)", ErrBadMessage)
	}
	enc, ok = strings.CutSuffix(enc, "\n")
	if !ok || len(enc) > base64.RawStdEncoding.EncodedLen(MaxMessage) || strings.ContainsAny(enc, "\n\r") {
		return Message{}, fmt.Errorf("seal: open message: %w (not the sealed shape)", ErrBadMessage)
	}
	ct, err := base64.RawStdEncoding.Strict().DecodeString(enc)
	if err != nil {
		return Message{}, fmt.Errorf("seal: open message: %w (bad base64)", ErrBadMessage)
	}
	pt, err := k.msgs.DecryptDeterministically(ct, []byte(Trailer))
	if err != nil {
		return Message{}, fmt.Errorf("seal: open message: %w", ErrBadMessage)
	}
	if len(pt) <= msgNonce || pt[msgNonce] != msgVersion && pt[msgNonce] != msgVersionBuckets {
		return Message{}, fmt.Errorf("seal: open message: %w (unknown version)", ErrBadMessage)
	}
	version := pt[msgNonce]
	rest := pt[msgNonce+1:]
	var fields [3]string
	for i := range fields {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return Message{}, fmt.Errorf("seal: open message: %w (bad length)", ErrBadMessage)
		}
		fields[i] = string(rest[w : w+int(n)])
		rest = rest[w+int(n):]
	}
	if used := len(pt) - len(rest); len(pt) != msgPadded(version, used) || !allZero(rest) {
		return Message{}, fmt.Errorf("seal: open message: %w (bad padding)", ErrBadMessage)
	}
	return Message{AuthorName: fields[0], AuthorEmail: fields[1], Text: fields[2]}, nil
}

// msgPadded is the length a sealed message's plaintext of n bytes is padded
// to in version version: to 32 bytes (1), or to its Padmé bucket of at least
// msgMinBucket bytes, then to 32 (2).
func msgPadded(version byte, n int) int {
	if version == msgVersionBuckets {
		n = int(max(padme(int64(n)), msgMinBucket))
	}
	return (n + msgBlock - 1) / msgBlock * msgBlock
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
