package keys

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzRecipientsFile: a recipients file arrives from any remote a vault syncs
// with. Parsing never panics, and what parses renders to a file that parses to
// the same keys and renders the same again.
func FuzzRecipientsFile(f *testing.F) {
	f.Add([]byte("# memvault: every memory file is encrypted to each recipient below.\nage1tclsevtqn2gpffcr2xld9wuk2vtzt0qg5a0tae06n2dz2n9j2pssngf5zd\n"))
	f.Add([]byte("# team\n\nage1tclsevtqn2gpffcr2xld9wuk2vtzt0qg5a0tae06n2dz2n9j2pssngf5zd\n# bob\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHsKLqeplhpuf0sl7Yz2T1AlPxKGJ4ejnN4XAnixg4bs bob@laptop\r\n#end"))
	f.Add([]byte("AGE-SECRET-KEY-1QQQQ\n"))
	f.Add([]byte("age1yubikey1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		rf, err := ParseRecipientsFile(content)
		if err != nil {
			return
		}
		_ = rf.Check()
		once := rf.Bytes()
		again, err := ParseRecipientsFile(once)
		if err != nil {
			t.Fatalf("rendered file does not parse: %v\n%q", err, once)
		}
		if !slices.Equal(rf.List(), again.List()) || !bytes.Equal(once, again.Bytes()) || rf.Fingerprint() != again.Fingerprint() {
			t.Fatalf("render is not stable:\n%q\n%q", once, again.Bytes())
		}
	})
}
