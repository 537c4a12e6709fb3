package gitlog_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyGitlogImportsGoGit: go-git stays beneath gitlog. No non-test file
// outside the gitlog folder itself, its engine (gitlog/internal/...) and its
// reader of foreign repositories (gitlog/source) imports it, so gitlog's own
// types (Hash, Entry, ref names as strings) are
// all that cross up, and the git library can change without touching vault,
// agent, tui or cmd.
func TestOnlyGitlogImportsGoGit(t *testing.T) {
	root := ".."
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		if dir := filepath.Dir(p); dir == filepath.Join(root, "gitlog") || dir == filepath.Join(root, "gitlog", "source") || strings.HasPrefix(dir, filepath.Join(root, "gitlog", "internal")+string(filepath.Separator)) {
			return nil
		}
		af, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range af.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if strings.HasPrefix(ip, "github.com/go-git/") {
				t.Errorf("%s imports %s: only gitlog may import go-git", p, ip)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d files outside gitlog: not the module", checked)
	}
}
