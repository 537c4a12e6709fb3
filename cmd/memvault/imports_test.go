package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsGoDown: the command line wires vault, agent and tui
// together and reaches nothing below them: no non-test file of cmd/memvault
// imports gitlog or go-git, so the git layer can change without the CLI.
func TestImportsGoDown(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range af.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if p == "github.com/memvault/memvault/gitlog" || strings.HasPrefix(p, "github.com/go-git/") {
				t.Errorf("%s imports %s: cmd reaches gitlog and go-git only through vault", f, p)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d files of cmd/memvault", checked)
	}
}
