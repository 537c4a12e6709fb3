package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README points only at what the repository has, and asks for the Go
// version go.mod asks for.
func TestReadmeTrue(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	if goLine == nil {
		t.Fatal("go.mod has no go line")
	}
	want := "With Go " + string(goLine[1]) + " or later"
	if !strings.Contains(string(readme), want) {
		t.Errorf("README does not say %q, as go.mod's go line asks", want)
	}
	// Documents named in capitals (such as LICENSE.md) and relative links must exist.
	named := regexp.MustCompile(`\b[A-Z][A-Z_]+\.md\b`).FindAllString(string(readme), -1)
	for _, m := range regexp.MustCompile(`\]\(([^)#:]+)\)`).FindAllStringSubmatch(string(readme), -1) {
		named = append(named, m[1])
	}
	for _, p := range named {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			t.Errorf("README names %s, which the repository does not have", p)
		}
	}
	for _, phrase := range []string{"issue notes"} {
		if strings.Contains(string(readme), phrase) {
			t.Errorf("README points at %q, which is not in the repository", phrase)
		}
	}
}
