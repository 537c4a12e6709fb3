package main

import (
	"strings"
	"testing"
)

// TestGrepWithABadEntry: one entry put into the vault's tree by
// hand with git (in a sealed vault, a name stored in the clear, which does
// not open under the vault's key; in a plain one, a damaged age file) once
// made `grep` fail whole, in either format, so nothing was searched. Grep
// searches the files that read, keeps grep's exit status, and says on
// stderr, once, that the search was incomplete and which entry it left out.
func TestGrepWithABadEntry(t *testing.T) {
	for _, c := range badEntryFormats {
		t.Run(c.format, func(t *testing.T) {
			cli := badEntryVault(t, c.init, "m-bad.md",
				`{"command":"create","path":"/memories/a.md","file_text":"needle a\n"}`,
				`{"command":"create","path":"/memories/z/z.md","file_text":"needle z\n"}`)
			badLine := "memvault:   /memories/m-bad.md  " + c.reason + "\n"
			incomplete := "memvault: grep: the search is incomplete: 1 entry is no memory file memvault can read, not searched:\n"

			out, code, stderr := cli("", "grep", "needle")
			if want := "/memories/a.md:needle a\n/memories/z/z.md:needle z\n"; code != exitOK || out != want {
				t.Errorf("grep needle = %q (status %d)\n%s\nwant %q, status 0", out, code, stderr, want)
			}
			if stderr != incomplete+badLine {
				t.Errorf("grep needle: stderr = %q\nwant %q", stderr, incomplete+badLine)
			}
			out, code, stderr = cli("", "grep", "nothing")
			if code != exitAnswer || out != "" || stderr != incomplete+badLine {
				t.Errorf("grep nothing = %q (status %d), stderr %q\nwant nothing, status 1, stderr %q", out, code, stderr, incomplete+badLine)
			}
			out, code, stderr = cli("", "grep", "--json", "needle")
			want := `"bad_entries":[{"path":"/memories/m-bad.md","reason":"` + c.reason + `"}]`
			if code != exitOK || !strings.Contains(out, want) || !strings.Contains(out, `"path":"/memories/z/z.md"`) {
				t.Errorf("grep --json needle = %s (status %d)\nwant the files that read and %s", out, code, want)
			}
			if stderr != incomplete+badLine {
				t.Errorf("grep --json needle: stderr = %q\nwant %q", stderr, incomplete+badLine)
			}
		})
	}
}
