package seal

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"filippo.io/age"
)

// TestGenerationFileForm: a generation's key file holds its age identity, which
// reads back as the same identity (a file encrypted to its recipient opens
// with the key parsed again), and a damaged identity line is refused without
// quoting it.
func TestGenerationFileForm(t *testing.T) {
	for _, pq := range []bool{false, true} {
		k, err := NewGeneration(pq)
		if err != nil {
			t.Fatal(err)
		}
		if !k.Generation() || k.Recipient() == nil || k.Identity() == nil {
			t.Fatalf("NewGeneration(%v) has no identity", pq)
		}
		b := k.Marshal()
		if !bytes.HasPrefix(b, []byte(keyHeaderV2)) {
			t.Fatalf("a generation's file form starts %q, want %q", b[:22], keyHeaderV2)
		}
		k2, err := ParseKey(b)
		if err != nil {
			t.Fatalf("ParseKey(Marshal()) of a generation (pq %v) = %v", pq, err)
		}
		if !k2.Equal(k) || !k2.Generation() {
			t.Fatalf("ParseKey(Marshal()) of a generation is another key")
		}
		var ct bytes.Buffer
		w, err := age.Encrypt(&ct, k.Recipient())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, "contents")
		w.Close()
		r, err := age.Decrypt(&ct, k2.Identity())
		if err != nil {
			t.Fatalf("the identity read back does not open a file for the generation (pq %v): %v", pq, err)
		}
		if got, _ := io.ReadAll(r); string(got) != "contents" {
			t.Fatalf("read %q", got)
		}
		lines := strings.SplitAfter(string(b), "\n")
		idLine := lines[2]
		for _, bad := range []string{
			lines[0] + lines[1], // no identity line
			lines[0] + lines[1] + "AGE-SECRET-KEY-1NOTAKEY\n",            // does not parse
			lines[0] + lines[1] + strings.TrimSuffix(idLine, "\n"),       // no final newline
			lines[0] + lines[1] + idLine + "more\n",                      // a line after
			lines[0] + lines[1] + strings.Replace(idLine, "AGE", "X", 1), // not an identity
		} {
			_, err := ParseKey([]byte(bad))
			if !errors.Is(err, ErrKeyFormat) {
				t.Errorf("ParseKey(a damaged generation) = %v, want ErrKeyFormat", err)
			}
			if err != nil && strings.Contains(err.Error(), strings.TrimSpace(idLine)[20:40]) {
				t.Errorf("ParseKey's error %q shows key material", err)
			}
		}
	}
}

// TestKeychain: a keychain sealed under a key opens under it alone, gives back
// each older key and which key each older key file wraps, and refuses what was
// altered, without quoting it.
func TestKeychain(t *testing.T) {
	k0, _ := NewGeneration(false)
	k1, _ := NewGeneration(false)
	cur, _ := NewGeneration(false)
	var c Keychain
	c.Add(k0, strings.Repeat("a", 40))
	c.Add(k0, strings.Repeat("b", 40))
	c.Add(k1, strings.Repeat("c", 40))
	c.Add(k1, "")
	b, err := cur.SealKeychain(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []*Key{k0, k1} {
		if bytes.Contains(b, secret.Marshal()[22:40]) {
			t.Fatal("the sealed keychain shows an older key")
		}
	}
	got, err := cur.OpenKeychain(b)
	if err != nil {
		t.Fatalf("OpenKeychain = %v", err)
	}
	if len(got.Keys) != 2 {
		t.Fatalf("OpenKeychain gives %d keys, want 2", len(got.Keys))
	}
	for file, want := range map[string]*Key{strings.Repeat("a", 40): k0, strings.Repeat("b", 40): k0, strings.Repeat("c", 40): k1} {
		k, ok := got.KeyOfFile(file)
		if !ok || !k.Equal(want) || !k.Generation() {
			t.Errorf("KeyOfFile(%.8s…) = %v, %v; want the key that file wrapped", file, k, ok)
		}
	}
	if _, ok := got.KeyOfFile(strings.Repeat("d", 40)); ok {
		t.Error("KeyOfFile of a file the keychain does not name found a key")
	}
	if _, err := k1.OpenKeychain(b); !errors.Is(err, ErrBadKeychain) {
		t.Errorf("OpenKeychain under an older key = %v, want ErrBadKeychain: a removed member must not open it", err)
	}
	flipped := bytes.Clone(b)
	flipped[len(flipped)/2] ^= 1
	for name, bad := range map[string][]byte{
		"altered":      flipped,
		"future":       bytes.Replace(b, []byte("/v1"), []byte("/v2"), 1),
		"two lines":    append(bytes.Clone(b), "x\n"...),
		"no newline":   bytes.TrimSuffix(b, []byte("\n")),
		"too large":    append([]byte(keychainHeader), bytes.Repeat([]byte("A"), MaxKeychain)...),
		"empty":        nil,
		"not base64":   []byte(keychainHeader + "!!!!\n"),
		"another file": []byte("age-encryption.org/v1\n"),
	} {
		if _, err := cur.OpenKeychain(bad); !errors.Is(err, ErrBadKeychain) {
			t.Errorf("OpenKeychain(%s) = %v, want ErrBadKeychain", name, err)
		}
	}
	// A keychain of one generation only still opens: an empty list.
	empty, err := cur.SealKeychain(Keychain{})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := cur.OpenKeychain(empty); err != nil || len(c.Keys) != 0 {
		t.Errorf("OpenKeychain(empty) = %+v, %v", c, err)
	}
}

func FuzzOpenKeychain(f *testing.F) {
	k := testKey(f, 3)
	k0, _ := NewGeneration(false)
	var c Keychain
	c.Add(k0, strings.Repeat("e", 40))
	sealed, err := k.SealKeychain(c)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sealed)
	f.Add([]byte(keychainHeader))
	f.Fuzz(func(t *testing.T, b []byte) {
		k.OpenKeychain(b) // must not panic, whatever b holds
	})
}

// TestGenerationHidesLengths: under a generation's key a stored name tells
// only its bucket (a name of 4 bytes and one of 12 look alike), a name padded
// otherwise does not open, and a sealed message's length tells only its
// bucket; a key of format 2 keeps its exact lengths, so its vaults read on.
func TestGenerationHidesLengths(t *testing.T) {
	gen, _ := NewGeneration(false)
	old, _ := NewKey()
	seal := func(k *Key, name string) string {
		s, err := k.SealName("/memories", name)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := k.OpenName("/memories", s); err != nil || got != name {
			t.Fatalf("OpenName(SealName(%q)) = %q, %v", name, got, err)
		}
		return s
	}
	if a, b := seal(gen, "a.md"), seal(gen, "passwords.md"); len(a) != len(b) {
		t.Errorf("a generation's stored names of a 4-byte and a 12-byte name are %d and %d long", len(a), len(b))
	}
	if a, b := seal(gen, strings.Repeat("x", 24)), seal(gen, strings.Repeat("x", 25)); len(a) == len(b) {
		t.Errorf("names either side of a bucket's edge look alike: the buckets are not as documented")
	}
	if a, b := seal(old, "a.md"), seal(old, "passwords.md"); len(a) == len(b) {
		t.Errorf("a format 2 key padded its names: its vaults' stored names would change")
	}
	if long := seal(gen, strings.Repeat("y", MaxName)); len(long) > MaxStoredName {
		t.Errorf("the longest name stores in %d bytes, over %d", len(long), MaxStoredName)
	}
	// A name padded to another length than its bucket does not open: one
	// stored name a name.
	ct, err := gen.names.EncryptDeterministically(append([]byte("a.md"), make([]byte, 40)...), []byte("/memories"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.OpenName("/memories", nameEncoding.EncodeToString(ct)); !errors.Is(err, ErrNotSealed) {
		t.Errorf("OpenName of a name padded past its bucket = %v, want ErrNotSealed", err)
	}
	msg := func(k *Key, text string) int {
		s, err := k.SealMessage(Message{Text: text, AuthorName: "claude", AuthorEmail: "a@b"})
		if err != nil {
			t.Fatal(err)
		}
		if m, err := k.OpenMessage(s); err != nil || m.Text != text {
			t.Fatalf("OpenMessage(SealMessage(%q)) = %q, %v", text, m.Text, err)
		}
		return len(s)
	}
	short := "create /memories/a.md\n\nMemory-Command: create\nMemory-Path: /memories/a.md\n"
	long := "create /memories/projects/acme/notes.md\n\nMemory-Command: create\nMemory-Path: /memories/projects/acme/notes.md\nTool-Use-Id: toolu_01ABCDEFGHIJ\nAgent: claude-code\n"
	if a, b := msg(gen, short), msg(gen, long); a != b {
		t.Errorf("a generation's sealed messages of a short and a long path are %d and %d bytes", a, b)
	}
	if a, b := msg(old, short), msg(old, long); a == b {
		t.Errorf("a format 2 key padded its messages to buckets")
	}
}
