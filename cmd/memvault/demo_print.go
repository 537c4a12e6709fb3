package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault"
)

// demoPrinter writes the demo's transcript. Writes to a broken stdout are not worth
// stopping the demo for, so its methods ignore write errors.
type demoPrinter struct {
	out io.Writer
	st  styles
}

const (
	demoWidth  = 88                     // wrap prose here
	demoIndent = "        "             // under a step's label
	demoRule   = "━━━━━━━━━━━━━━━━━━━━" // conversation headers
)

func (p demoPrinter) printf(format string, args ...any) { fmt.Fprintf(p.out, format, args...) }

func (p demoPrinter) intro(dir, identity string, kept bool) {
	st := p.st
	p.printf("%s a scripted agent session on a throwaway vault\n\n", st.bold("memvault demo:"))
	where := "temporary: removed at exit, --keep keeps it"
	if kept {
		where = "kept after the demo"
	}
	p.printf("  vault     %s %s\n", dir, st.dim("("+where+")"))
	p.printf("  identity  %s\n\n", identity)
	p.printf("%s\n", wrap("Each call shows what the model sent to the memory tool (in) and the answer "+
		"memvault gave (out). Every successful change is one age-encrypted git commit; "+
		"views and errors change nothing. The vault is sealed, as new vaults are: "+
		"its git host would see no file name, commit message or exact size.", demoWidth, ""))
}

func (p demoPrinter) conversation(i int, conv demoConversation) {
	st := p.st
	p.printf("\n%s %s\n", st.cyan(demoRule), st.bold(fmt.Sprintf("Session %d of %d · %s", i+1, len(demoScript), conv.title)))
	p.printf("%s\n", st.cyan(wrap("user: "+conv.user, demoWidth, "      ")))
}

func (p demoPrinter) step(label string, s demoStep, ans agent.Answer) {
	st := p.st
	p.printf("\n%s %s\n", st.cyan("["+label+"]"), st.bold(s.summary))
	p.printf("%s%s\n", demoIndent, st.dim(s.note))
	p.printf("  %s    %s\n", st.dim("in"), s.input)
	label, body := st.green("out"), indentLines(ans.Content, demoIndent)
	if ans.IsError {
		label, body = st.red("out"), st.red(body)
	}
	p.printf("  %s   %s\n", label, body)
}

// history prints the vault's log and what the sessions added up to.
func (p demoPrinter) history(recs []vault.Record, calls, errs int) error {
	st := p.st
	commits := 0
	for _, r := range recs {
		if r.Command != "" && r.Command != "init" {
			commits++
		}
	}
	p.section("History: memvault log, newest first")
	if err := writeLogText(p.out, recs, st); err != nil {
		return err
	}
	p.printf("\n%d calls, %d error answers, %d commits (one per successful change).\n", calls, errs, commits)
	return nil
}

// section starts one part of the demo's transcript.
func (p demoPrinter) section(title string) {
	p.printf("\n%s %s\n\n", p.st.cyan(demoRule), p.st.bold(title))
}

// askUI asks, on a terminal, whether to open the UI now, and reads one line of
// answer: enter or y opens it, n (or the end of input) does not. It reads a
// byte at a time, so that nothing meant for the UI is taken.
func (p demoPrinter) askUI(in io.Reader) bool {
	p.printf("\nOpen the terminal UI on the demo vault? It shows the same history, with diffs,\n" +
		"blame and undo on keys (? lists them, q quits). [Y/n] ")
	var line []byte
	b := make([]byte, 1)
	for {
		n, err := in.Read(b)
		if n == 1 && b[0] != '\n' && b[0] != '\r' {
			line = append(line, b[0])
			continue
		}
		if n == 1 || err != nil {
			break
		}
	}
	answer := strings.ToLower(strings.TrimSpace(string(line)))
	return answer == "" || answer == "y" || answer == "yes"
}

// ending says what becomes of the demo's vault and what to run next, in
// words that work whether or not memvault is installed: self is how this
// program was started (selfCommand). ui says the UI opens next, on the vault
// a temporary demo removes only when the UI is quit.
func (p demoPrinter) ending(self, dir, identity string, kept, ui bool) {
	st := p.st
	p.section("Next")
	if kept {
		flags := fmt.Sprintf("--vault %s --identity %s", shellQuote(dir), shellQuote(identity))
		p.printf("The vault stays at %s. Look around:\n", dir)
		p.printf("  %s %s log %s\n", self, flags, progressPath)
		p.printf("  %s %s cat %s\n", self, flags, progressPath)
		p.printf("  %s %s ui\n", self, flags)
		p.printf("  git --git-dir %s ls-tree -r main   %s\n", shellQuote(dir), st.dim("# what a git host sees: sealed names"))
	} else if ui {
		p.printf("The demo vault is removed when you quit the UI; '%s demo --keep' keeps it.\n", self)
	} else {
		p.printf("The demo vault is removed now; '%s demo --keep' keeps it to look around.\n", self)
	}
	p.printf("\nYour own memory:\n")
	run := "memvault"
	switch {
	case self == "memvault":
	case strings.HasPrefix(self, "go run "):
		p.printf("  go install ./cmd/memvault   %s\n", st.dim("# puts memvault in $(go env GOPATH)/bin, usually ~/go/bin: put that on PATH"))
	default:
		run = self
	}
	p.printf("  %s init\n", run)
	p.printf("  claude mcp add memvault -- %s mcp   %s\n", run, st.dim("# Claude Code keeps its memory there"))
}

// indentLines puts indent before every line of s but the first.
func indentLines(s, indent string) string {
	return strings.ReplaceAll(s, "\n", "\n"+indent)
}

// wrap breaks text into lines of at most width runes at spaces; lines after the first
// start with indent.
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	col := 0
	for i, w := range strings.Fields(text) {
		n := len([]rune(w))
		switch {
		case i == 0:
		case col+1+n > width:
			b.WriteString("\n" + indent)
			col = len(indent)
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= 'a' && r <= 'z' ||
			r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
