package vault

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog"
)

const tamperPath = "/memories/notes/tampered.md"

// tamperVault makes a vault holding one file at tamperPath and returns it with
// that file's plaintext and ciphertext.
func tamperVault(tb testing.TB, size int) (v *Vault, plain, ct []byte) {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	// Plain: the damaged age files are staged at the plain tree path, bare,
	// as the plain format stores them (a sealed blob adds a size header).
	v, _, err := Init(ctx, filepath.Join(dir, "v.git"), Options{IdentityFile: filepath.Join(dir, "id"), Plain: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { v.Close() })
	plain = bytes.Repeat([]byte("PLAINTEXT-MARKER line\n"), size/22+1)[:size]
	if err := v.Update(ctx, Meta{Command: "create"}, func(tx *Tx) error { return tx.WriteFile(ctx, tamperPath, plain) }); err != nil {
		tb.Fatal(err)
	}
	s, err := v.Snapshot(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	e, _, err := s.lookup(tamperPath)
	if err != nil {
		tb.Fatal(err)
	}
	if ct, err = v.repo.ReadBlob(e.Hash); err != nil {
		tb.Fatal(err)
	}
	return v, plain, ct
}

// checkTampered is the contract for a damaged ciphertext: either it decrypts to
// exactly the original plaintext (age authenticates everything, so only an
// unchanged file can), or the error wraps ErrDecrypt (ErrBadEntry when it is
// no age file at all: the identity is not at fault), names the memory path and
// holds no plaintext.
func checkTampered(t *testing.T, got []byte, err error, plain []byte) {
	t.Helper()
	if err == nil {
		if !bytes.Equal(got, plain) {
			t.Fatalf("a damaged ciphertext decrypted to different plaintext (%d bytes, want %d)", len(got), len(plain))
		}
		return
	}
	if !errors.Is(err, ErrDecrypt) && !errors.Is(err, ErrBadEntry) {
		t.Fatalf("error %v wraps neither ErrDecrypt nor ErrBadEntry", err)
	}
	if !strings.Contains(err.Error(), tamperPath) {
		t.Fatalf("error %q does not name %s", err, tamperPath)
	}
	if strings.Contains(err.Error(), "PLAINTEXT-MARKER") {
		t.Fatalf("error %q holds plaintext", err)
	}
}

// TestTamperedCiphertext commits damaged ciphertexts into a real vault, each
// in place of the file, and reads them back through a snapshot: flipped bytes
// in the header, its MAC, the payload nonce, the body and the last chunk's tag,
// and truncations at each of those places.
func TestTamperedCiphertext(t *testing.T) {
	ctx := context.Background()
	v, plain, ct := tamperVault(t, 70<<10) // two payload chunks
	hdr := bytes.Index(ct, []byte("\n--- ")) + 1
	mac := hdr + 4
	body := bytes.IndexByte(ct[hdr:], '\n') + hdr + 1 // the payload: nonce, then chunks
	cases := []struct {
		name string
		at   int // byte to flip, or -1
		cut  int // length to truncate to, or -1
	}{
		{"flip version line", 3, -1},
		{"flip stanza", 30, -1},
		{"flip header MAC", mac + 5, -1},
		{"flip payload nonce", body + 3, -1},
		{"flip first chunk", body + 16 + 100, -1},
		{"flip first chunk tag", body + 16 + 64<<10 + 3, -1},
		{"flip last byte (last tag)", len(ct) - 1, -1},
		{"truncate to nothing", -1, 0},
		{"truncate in header", -1, hdr / 2},
		{"truncate after header", -1, body},
		{"truncate in nonce", -1, body + 8},
		{"truncate after first chunk", -1, body + 16 + 64<<10 + 16},
		{"truncate one byte", -1, len(ct) - 1},
		{"truncate tag", -1, len(ct) - 16},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := bytes.Clone(ct)
			if c.at >= 0 {
				bad[c.at] ^= 0x01
			}
			if c.cut >= 0 {
				bad = bad[:c.cut]
			}
			tp, _ := treePath(tamperPath)
			err := v.Update(ctx, Meta{Command: "tamper"}, func(tx *Tx) error {
				return tx.stage(tamperPath, "", gitlog.Change{Op: gitlog.Put, Path: tp, Data: bad})
			})
			if err != nil {
				t.Fatal(err)
			}
			s, err := v.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.ReadFile(ctx, tamperPath)
			if err == nil {
				t.Fatalf("ReadFile(%q) of a damaged ciphertext = %d bytes, nil; want an ErrDecrypt", tamperPath, len(got))
			}
			checkTampered(t, got, err, plain)
		})
	}
}

// FuzzCiphertext: a memory blob can arrive from any remote, or rot on disk.
// Decrypting a damaged one never panics and never yields other plaintext.
func FuzzCiphertext(f *testing.F) {
	v, plain, ct := tamperVault(f, 300)
	f.Add(ct, 0, byte(0), len(ct))
	f.Add(ct, 40, byte(1), len(ct))
	f.Add(ct, len(ct)-1, byte(0x80), len(ct))
	f.Add(ct, 0, byte(0), len(ct)/2)
	f.Add([]byte("age-encryption.org/v1\n-> X25519 x\ny\n--- z\n"), 0, byte(0), 60)
	f.Fuzz(func(t *testing.T, base []byte, at int, flip byte, cut int) {
		bad := bytes.Clone(base)
		if len(bad) > 0 && at >= 0 {
			bad[at%len(bad)] ^= flip
		}
		if cut >= 0 && cut < len(bad) {
			bad = bad[:cut]
		}
		got, err := v.keys.decrypt(tamperPath, bad)
		checkTampered(t, got, err, plain)
	})
}
