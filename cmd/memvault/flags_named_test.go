package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestNamedFlagsExist: every --flag the CLI's messages, hints and help name is
// a flag some memvault command has (or another program's, listed below), so
// advice never sends a user to a flag that was renamed or never was. That the
// flag is the right one for the command that printed it is for the stories
// (passphrase.txtar: identity passwd asks for --new-passphrase-file).
func TestNamedFlagsExist(t *testing.T) {
	have := map[string]bool{"help": true, "version": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(f *pflag.Flag) { have[f.Name] = true }
		c.Flags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand())
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`(?:^|[\s'"(\x60])--([a-z][a-z0-9-]*[a-z0-9])`)
	missing := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllStringSubmatch(string(src), -1) {
			if !have[m[1]] && !notMemvaultFlag[m[1]] {
				missing[m[1]] = append(missing[m[1]], f)
			}
		}
	}
	var names []string
	for n := range missing {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Errorf("--%s is named in %v, but no memvault command has it", n, missing[n])
	}
}

// notMemvaultFlag are flags of other programs that memvault's messages name.
var notMemvaultFlag = map[string]bool{
	"git-dir": true, "lost-found": true, "force": true, // git's, in hints that use git directly
	"format": true, "name-only": true, // git's, in the demo's view of a vault through git
	"transport": true, "header": true, "scope": true, // claude mcp add's
}
