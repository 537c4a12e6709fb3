package keys

import (
	"errors"
	"strings"
	"testing"

	"crypto/ed25519"
	"crypto/rand"
	"filippo.io/age"
	"golang.org/x/crypto/ssh"
)

// TestMemberLine: a member line reads back as the member it was made of, with
// an age or an SSH reader key, with or without a writer; anything else is
// refused.
func TestMemberLine(t *testing.T) {
	id, _ := age.GenerateX25519Identity()
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	w := WriterOf(sshPub, "")
	reader, err := ParseRecipient(id.Recipient().String())
	if err != nil {
		t.Fatal(err)
	}
	sshReader, err := ParseRecipient(w.Key)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Member{
		{Name: "bob", Reader: reader, Writer: &w},
		{Name: "ci.runner-2", Reader: reader},
		{Name: "eve@laptop", Reader: sshReader, Writer: &w},
	} {
		line := m.Line()
		got, err := ParseMember(line)
		if err != nil {
			t.Fatalf("ParseMember(%q) = %v", line, err)
		}
		if got.Name != m.Name || got.Reader.Key != m.Reader.Key || (got.Writer == nil) != (m.Writer == nil) ||
			got.Writer != nil && (got.Writer.Fingerprint != m.Writer.Fingerprint || got.Writer.Comment != m.Name) {
			t.Errorf("ParseMember(%q) = %+v, want %+v", line, got, m)
		}
		if strings.Count(line, " ") != 3 || strings.Contains(line, "\n") {
			t.Errorf("member line %q is not four fields on one line", line)
		}
	}
	good := Member{Name: "bob", Reader: reader, Writer: &w}.Line()
	for _, bad := range []string{
		"",
		"bob " + reader.Key,
		strings.Replace(good, "/v1", "/v2", 1),
		strings.Replace(good, "bob", "bob smith", 1),
		strings.Replace(good, "bob", "b\x1bob", 1),
		strings.Replace(good, " bob ", " "+strings.Repeat("b", 65)+" ", 1),
		strings.Replace(good, reader.Key, "age1notakey", 1),
		strings.Replace(good, reader.Key, strings.Replace(id.String(), "", "", 1), 1), // a secret key
		good + " extra",
		strings.Replace(good, "ssh-ed25519:", "ssh-ed25519:x", 1),
	} {
		if _, err := ParseMember(bad); err == nil {
			t.Errorf("ParseMember(%q) took it", bad)
		} else if strings.Contains(err.Error(), "AGE-SECRET-KEY") {
			t.Errorf("ParseMember's error %q shows a secret key", err)
		} else if !errors.Is(err, ErrMember) && !errors.Is(err, ErrRecipients) && !errors.Is(err, ErrWriter) {
			t.Errorf("ParseMember(%q) = %v, want ErrMember, ErrRecipients or ErrWriter", bad, err)
		}
	}
}

func FuzzParseMember(f *testing.F) {
	id, _ := age.GenerateX25519Identity()
	f.Add("memvault-member/v1 bob " + id.Recipient().String() + " -")
	f.Add("memvault-member/v1 bob age1 ssh-ed25519:AAAA")
	f.Fuzz(func(t *testing.T, line string) {
		m, err := ParseMember(line)
		if err != nil {
			return
		}
		again, err := ParseMember(m.Line())
		if err != nil || again.Line() != m.Line() {
			t.Fatalf("a member line read back does not round-trip: %q -> %q, %v", line, m.Line(), err)
		}
	})
}
