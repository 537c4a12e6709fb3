package vault_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// cliAdvice matches an instruction for a person at memvault's command line: a
// memvault command, or a flag.
var cliAdvice = regexp.MustCompile("memvault (init|sync|pull|push|clone|fsck|recipients|identity|remote|import|export|log|cat|restore|revert|rollback|rekey|gc|tool|serve|mcp|ui|chat|checkpoint|vaults|textconv|demo|expire)\\b|(^|[\\s(`'])--[a-z]")

// adviceAllowed are texts the check lets through, each with its reason.
var adviceAllowed = map[string]string{
	// A refused remote is mended by whoever controls it, with git, not
	// memvault: there is no memvault command to hint at.
	"git push --force": "advice to the remote's owner",
}

// TestErrorsHoldNoCLIAdvice: the messages vault builds its errors
// from (errors.New and fmt.Errorf in its non-test files) say what happened; what
// a person at the command line should run next is the CLI's hint table.
func TestErrorsHoldNoCLIAdvice(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !(sel.Sel.Name == "New" || sel.Sel.Name == "Errorf") {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || (x.Name != "errors" && x.Name != "fmt") {
				return true
			}
			calls++
			ast.Inspect(call, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				for allowed := range adviceAllowed {
					s = strings.ReplaceAll(s, allowed, "")
				}
				if m := cliAdvice.FindString(s); m != "" {
					t.Errorf("%s: an error says %q, advice for the command line: say what happened, and give the hint in cmd", fset.Position(lit.Pos()), strings.TrimSpace(m))
				}
				return true
			})
			return true
		})
	}
	if calls < 50 {
		t.Fatalf("found only %d error calls in vault", calls)
	}
}
