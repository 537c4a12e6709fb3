package mount

import "testing"

// TestTempFor: a new file named after a file beside it, then a random part,
// is an atomic writer's temporary file, whatever the writer's own pattern.
func TestTempFor(t *testing.T) {
	files := map[string]bool{"prefs.md": true, "notes": true}
	isFile := func(name string) bool { return files[name] }
	for name, want := range map[string]bool{
		".prefs.mdbet8rmsq":   true, // Python's tempfile, prefix .NAME
		".prefs.mdabcdefgh":   true, // the same, with no digit drawn
		".prefs.md.abc1defg":  true, // prefix .NAME.
		".prefs.md.yqwnsvda":  true, // the same, with no digit drawn
		"prefs.md3141592653":  true, // Go's os.CreateTemp(dir, NAME)
		"prefs.md.31415":      false,
		"prefs.md.314159":     true,
		"prefs.md-Xy3kQ9":     true,
		"prefs.md.backup":     false, // a word, not a random part
		"prefs.md.personal":   false,
		"other.md.x7k2p9q1":   false, // other.md is not there
		"notes_2024jan":       false, // beside a name with no extension
		"prefs.md":            false,
		"prefs.mdx7k2p9q1.md": false,
	} {
		if got := tempFor(name, isFile); got != want {
			t.Errorf("tempFor(%q) = %v, want %v", name, got, want)
		}
	}
}
