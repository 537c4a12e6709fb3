package keys

import (
	"errors"
	"fmt"
	"strings"
)

// A member is a person or a machine that shares a vault: a name they chose,
// a reader key (an age recipient) and, unless they only read, a signing key.
// The member line carries all three on one line, to send to a writer of the
// vault (memvault join prints it, memvault members add takes it):
//
//	memvault-member/v1 NAME READER WRITER
//
// READER is the recipient as a recipients file has it, and WRITER the
// signing key as a writers file has it, an SSH key's type and base64 joined
// by a colon so that each is one field; WRITER is "-" for a member who only
// reads. A line of another version is refused, never misread.
const memberLineVersion = "memvault-member/v1"

// ErrMember is wrapped by the error ParseMember returns for a line that is not
// a member line.
var ErrMember = errors.New("not a member line (memvault-member/v1 NAME READER WRITER)")

// Member is one member of a vault.
type Member struct {
	Name   string
	Reader Recipient
	Writer *Writer // nil for a member who only reads
}

// CheckMemberName refuses a name a member line or a file of keys could not
// hold as it is: one to 64 letters, digits and ._@+-.
func CheckMemberName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("keys: member name %q: one to 64 characters: %w", oneLine(name), ErrMember)
	}
	for _, r := range name {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("._@+-", r)) {
			return fmt.Errorf("keys: member name %q: only letters, digits and ._@+- (no spaces): %w", oneLine(name), ErrMember)
		}
	}
	return nil
}

// Line returns the member line of m.
func (m Member) Line() string {
	w := "-"
	if m.Writer != nil {
		w = strings.Replace(m.Writer.Key, " ", ":", 1)
	}
	return memberLineVersion + " " + m.Name + " " + strings.Replace(m.Reader.Key, " ", ":", 1) + " " + w
}

// ParseMember reads a member line. The error wraps ErrMember, or
// ErrRecipients or ErrWriter for a key that does not parse; it quotes no
// more of the line than its name.
func ParseMember(line string) (Member, error) {
	f := strings.Fields(line)
	if len(f) == 0 || f[0] != memberLineVersion {
		if len(f) > 0 && strings.HasPrefix(f[0], "memvault-member/") {
			return Member{}, fmt.Errorf("keys: a member line of version %q, which this memvault does not read: %w", oneLine(strings.TrimPrefix(f[0], "memvault-member/")), ErrMember)
		}
		return Member{}, fmt.Errorf("keys: %w", ErrMember)
	}
	if len(f) != 4 {
		return Member{}, fmt.Errorf("keys: %d fields after the version, want 3: %w", len(f)-1, ErrMember)
	}
	if err := CheckMemberName(f[1]); err != nil {
		return Member{}, err
	}
	r, err := ParseRecipient(strings.Replace(f[2], ":", " ", 1))
	if err != nil {
		return Member{}, err
	}
	r.Comment = ""
	m := Member{Name: f[1], Reader: r}
	if f[3] != "-" {
		w, err := ParseWriter(strings.Replace(f[3], ":", " ", 1))
		if err != nil {
			return Member{}, err
		}
		w.Comment = f[1]
		m.Writer = &w
	}
	return m, nil
}
