package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault"
)

// commandsOf is every command of the tree under c a person can run or ask
// for help on, c included: cobra's own help and completion left out.
func commandsOf(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, s := range c.Commands() {
		if s.Hidden || s.Name() == "help" || s.Name() == "completion" {
			continue
		}
		out = append(out, commandsOf(s)...)
	}
	return out
}

// helpOf is what `memvault ... --help` prints for c.
func helpOf(t *testing.T, c *cobra.Command) string {
	t.Helper()
	args := append(strings.Fields(c.CommandPath())[1:], "--help")
	var out, errw bytes.Buffer
	if code := run(context.Background(), args, nil, &out, &errw); code != exitOK {
		t.Fatalf("memvault %s: status %d, %s", strings.Join(args, " "), code, errw.String())
	}
	return out.String()
}

// TestHelpCoversProgram: every --help names what its command has, and names
// nothing the program lacks. A help text is read where the README is not:
// mcp's once listed two of its four tools, and the revision help described
// @{DATE} by commit dates the program never reads.
func TestHelpCoversProgram(t *testing.T) {
	root := newRootCommand()
	cmds := commandsOf(root)

	// Every flag of the program, for help texts that name another
	// command's flag ("run sync --accept-recipients").
	flags := map[string]bool{"help": true, "version": true}
	for _, c := range cmds {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) { flags[f.Name] = true })
		}
	}
	flagRef := regexp.MustCompile(`(?:^|[\s('"\[])--([a-z][a-z0-9-]+)`)
	cmdRef := regexp.MustCompile(`'memvault ([a-z][a-z-]*(?: [a-z][a-z-]*)?)`)
	for _, c := range cmds {
		name := c.CommandPath()
		if c != root && c.Short == "" || c.Parent() == root && c.Runnable() && c.Long == "" {
			t.Errorf("%s has no Short help, or, as a command of its own, no Long help", name)
		}
		help := helpOf(t, c)
		// Each flag it takes is listed with a sentence saying what it does.
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			if strings.TrimSpace(f.Usage) == "" {
				t.Errorf("%s --%s has no usage text", name, f.Name)
			}
			if !strings.Contains(help, "--"+f.Name) {
				t.Errorf("%s --help does not list --%s", name, f.Name)
			}
		})
		// Each command it has is listed.
		for _, s := range c.Commands() {
			if !s.Hidden && !strings.Contains(help, "\n  "+s.Name()+" ") {
				t.Errorf("%s --help does not list its command %s", name, s.Name())
			}
		}
		// Each flag its words name exists somewhere in the program, and each
		// 'memvault CMD' it quotes is a command.
		words := c.Long + "\n" + c.Example
		for _, m := range flagRef.FindAllStringSubmatch(words, -1) {
			if !flags[m[1]] && !notMemvaultFlag[m[1]] {
				t.Errorf("%s --help names --%s, which no command has", name, m[1])
			}
		}
		for _, m := range cmdRef.FindAllStringSubmatch(words, -1) {
			if found, rest, err := root.Find(strings.Fields(m[1])); err != nil || found == root || len(rest) > 1 {
				t.Errorf("%s --help quotes 'memvault %s', which is no command", name, m[1])
			}
		}
		// A revision by date is read from the vault's record of when main
		// moved, never from commit dates.
		if strings.Contains(words, "@{DATE}") && (strings.Contains(words, "at or before DATE") || strings.Contains(words, "@{DATE} is the last commit")) {
			t.Errorf("%s --help describes @{DATE} otherwise than the program reads it:\n%s", name, words)
		}
	}
}

// TestMCPHelpNamesEveryTool: memvault mcp --help names each tool the server
// lists. It once named memory and history, while the server also offered
// search and blame.
func TestMCPHelpNamesEveryTool(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, _, err := vault.Init(ctx, filepath.Join(dir, "v.git"), vault.Options{IdentityFile: filepath.Join(dir, "id")})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	srv := mcpserver.New(v, mcpserver.Options{Poll: -1})
	defer srv.Close()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "help-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCommand()
	c, _, err := root.Find([]string{"mcp"})
	if err != nil {
		t.Fatal(err)
	}
	help := helpOf(t, c)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if !strings.Contains(help, `"`+tool.Name+`"`) {
			t.Errorf("memvault mcp --help does not name the tool %q the server lists", tool.Name)
		}
	}
	if !slices.Contains(names, "memory") {
		t.Errorf("the MCP server lists %q, want the memory tool among them", names)
	}
}
