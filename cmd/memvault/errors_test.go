package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoPackageNamesShown walks every error the hint table knows, wrapped as
// the layers wrap it on its way up ("vault: sync: gitlog: ..."), and checks
// that what a person reads names no package: the message says what happened
// and the hint what to do. It once printed "memvault: vault: sync: gitlog:
// remote origin: no such remote". --debug shows the whole chain.
func TestNoPackageNamesShown(t *testing.T) {
	for _, h := range hints {
		for _, err := range []error{
			h.err,
			fmt.Errorf("vault: open /v.git: %w", h.err),
			fmt.Errorf("vault: sync: gitlog: fetch origin: %w", h.err),
			fmt.Errorf("agent: view: vault: read /memories/a: %w", h.err),
			&hintedError{err: fmt.Errorf("gitlog: %w", h.err), hint: "do this"},
			&usageError{cmd: "memvault x", err: fmt.Errorf("vault: name: gitlog: %w", h.err)},
		} {
			var stderr bytes.Buffer
			exitCode(err, &stderr, false)
			for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				for _, part := range strings.Split(strings.TrimPrefix(line, "memvault: "), ": ") {
					if packageNames[part] {
						t.Errorf("exitCode(%q) printed %q: the package name %q reaches the user", err, stderr.String(), part)
					}
				}
			}
			if !strings.HasPrefix(stderr.String(), "memvault: ") {
				t.Errorf("exitCode(%q) printed %q, want it to begin with memvault: ", err, stderr.String())
			}
		}
		var debug bytes.Buffer
		exitCode(fmt.Errorf("vault: sync: %w", h.err), &debug, true)
		if !strings.Contains(debug.String(), "memvault: vault: sync: ") {
			t.Errorf("exitCode with --debug printed %q, want the whole chain, vault: sync: ...", debug.String())
		}
		if hintFor(fmt.Errorf("vault: x: %w", h.err)) != h.hint {
			t.Errorf("hintFor(%q) is not its entry's hint", h.err)
		}
	}
}

// TestPackageNamesComplete: packageNames names every package of the module
// whose errors can reach the CLI, so a new package's prefix is hidden too.
func TestPackageNamesComplete(t *testing.T) {
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "package "); ok {
				seen[strings.TrimSpace(name)] = true
				break
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range seen {
		if name != "main" && !strings.HasSuffix(name, "test") && !packageNames[name] {
			t.Errorf("package %s is not in packageNames: its errors' prefix would reach the user", name)
		}
	}
}

// userMessage drops only whole parts that are package names, never a name
// inside a part (a file or a remote called "vault").
func TestUserMessage(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"vault: open ./nothere.git: no such folder: not a memvault vault", "open ./nothere.git: no such folder: not a memvault vault"},
		{"vault: sync: gitlog: remote vault: no such remote", "sync: remote vault: no such remote"},
		{"agent: view: vault: read /memories/gitlog: cannot decrypt", "view: read /memories/gitlog: cannot decrypt"},
		{"disk on fire", "disk on fire"},
	} {
		if got := userMessage(errors.New(c.in)); got != c.want {
			t.Errorf("userMessage(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
