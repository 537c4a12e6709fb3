package seal

import (
	"bytes"
	"testing"

	"filippo.io/age"
)

// The fuzz targets feed what a remote can write (stored names, commit messages,
// blobs) to the functions that open it: none may panic, allocate beyond what
// its input bounds, or accept anything but what the sealing side writes.

func FuzzOpenName(f *testing.F) {
	k := testKey(f, 1)
	good, _ := k.SealName("/memories", "a.md")
	for _, s := range []string{good, "", "a.md", good[:len(good)-1] + "b", "AAAA", string(make([]byte, 300))} {
		f.Add("/memories", s)
	}
	f.Fuzz(func(t *testing.T, dir, stored string) {
		name, err := k.OpenName(dir, stored)
		if err != nil {
			return
		}
		if again, err := k.SealName(dir, name); err != nil || again != stored {
			t.Fatalf("OpenName(%q, %q) = %q, which seals to %q, %v", dir, stored, name, again, err)
		}
	})
}

func FuzzOpenMessage(f *testing.F) {
	k := testKey(f, 1)
	good, _ := k.SealMessage(Message{Text: "create /memories/a.md\n\nMemory-Command: create\n", AuthorName: "agent"})
	for _, s := range []string{good, "", Subject + "\n\n" + Trailer + ": \n", good[:len(good)-3] + "A\n", "create /memories/a.md\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		m, err := k.OpenMessage(msg)
		if err == nil && len(m.Text)+len(m.AuthorName)+len(m.AuthorEmail) > len(msg) {
			t.Fatalf("OpenMessage(%d bytes) opened %d bytes", len(msg), len(m.Text)+len(m.AuthorName)+len(m.AuthorEmail))
		}
	})
}

func FuzzUnpad(f *testing.F) {
	for _, s := range [][]byte{Pad(nil), Pad([]byte("hello")), Pad(make([]byte, 5000)), {1, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		plain, err := Unpad(frame)
		if err != nil {
			return
		}
		if !bytes.Equal(Pad(plain), frame) {
			t.Fatalf("Unpad accepted a frame Pad would not write for its %d bytes", len(plain))
		}
	})
}

func FuzzOpenSize(f *testing.F) {
	k := testKey(f, 1)
	hdr := []byte("age-encryption.org/v1\n--- mac\n")
	good, _ := k.SealSize(42, hdr)
	f.Add(good, hdr)
	f.Add(append([]byte(nil), good[:10]...), hdr)
	f.Add([]byte("mvs1"), []byte(nil))
	f.Fuzz(func(t *testing.T, blob, ageHeader []byte) {
		n, err := k.OpenSize(blob, ageHeader)
		if err == nil && n < 0 {
			t.Fatalf("OpenSize = %d", n)
		}
	})
}

func FuzzParseKey(f *testing.F) {
	k := testKey(f, 1)
	f.Add(k.Marshal())
	f.Add([]byte(keyHeader))
	f.Add([]byte("memvault-vault-key/v9\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKey(b)
		if err == nil && !bytes.Equal(k.Marshal(), b) {
			t.Fatalf("ParseKey accepted a file Marshal would not write")
		}
	})
}

// Opening what a remote wrote allocates nothing that grows with a lie inside
// it: Unpad returns a slice of its input, and a refused name or frame costs a
// handful of small allocations at most.
func TestOpenAllocs(t *testing.T) {
	frame := Pad(make([]byte, 100<<10))
	if n := testing.AllocsPerRun(100, func() { _, _ = Unpad(frame) }); n != 0 {
		t.Errorf("Unpad allocates %v times, want 0", n)
	}
	lie := append([]byte(nil), frame...)
	lie[1] = 0x7f // a length of petabytes
	if n := testing.AllocsPerRun(100, func() { _, _ = Unpad(lie) }); n > 8 {
		t.Errorf("Unpad(lying length) allocates %v times, want at most 8 (its error)", n)
	}
}

// FuzzAgeHeaderLen: wherever age's parser takes a header, ageHeaderLen ends
// it where the parser does.
func FuzzAgeHeaderLen(f *testing.F) {
	for _, file := range ageFiles(f) {
		f.Add(file)
	}
	f.Add([]byte("age-encryption.org/v1\n-> X25519 ---\n--- mac\n"))
	f.Fuzz(func(t *testing.T, file []byte) {
		hdr, err := age.ExtractHeader(bytes.NewReader(file))
		if err != nil {
			return
		}
		if n, ok := ageHeaderLen(file); !ok || n != len(hdr) {
			t.Fatalf("ageHeaderLen = %d, %v; age.ExtractHeader takes %d bytes", n, ok, len(hdr))
		}
	})
}
