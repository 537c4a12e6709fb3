package seal

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"filippo.io/age"
	"filippo.io/age/agessh"
	"golang.org/x/crypto/ssh"
)

// testKey returns a key with fixed bytes, so a failure can be reproduced.
func testKey(t testing.TB, fill byte) *Key {
	t.Helper()
	var raw [KeySize]byte
	for i := range raw {
		raw[i] = fill + byte(i)
	}
	k, err := newKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestKeyFileForm(t *testing.T) {
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	b := k.Marshal()
	k2, err := ParseKey(b)
	if err != nil {
		t.Fatalf("ParseKey(Marshal()) = %v", err)
	}
	if k2.Fingerprint() != k.Fingerprint() || k2.raw != k.raw {
		t.Errorf("ParseKey(Marshal()) is another key")
	}
	k3, _ := NewKey()
	if k3.Fingerprint() == k.Fingerprint() {
		t.Errorf("two new keys share fingerprint %s", k.Fingerprint())
	}
	secret := base64.StdEncoding.EncodeToString(k.raw[:])
	for _, tc := range []struct{ name, in string }{
		{"empty", ""},
		{"future version", strings.Replace(string(b), "/v1", "/v3", 1)},
		{"v2 with no identity", strings.Replace(string(b), "/v1", "/v2", 1)},
		{"no version line", secret + "\n"},
		{"no final newline", strings.TrimSuffix(string(b), "\n")},
		{"trailing line", string(b) + "x\n"},
		{"short key", keyHeader + base64.StdEncoding.EncodeToString(k.raw[:32]) + "\n"},
		{"bad base64", keyHeader + strings.Repeat("!", len(secret)) + "\n"},
		{"age file", "age-encryption.org/v1\n-> X25519 abc\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseKey([]byte(tc.in))
			if !errors.Is(err, ErrKeyFormat) {
				t.Fatalf("ParseKey(%q) = %v, want ErrKeyFormat", tc.in, err)
			}
			if strings.Contains(err.Error(), secret[:16]) {
				t.Errorf("ParseKey error %q shows key material", err)
			}
		})
	}
	_, err = ParseKey([]byte(strings.Replace(string(b), "/v1", "/v3", 1)))
	if err == nil || !strings.Contains(err.Error(), `"v3"`) {
		t.Errorf("ParseKey(v3) = %v, want it to name the version", err)
	}
}

func TestNames(t *testing.T) {
	k, other := testKey(t, 1), testKey(t, 2)
	names := []string{"a.md", "x", strings.Repeat("é", MaxName/2), strings.Repeat("n", MaxName), "HIV diagnosis.md", "node_modules", ".hidden", "a\\b"}
	seen := map[string]bool{}
	for _, n := range names {
		s, err := k.SealName("/memories/clients", n)
		if err != nil {
			t.Fatalf("SealName(%q) = %v", n, err)
		}
		if len(s) > MaxStoredName || strings.Trim(s, "abcdefghijklmnopqrstuvwxyz234567") != "" {
			t.Errorf("SealName(%q) = %q: not lower base32 within %d bytes", n, s, MaxStoredName)
		}
		if seen[s] {
			t.Errorf("SealName(%q) = %q, a stored name already given", n, s)
		}
		seen[s] = true
		again, _ := k.SealName("/memories/clients", n)
		if again != s {
			t.Errorf("SealName(%q) twice = %q, %q: not deterministic", n, s, again)
		}
		if got, err := k.OpenName("/memories/clients", s); err != nil || got != n {
			t.Errorf("OpenName(SealName(%q)) = %q, %v", n, got, err)
		}
		// The same name in another folder, or under another key, does not open.
		if _, err := k.OpenName("/memories/other", s); !errors.Is(err, ErrNotSealed) {
			t.Errorf("OpenName in another folder = %v, want ErrNotSealed", err)
		}
		if _, err := other.OpenName("/memories/clients", s); !errors.Is(err, ErrNotSealed) {
			t.Errorf("OpenName under another key = %v, want ErrNotSealed", err)
		}
		if elsewhere, _ := k.SealName("/memories/other", n); elsewhere == s {
			t.Errorf("SealName(%q) is the same in two folders", n)
		}
	}
	for _, bad := range []struct {
		name string
		want error
	}{
		{"", ErrBadName}, {".", ErrBadName}, {"..", ErrBadName}, {"a/b", ErrBadName}, {"a\x00", ErrBadName},
		{strings.Repeat("n", MaxName+1), ErrNameTooLong},
	} {
		if _, err := k.SealName("/memories", bad.name); !errors.Is(err, bad.want) {
			t.Errorf("SealName(%q) = %v, want %v", bad.name, err, bad.want)
		}
	}
	good, _ := k.SealName("/memories", "a.md")
	flipped := []byte(good)
	flipped[5] ^= 1 // still a letter of the alphabet? make it one
	if flipped[5] < 'a' || flipped[5] > 'z' {
		flipped[5] = 'a'
	}
	for _, stored := range []string{
		"", "a.md", "memories", strings.ToUpper(good), good[:len(good)-1], good + "a",
		string(flipped), strings.Repeat("a", 256), good + "=", "con",
	} {
		if stored == good {
			continue
		}
		_, err := k.OpenName("/memories", stored)
		if !errors.Is(err, ErrNotSealed) {
			t.Errorf("OpenName(%q) = %v, want ErrNotSealed", stored, err)
		} else if stored != "" && strings.Contains(err.Error(), stored) {
			t.Errorf("OpenName(%q) error %q quotes the name", stored, err)
		}
	}
}

// A sealed name whose last letter carries unused low bits is the same bytes to
// base32, so it would be a second stored name for the same file.
func TestNameNonCanonical(t *testing.T) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	k := testKey(t, 1)
	for _, n := range []string{"a", "ab.md", "abcdef", "notes.md"} {
		s, _ := k.SealName("/memories", n)
		last := strings.IndexByte(alphabet, s[len(s)-1])
		for d := 1; d < 32; d++ {
			alt := s[:len(s)-1] + string(alphabet[(last+d)%32])
			if got, err := k.OpenName("/memories", alt); err == nil {
				t.Errorf("OpenName(%q), a respelling of SealName(%q), = %q, want ErrNotSealed", alt, n, got)
			}
		}
	}
}

func TestPaths(t *testing.T) {
	k := testKey(t, 1)
	s, err := k.SealPath("/memories", "/memories/clients/acme/notes.md")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(s, "/") != 2 || strings.Contains(s, "acme") {
		t.Errorf("SealPath = %q, want three sealed components", s)
	}
	top, _ := k.SealName("/memories", "clients")
	if !strings.HasPrefix(s, top+"/") {
		t.Errorf("SealPath = %q does not start with SealName(clients) %q", s, top)
	}
	if p, err := k.OpenPath("/memories", s); err != nil || p != "/memories/clients/acme/notes.md" {
		t.Errorf("OpenPath(%q) = %q, %v", s, p, err)
	}
	if s, err := k.SealPath("/memories", "/memories"); s != "" || err != nil {
		t.Errorf("SealPath(root) = %q, %v", s, err)
	}
	if _, err := k.SealPath("/memories", "/other/x"); err == nil {
		t.Errorf("SealPath(/other/x) = nil error")
	}
	// Swapping two sealed components of a path does not open: each is bound to
	// its folder.
	parts := strings.Split(s, "/")
	parts[1], parts[2] = parts[2], parts[1]
	if _, err := k.OpenPath("/memories", strings.Join(parts, "/")); !errors.Is(err, ErrNotSealed) {
		t.Errorf("OpenPath(swapped) = %v, want ErrNotSealed", err)
	}
}

func TestMessages(t *testing.T) {
	k := testKey(t, 1)
	m := Message{
		Text:       "create /memories/clients/acme/hiv.md\n\nMemory-Command: create\nTool-Use-Id: toolu_01ABC\nAgent: canary-agent\n",
		AuthorName: "canary-agent", AuthorEmail: "agent@memvault",
	}
	s, err := k.SealMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"acme", "hiv", "toolu", "canary", "create"} {
		if strings.Contains(s, leak) {
			t.Errorf("SealMessage = %q shows %q", s, leak)
		}
	}
	if !IsSealed(s) {
		t.Errorf("IsSealed(%q) = false", s)
	}
	got, err := k.OpenMessage(s)
	if err != nil || got != m {
		t.Errorf("OpenMessage(SealMessage(m)) = %+v, %v, want %+v", got, err, m)
	}
	if s2, _ := k.SealMessage(m); s2 == s {
		t.Errorf("SealMessage twice gave one message: equal commands would show")
	}
	// Lengths are blurred to a block.
	short, _ := k.SealMessage(Message{Text: "a"})
	longer, _ := k.SealMessage(Message{Text: "abcdefghij"})
	if len(short) != len(longer) {
		t.Errorf("sealed lengths %d and %d for 1 and 10 bytes, want equal", len(short), len(longer))
	}
	if empty, err := k.OpenMessage(mustSeal(t, k, Message{})); err != nil || empty != (Message{}) {
		t.Errorf("OpenMessage(empty) = %+v, %v", empty, err)
	}

	enc := strings.TrimSuffix(strings.TrimPrefix(s, Subject+"\n\n"+Trailer+": "), "\n")
	raw, _ := base64.RawStdEncoding.DecodeString(enc)
	flip := append([]byte(nil), raw...)
	flip[len(flip)-1] ^= 1
	other := testKey(t, 2)
	for _, tc := range []struct{ name, msg string }{
		{"plain message", m.Text},
		{"empty", ""},
		{"no newline", strings.TrimSuffix(s, "\n")},
		{"second trailer", s + "Tool-Use-Id: x\n"},
		{"flipped bit", Subject + "\n\n" + Trailer + ": " + base64.RawStdEncoding.EncodeToString(flip) + "\n"},
		{"padded base64", strings.TrimSuffix(s, "\n") + "==\n"},
		{"short", Subject + "\n\n" + Trailer + ": AAAA\n"},
	} {
		if _, err := k.OpenMessage(tc.msg); !errors.Is(err, ErrBadMessage) {
			t.Errorf("OpenMessage(%s) = %v, want ErrBadMessage", tc.name, err)
		}
	}
	if _, err := other.OpenMessage(s); !errors.Is(err, ErrBadMessage) {
		t.Errorf("OpenMessage under another key = %v, want ErrBadMessage", err)
	}
}

func mustSeal(t *testing.T, k *Key, m Message) string {
	t.Helper()
	s, err := k.SealMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A frame with a valid tag but bad insides can only come from a holder of the
// key; OpenMessage still refuses it rather than guess.
func TestMessageBadInsides(t *testing.T) {
	k := testKey(t, 1)
	seal := func(pt []byte) string {
		ct, err := k.msgs.EncryptDeterministically(pt, []byte(Trailer))
		if err != nil {
			t.Fatal(err)
		}
		return Subject + "\n\n" + Trailer + ": " + base64.RawStdEncoding.EncodeToString(ct) + "\n"
	}
	frame := func(version byte, body []byte, pad int) []byte {
		pt := append(make([]byte, msgNonce), version)
		pt = append(pt, body...)
		return append(pt, make([]byte, pad)...)
	}
	for _, tc := range []struct {
		name string
		pt   []byte
	}{
		{"version 2", frame(2, []byte{0, 0, 0}, 12)},
		{"length past the end", frame(1, []byte{0, 0, 200}, 12)},
		{"not a block", frame(1, []byte{0, 0, 0}, 3)},
		{"nonzero padding", append(frame(1, []byte{0, 0, 0}, 11), 1)},
		{"a whole block of padding", frame(1, []byte{0, 0, 0}, 44)},
	} {
		if _, err := k.OpenMessage(seal(tc.pt)); !errors.Is(err, ErrBadMessage) {
			t.Errorf("OpenMessage(%s) = %v, want ErrBadMessage", tc.name, err)
		}
	}
}

func TestPad(t *testing.T) {
	for _, n := range []int{0, 1, 100, 1015, 1024, 1079, 1080, 5000, 5100, 64 << 10, 1 << 20} {
		plain := bytes.Repeat([]byte{'x'}, n)
		frame := Pad(plain)
		if int64(len(frame)) != PaddedLen(int64(n)) {
			t.Errorf("len(Pad(%d bytes)) = %d, PaddedLen = %d", n, len(frame), PaddedLen(int64(n)))
		}
		if len(frame) < n+padHeader || float64(len(frame)) > max(MinPadded, 1.12*float64(n+padHeader)) {
			t.Errorf("Pad(%d bytes) = %d bytes: outside [n+%d, max(%d, 1.12(n+%d))]", n, len(frame), padHeader, MinPadded, padHeader)
		}
		got, err := Unpad(frame)
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("Unpad(Pad(%d bytes)) = %d bytes, %v", n, len(got), err)
		}
	}
	// What the host could tell apart before (the sizes of a canary run), it
	// can no longer: under 1 KiB all alike, 5,000 and 5,100 in one bucket.
	for _, same := range [][2]int64{{5, 300}, {300, 900}, {0, 1024}, {5000, 5100}} {
		if a, b := PaddedLen(same[0]), PaddedLen(same[1]); a != b {
			t.Errorf("PaddedLen(%d) = %d, PaddedLen(%d) = %d, want one bucket", same[0], a, same[1], b)
		}
	}
	// Every bucket is a Padmé bucket: at most ⌊log2 ⌊log2 n⌋⌋+1 significant bits.
	for n := int64(0); n < 300000; n += 7 {
		p := PaddedLen(n)
		if p < n+padHeader || (p > MinPadded && padme(p) != p) || PaddedLen(p-padHeader) != p {
			t.Fatalf("PaddedLen(%d) = %d: not a fixed point of Padmé", n, p)
		}
	}
}

func TestUnpadRefuses(t *testing.T) {
	good := Pad([]byte("hello"))
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		{"empty", nil},
		{"header only, short", good[:5]},
		{"version 0", mut(func(b []byte) []byte { b[0] = 0; return b })},
		{"version 2", mut(func(b []byte) []byte { b[0] = 2; return b })},
		{"length past the end", mut(func(b []byte) []byte { b[8] = 0xff; b[7] = 0xff; return b })},
		{"huge length", mut(func(b []byte) []byte { b[1] = 0xff; return b })},
		{"nonzero padding", mut(func(b []byte) []byte { b[len(b)-1] = 1; return b })},
		{"one byte short", good[:len(good)-1]},
		{"one byte long", append(append([]byte(nil), good...), 0)},
		{"another length in the same bucket", mut(func(b []byte) []byte { b[8] = 6; return b })},
	} {
		got, err := Unpad(tc.frame)
		if tc.name == "another length in the same bucket" {
			// The padding is zero and the bucket right: the frame says
			// 6 bytes, and 6 bytes it is ("hello" and a zero).
			if err != nil || string(got) != "hello\x00" {
				t.Errorf("Unpad(%s) = %q, %v", tc.name, got, err)
			}
			continue
		}
		if !errors.Is(err, ErrBadPad) {
			t.Errorf("Unpad(%s) = %d bytes, %v, want ErrBadPad", tc.name, len(got), err)
		}
	}
}

func TestSize(t *testing.T) {
	k, other := testKey(t, 1), testKey(t, 2)
	hdr := []byte("age-encryption.org/v1\n-> X25519 aaa\nbbb\n--- mac\n")
	h, err := k.SealSize(1234, hdr)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != SizeHeaderLen || !HasSizeHeader(append(h, hdr...)) {
		t.Fatalf("SealSize = %d bytes, want %d with the magic", len(h), SizeHeaderLen)
	}
	if h2, _ := k.SealSize(1234, hdr); bytes.Equal(h, h2) {
		t.Errorf("SealSize twice gave one header: equal sizes would show")
	}
	if n, err := k.OpenSize(append(h, hdr...), hdr); err != nil || n != 1234 {
		t.Errorf("OpenSize(SealSize(1234)) = %d, %v", n, err)
	}
	if _, err := k.OpenSize(h, []byte("age-encryption.org/v1\n-> X25519 ccc\n")); !errors.Is(err, ErrBadSize) {
		t.Errorf("OpenSize with another age header = %v, want ErrBadSize", err)
	}
	if _, err := other.OpenSize(h, hdr); !errors.Is(err, ErrBadSize) {
		t.Errorf("OpenSize under another key = %v, want ErrBadSize", err)
	}
	for _, bad := range [][]byte{nil, h[:SizeHeaderLen-1], hdr, append([]byte("mvs2"), h[4:]...)} {
		if _, err := k.OpenSize(bad, hdr); !errors.Is(err, ErrBadSize) {
			t.Errorf("OpenSize(%q) = %v, want ErrBadSize", bad, err)
		}
	}
	if _, err := k.SealSize(-1, hdr); err == nil {
		t.Errorf("SealSize(-1) = nil error")
	}
}

// A key equals its own file form read back, and no other key.
func TestKeyEqual(t *testing.T) {
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseKey(k.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	if !k.Equal(back) || k.Equal(other) {
		t.Errorf("k.Equal(ParseKey(k)) = %v, k.Equal(another key) = %v; want true, false", k.Equal(back), k.Equal(other))
	}
}

// TestSealBlob checks the blob helpers on a real age file: the size opens
// from the blob's head, a reseal opens under the new key only and keeps the
// age file, and a head cut inside the age header, a blob with no size header
// and a header moved onto another age file are refused.
func TestSealBlob(t *testing.T) {
	k, _ := NewKey()
	other, _ := NewKey()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	ageFile := func(plain string) []byte {
		var b bytes.Buffer
		w, err := age.Encrypt(&b, id.Recipient())
		if err != nil {
			t.Fatal(err)
		}
		w.Write(Pad([]byte(plain)))
		w.Close()
		return b.Bytes()
	}
	af := ageFile("hello")
	blob, err := k.SealBlob(5, af)
	if err != nil || !bytes.Equal(blob[SizeHeaderLen:], af) {
		t.Fatalf("SealBlob = %d bytes, %v; want the size header and the age file", len(blob), err)
	}
	if n, err := k.OpenBlobSize(blob[:SizeHeaderLen+200]); err != nil || n != 5 {
		t.Errorf("OpenBlobSize = %d, %v; want 5", n, err)
	}
	if _, err := k.OpenBlobSize(blob[:SizeHeaderLen+20]); !errors.Is(err, ErrNoAgeHeader) {
		t.Errorf("OpenBlobSize of a head cut in the age header = %v, want ErrNoAgeHeader", err)
	}
	if _, err := k.OpenBlobSize(af); !errors.Is(err, ErrBadSize) {
		t.Errorf("OpenBlobSize of a plain age file = %v, want ErrBadSize", err)
	}
	if _, err := k.OpenBlobSize(append(blob[:SizeHeaderLen:SizeHeaderLen], ageFile("hello")...)); !errors.Is(err, ErrBadSize) {
		t.Errorf("OpenBlobSize of a header moved onto another age file = %v, want ErrBadSize", err)
	}
	re, err := other.ResealBlob(k, blob)
	if err != nil || !bytes.Equal(re[SizeHeaderLen:], af) {
		t.Fatalf("ResealBlob = %d bytes, %v; want a new header on the same age file", len(re), err)
	}
	if n, err := other.OpenBlobSize(re); err != nil || n != 5 {
		t.Errorf("OpenBlobSize of the resealed blob = %d, %v; want 5", n, err)
	}
	if _, err := k.OpenBlobSize(re); !errors.Is(err, ErrBadSize) {
		t.Errorf("OpenBlobSize of the resealed blob under the old key = %v, want ErrBadSize", err)
	}
	if _, err := other.ResealBlob(other, blob); !errors.Is(err, ErrBadSize) {
		t.Errorf("ResealBlob from the wrong key = %v, want ErrBadSize", err)
	}
	if _, err := k.SealBlob(5, []byte("not age")); !errors.Is(err, ErrNoAgeHeader) {
		t.Errorf("SealBlob of no age file = %v, want ErrNoAgeHeader", err)
	}
}

// ageFiles returns real age files for the header readers: to one X25519
// recipient, to three, to a post-quantum hybrid one, to an SSH key, and to a
// passphrase, each of a few bytes and of a few kilobytes.
func ageFiles(t testing.TB) map[string][]byte {
	t.Helper()
	var x []age.Recipient
	for range 3 {
		id, err := age.GenerateX25519Identity()
		if err != nil {
			t.Fatal(err)
		}
		x = append(x, id.Recipient())
	}
	pq, err := age.GenerateHybridIdentity()
	if err != nil {
		t.Fatal(err)
	}
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	sshR, err := agessh.NewEd25519Recipient(sshPub)
	if err != nil {
		t.Fatal(err)
	}
	pass, err := age.NewScryptRecipient("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	pass.SetWorkFactor(10)
	sets := map[string][]age.Recipient{
		"x25519": x[:1], "x25519x3": x, "hybrid": {pq.Recipient()}, "ssh": {sshR}, "scrypt": {pass},
	}
	files := map[string][]byte{}
	for name, rs := range sets {
		for _, size := range []int{3, 5000} {
			var b bytes.Buffer
			w, err := age.Encrypt(&b, rs...)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(bytes.Repeat([]byte("m"), size))
			w.Close()
			files[fmt.Sprintf("%s/%d", name, size)] = b.Bytes()
		}
	}
	return files
}

// TestAgeHeaderLen: age's own parser is the oracle for where the header of
// real age files ends, and a sealed size opens from any of them by the short
// way; a head cut before the MAC line's end has no header.
func TestAgeHeaderLen(t *testing.T) {
	k := testKey(t, 1)
	for name, f := range ageFiles(t) {
		hdr, err := age.ExtractHeader(bytes.NewReader(f))
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := ageHeaderLen(f); !ok || n != len(hdr) {
			t.Errorf("%s: ageHeaderLen = %d, %v; want %d, as age.ExtractHeader", name, n, ok, len(hdr))
		}
		if _, ok := ageHeaderLen(f[:len(hdr)-1]); ok {
			t.Errorf("%s: a header cut before its MAC line's end has a length", name)
		}
		blob, err := k.SealBlob(42, f)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := k.OpenBlobSize(blob); err != nil || n != 42 {
			t.Errorf("%s: OpenBlobSize = %d, %v; want 42", name, n, err)
		}
	}
}

// TestOpenBlobSizeOfDamagedHeader: a sealed size over an age header damaged
// after the fact says what it said when age's parser read every header: no
// age header where the parser refuses it, no size of this key where it does not.
func TestOpenBlobSizeOfDamagedHeader(t *testing.T) {
	k := testKey(t, 1)
	f := ageFiles(t)["x25519/3"]
	blob, err := k.SealBlob(3, f)
	if err != nil {
		t.Fatal(err)
	}
	stanza := SizeHeaderLen + bytes.Index(f, []byte("-> X25519 ")) + len("-> X25519 ")
	other := byte('A')
	if blob[stanza] == other {
		other = 'B'
	}
	for _, c := range []struct {
		name string
		at   int
		b    byte
		want error
	}{
		{"a stanza's argument changed", stanza, other, ErrBadSize},
		{"a stanza line not a stanza's", stanza - len("> X25519 "), 'x', ErrNoAgeHeader},
		{"the version line changed", SizeHeaderLen + 4, 'X', ErrNoAgeHeader},
	} {
		bad := bytes.Clone(blob)
		bad[c.at] = c.b
		if _, err := k.OpenBlobSize(bad); !errors.Is(err, c.want) {
			t.Errorf("%s: OpenBlobSize = %v, want %v", c.name, err, c.want)
		}
	}
}
