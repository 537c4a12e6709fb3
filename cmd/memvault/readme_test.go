package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README is the front door: what it shows must be true of the program.
// These tests read it (and the pages of docs/) as a newcomer would run it.

const readmeMaxLines = 250

// repoRoot is the repository's top, from this package's folder.
var repoRoot = filepath.Join("..", "..")

// docPages are the README and the pages of docs/, by path from the top.
func docPages(t *testing.T) map[string]string {
	t.Helper()
	pages := map[string]string{}
	paths, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(paths, filepath.Join(repoRoot, "README.md")) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, p)
		pages[filepath.ToSlash(rel)] = string(b)
	}
	return pages
}

// The README is short, points only at what the repository has, and asks for
// the Go version go.mod asks for.
func TestReadmeTrue(t *testing.T) {
	pages := docPages(t)
	readme := pages["README.md"]
	if n := strings.Count(readme, "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, want at most %d: the rest goes in docs/", n, readmeMaxLines)
	}
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	if goLine == nil {
		t.Fatal("go.mod has no go line")
	}
	want := "With Go " + string(goLine[1]) + " or later"
	if !strings.Contains(readme, want) {
		t.Errorf("README does not say %q, as go.mod's go line asks", want)
	}
	for _, doc := range []string{"docs/user-guide.md", "docs/security.md", "docs/sealed-format.md", "docs/performance.md", "docs/CONTRIBUTING.md", "docs/membership.md"} {
		if _, ok := pages[doc]; !ok {
			t.Errorf("%s is missing", doc)
		} else if !strings.Contains(readme, "("+doc+")") {
			t.Errorf("README does not link %s", doc)
		}
	}
	for _, phrase := range []string{"issue notes"} {
		if strings.Contains(readme, phrase) {
			t.Errorf("README points at %q, which is not in the repository", phrase)
		}
	}
	// The performance page quotes no commit of this repository: a figure
	// is worth the command that gives it, today.
	if m := regexp.MustCompile(`\b[0-9a-f]{7,40}\b`).FindAllString(pages["docs/performance.md"], -1); len(m) > 0 {
		for _, h := range m {
			if h != "ed25519" && regexp.MustCompile(`[a-f]`).MatchString(h) && regexp.MustCompile(`[0-9]`).MatchString(h) {
				t.Errorf("docs/performance.md names %q, a commit hash: give the command that measures it instead", h)
			}
		}
	}
}

// TestDocLinks: every relative link of the README and docs/ names a file the
// repository has, and every #anchor a heading of that page.
func TestDocLinks(t *testing.T) {
	pages := docPages(t)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	named := regexp.MustCompile(`(?:[\w./-]*/)?\b[A-Z][A-Z_]+\.md\b`)
	for page, text := range pages {
		dir := filepath.Dir(page)
		var targets []string
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		// Documents named in capitals (CONTRIBUTING.md), beside the page or
		// at the top.
		for _, m := range named.FindAllString(stripCode(text), -1) {
			_, errBeside := os.Stat(filepath.Join(repoRoot, dir, m))
			_, errTop := os.Stat(filepath.Join(repoRoot, m))
			if errBeside != nil && errTop != nil {
				t.Errorf("%s names %s, which the repository does not have", page, m)
			}
		}
		for _, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.ToSlash(filepath.Join(dir, file))
				if _, err := os.Stat(filepath.Join(repoRoot, path)); err != nil {
					t.Errorf("%s links %s, which the repository does not have", page, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			body, ok := pages[path]
			if !ok {
				continue
			}
			if !slices.Contains(headingSlugs(body), anchor) {
				t.Errorf("%s links %s: %s has no heading #%s", page, target, path, anchor)
			}
		}
	}
}

// stripCode drops fenced code blocks, which quote other programs' words.
func stripCode(text string) string {
	var b strings.Builder
	in := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// headingSlugs are the anchors GitHub gives a page's headings: lower case,
// punctuation dropped, spaces as hyphens.
func headingSlugs(text string) []string {
	var out []string
	for line := range strings.SplitSeq(stripCode(text), "\n") {
		h := strings.TrimLeft(line, "#")
		if h == line || !strings.HasPrefix(h, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && r != '…' && r != '→':
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// A shownCommand is one memvault command line of a page's shell blocks.
type shownCommand struct {
	page, section string // the page, and the heading it is under
	line          string // as the page shows it
	args          []string
	stdin         string // what an echo piped into it gives
}

// shownCommands finds every memvault command in the shell blocks of text:
// lines that run memvault (after a $ prompt, environment assignments, an
// echo into a pipe, go run ./cmd/memvault, or claude mcp add ... --), each
// cut at the first shell operator.
func shownCommands(page, text string) []shownCommand {
	var out []shownCommand
	section, lang, in := "", "", false
	var cont string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(line, "```") {
			in, lang = !in, strings.TrimPrefix(line, "```")
			continue
		}
		if !in {
			if strings.HasPrefix(line, "#") {
				section = strings.TrimSpace(strings.TrimLeft(line, "#"))
			}
			continue
		}
		if lang != "sh" && lang != "bash" && lang != "console" {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			cont += strings.TrimSuffix(line, `\`) + " "
			continue
		}
		line, cont = cont+line, ""
		words := shellWords(strings.TrimPrefix(strings.TrimSpace(line), "$ "))
		for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
			words = words[1:] // VAR=value before the command
		}
		var stdin string
		if len(words) > 2 && words[0] == "echo" && words[2] == "|" {
			stdin, words = words[1], words[3:]
		}
		switch {
		case len(words) > 2 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/memvault":
			words = append([]string{"memvault"}, words[3:]...)
		case len(words) > 0 && words[0] == "claude":
			i := slices.Index(words, "--")
			if i < 0 || i+1 >= len(words) || words[i+1] != "memvault" {
				continue
			}
			words = words[i+1:]
		}
		if len(words) == 0 || words[0] != "memvault" {
			continue
		}
		args := words[1:]
		for i, w := range args {
			if w == "|" || w == "&&" || w == ";" || w == "&" || w == ">" || w == "<" || w == "||" || w == "#" {
				args = args[:i]
				break
			}
		}
		out = append(out, shownCommand{page: page, section: section, line: strings.TrimSpace(line), args: args, stdin: stdin})
	}
	return out
}

// shellWords splits a line as a POSIX shell would for these pages: words
// apart by blanks, quotes kept together, a # after a blank starting a
// comment (returned as the word "#"), operators their own words.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	have := false
	flush := func() {
		if have {
			words = append(words, cur.String())
			cur.Reset()
			have = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+j])
			have, i = true, i+1+j
		case c == '"':
			j := strings.IndexByte(line[i+1:], '"')
			if j < 0 {
				j = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+j])
			have, i = true, i+1+j
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !have:
			flush()
			return append(words, "#")
		case c == '|' || c == ';' || c == '&' || c == '>' || c == '<':
			flush()
			op := string(c)
			if i+1 < len(line) && (line[i+1] == '|' || line[i+1] == '&') && line[i+1] == c {
				op += string(c)
				i++
			}
			words = append(words, op)
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	flush()
	return words
}

// TestReadmeCommandsParse: every memvault command the README and docs/ show
// is a command of the program, with flags it has and as many arguments as it
// takes.
func TestReadmeCommandsParse(t *testing.T) {
	n := 0
	for page, text := range docPages(t) {
		for _, sc := range shownCommands(page, text) {
			n++
			root := newRootCommand()
			root.InitDefaultVersionFlag() // as Execute does
			c, rest, err := root.Find(sc.args)
			if err != nil {
				t.Errorf("%s (%s): %q: %v", sc.page, sc.section, sc.line, err)
				continue
			}
			if err := c.ParseFlags(rest); err != nil {
				t.Errorf("%s (%s): %q: %v", sc.page, sc.section, sc.line, err)
				continue
			}
			if c == root && len(sc.args) > 0 && !strings.HasPrefix(sc.args[0], "-") {
				t.Errorf("%s (%s): %q: no such command", sc.page, sc.section, sc.line)
				continue
			}
			if err := c.ValidateArgs(c.Flags().Args()); err != nil {
				t.Errorf("%s (%s): %q: %v", sc.page, sc.section, sc.line, err)
			}
		}
	}
	t.Logf("parsed %d memvault commands of the README and docs/", n)
	if n < 50 {
		t.Errorf("found %d memvault commands in the README and docs/, want the many they show", n)
	}
}

// TestReadmeFirstFiveMinutes runs the README's install check and first five
// minutes as a newcomer would, in an empty home: every memvault command of
// those sections, in order, must succeed, and the places the README names
// must be where init put them. Claude Code's part is played by one create
// through memvault tool, as the MCP server's memory tool makes it. The UI
// needs a terminal and is only parsed (TestReadmeCommandsParse); the sharing
// recipe is run by testdata/members.txtar, whose commands it must be.
func TestReadmeFirstFiveMinutes(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{"XDG_DATA_HOME", "XDG_CONFIG_HOME", "MEMVAULT_DIR", "MEMVAULT_IDENTITY", "MEMVAULT_PASSPHRASE_FILE", "NO_COLOR"} {
		t.Setenv(k, "")
	}
	readme := docPages(t)["README.md"]
	ran := 0
	seeded := false
	for _, sc := range shownCommands("README.md", readme) {
		if !regexp.MustCompile(`^(Try it|Install|Or an agent|[1-4]\. )`).MatchString(sc.section) {
			continue
		}
		if len(sc.args) > 0 && sc.args[0] == "ui" {
			continue
		}
		if strings.HasPrefix(sc.section, "3. ") && !seeded {
			// What Claude Code would have written by now.
			runShown(t, sc.section, "memvault tool (as Claude Code)", []string{"tool", "--tool-use-id", "toolu_readme"},
				`{"command":"create","path":"/memories/progress.md","file_text":"# Progress\n\n- [ ] read the README\n"}`)
			seeded = true
		}
		runShown(t, sc.section, sc.line, sc.args, sc.stdin)
		ran++
	}
	t.Logf("ran %d commands of the README's first five minutes", ran)
	if ran < 8 {
		t.Errorf("ran %d commands of the README's first five minutes, want them all", ran)
	}
	for _, p := range []string{".local/share/memvault/default.git", ".config/memvault/identity"} {
		if _, err := os.Stat(filepath.Join(home, p)); err != nil {
			t.Errorf("the README says init makes ~/%s: %v", p, err)
		}
	}

	// The sharing recipe is members.txtar's, command for command.
	story, err := os.ReadFile(filepath.Join("testdata", "members.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	shared := 0
	for _, sc := range shownCommands("README.md", readme) {
		if !strings.HasPrefix(sc.section, "5. ") {
			continue
		}
		shared++
		if !inStory(string(story), sc.args) {
			t.Errorf("README (%s) shows %q, which testdata/members.txtar does not run", sc.section, sc.line)
		}
	}
	if shared < 5 {
		t.Errorf("the README's sharing section shows %d memvault commands, want the recipe", shared)
	}
}

// runShown runs one command the README shows, in process, and fails the test
// when it does not succeed.
func runShown(t *testing.T, section, line string, args []string, stdin string) {
	t.Helper()
	var out, errw bytes.Buffer
	if code := run(context.Background(), args, strings.NewReader(stdin), &out, &errw); code != exitOK {
		t.Errorf("README (%s): %s: status %d\nstdout: %s\nstderr: %s", section, line, code, out.String(), errw.String())
	}
}

// inStory tells whether the story runs memvault with args, taking the
// README's placeholders (a URL, a member line, a fingerprint) for the
// story's values: the command and every flag must be the same.
func inStory(story string, args []string) bool {
	for line := range strings.SplitSeq(story, "\n") {
		f := shellWords(line)
		if len(f) < 2 || f[0] != "exec" || f[1] != "memvault" {
			continue
		}
		got := f[2:]
		if len(got) != len(args) {
			continue
		}
		same := true
		for i := range got {
			a, b := args[i], got[i]
			if strings.HasPrefix(a, "-") || strings.HasPrefix(b, "-") || i == 0 || i == 1 && !strings.ContainsAny(a, ":/@'…") {
				same = same && a == b
			}
		}
		if same {
			return true
		}
	}
	return false
}
