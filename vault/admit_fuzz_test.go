package vault

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzAdmitName: any tree entry name can arrive from a remote. A name the
// admission check lets under memories/ is one git and every file system take
// as a plain file name: no separator, no "." or "..", no control character, no
// spelling of .git (HFS+ ignorables, case, trailing dots and spaces, an NTFS
// stream), at most 255 bytes.
func FuzzAdmitName(f *testing.F) {
	for _, s := range []string{"a.md", "..", ".", "a/b", ".git", ".GIT ", ".g\u200cit", "\u200c.git", ".git::$INDEX_ALLOCATION", "git~1", "a\nb", `a\b`, "", "\x00", strings.Repeat("n", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if badGitName(name) != "" {
			return
		}
		if _, err := CleanPath("/" + memDir + "/" + name); err != nil {
			return
		}
		lower, _, _ := strings.Cut(strings.ToLower(gitIgnorable.Replace(name)), ":") // an NTFS stream
		lower = strings.TrimRight(lower, ". ")
		switch {
		case name == "", name == ".", name == "..", strings.ContainsAny(name, "/\\\x00"),
			len(name) > 255, lower == ".git", lower == "git~1":
			t.Fatalf("admitted %q", name)
		}
		for _, r := range name {
			if unicode.IsControl(r) {
				t.Fatalf("admitted %q with a control character", name)
			}
		}
	})
}
