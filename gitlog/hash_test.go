package gitlog_test

import (
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog"
)

// TestParseHash: a hash reads back as it prints, in either case, and anything
// but 40 hexadecimal digits is refused rather than read as a zero or partial hash.
func TestParseHash(t *testing.T) {
	h := gitlog.BlobHash([]byte("hello\n"))
	const want = "ce013625030ba8dba906f756967f9e9ca394464a" // git hash-object of "hello\n"
	if h.String() != want {
		t.Fatalf("BlobHash(hello) = %s, want %s", h, want)
	}
	for _, s := range []string{want, strings.ToUpper(want)} {
		if got, err := gitlog.ParseHash(s); err != nil || got != h {
			t.Errorf("ParseHash(%q) = %s, %v; want %s", s, got, err, h)
		}
	}
	for _, s := range []string{"", want[:39], want + "0", "g" + want[1:], strings.Repeat(" ", 40)} {
		if got, err := gitlog.ParseHash(s); err == nil {
			t.Errorf("ParseHash(%q) = %s, nil; want an error", s, got)
		}
	}
	if !gitlog.ZeroHash.IsZero() || h.IsZero() {
		t.Errorf("IsZero: ZeroHash %v, %s %v", gitlog.ZeroHash.IsZero(), h, h.IsZero())
	}
}
