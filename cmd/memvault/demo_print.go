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

// outro prints the history and where the vault goes. ui says the UI opens
// next, on the vault a temporary demo removes only when the UI is quit.
func (p demoPrinter) outro(recs []vault.Record, calls, errs int, dir, identity string, kept, ui bool) error {
	st := p.st
	commits := 0
	for _, r := range recs {
		if r.Command != "" && r.Command != "init" {
			commits++
		}
	}
	p.printf("\n%s %s\n\n", st.cyan(demoRule), st.bold("History: memvault log, newest first"))
	if err := writeLogText(p.out, recs, st); err != nil {
		return err
	}
	p.printf("\n%d calls, %d error answers, %d commits (one per successful change).\n", calls, errs, commits)
	switch {
	case !kept && ui:
		p.printf("The demo vault is removed when you quit the UI. Run 'memvault demo --keep' to keep it.\n")
		return nil
	case !kept:
		p.printf("The demo vault is removed now. Run 'memvault demo --keep' to look around afterwards.\n")
		return nil
	}
	flags := fmt.Sprintf("--vault %s --identity %s", shellQuote(dir), shellQuote(identity))
	p.printf("The vault stays at %s. Look around:\n", dir)
	p.printf("  memvault %s log %s\n", flags, progressPath)
	p.printf("  memvault %s cat %s\n", flags, progressPath)
	p.printf("  git --git-dir %s ls-tree -r main   %s\n", shellQuote(dir), st.dim("# what a git host sees: sealed names"))
	return nil
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
