package gitlog

import "testing"

// A password that keeps a URL from parsing (a '/' in it cuts the authority
// short) is hidden all the same.
func TestRedactUnparsed(t *testing.T) {
	for in, want := range map[string]string{
		"https://alice:Tok3n/ABC@host/x": "https://alice:xxxxx@host/x",
		"https://alice:pw@host/x":        "https://alice:xxxxx@host/x",
		"https://host/x":                 "https://host/x",
		"git@host:owner/x.git":           "git@host:owner/x.git",
		"https://h:99999999999/x":        "https://h:99999999999/x",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
