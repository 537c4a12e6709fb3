// Package agenttest is the conformance suite of the memory tool contract
// (docs/memory-tool.md): a table of tool inputs with the exact answers they must
// get, and a runner that drives the table through any face of memvault, the
// agent.Handler in process or the memvault tool command, on a fresh store per
// case: a vault, or Memory, a store held in memory, where the store is not
// what is tested.
package agenttest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

// Case is one check of the contract.
type Case struct {
	Name  string
	Setup []string // tool inputs run first, in order; each must succeed
	Input string   // the tool input under test
	Want  string   // the exact content of the answer
	// WantError is the answer's is_error flag.
	WantError bool
	// WantCommit says Input makes exactly one commit; otherwise it makes none.
	WantCommit bool
}

// Target is a fresh, empty vault with vault.DefaultLimits, reached through the
// face under test.
type Target struct {
	// Do runs one tool input, recording toolUseID in the commit it makes, and
	// returns the tool_result. It fails the test itself (t.Fatal on the t it was
	// made for) on a failure outside the contract.
	Do func(input, toolUseID string) (content string, isError bool)
	// Log returns the vault's whole history, newest first, as vault.Vault.Log
	// with zero LogOptions does.
	Log func() ([]vault.Record, error)
}

// Run runs every case of Cases as a subtest of t, each on the Target that
// fresh makes for it. It checks the answer's content byte for byte and its
// is_error flag, that a case with WantCommit makes exactly one commit whose
// Tool-Use-Id and Memory-Command are those of the input, and that any other
// case makes no commit.
func Run(t *testing.T, fresh func(t *testing.T) Target) {
	t.Helper()
	RunExcept(t, fresh, nil)
}

// SealedDiffers names, for RunExcept, the cases a vault in the sealed format
// (the default) answers otherwise: their paths hold a component of 144 to 255
// bytes, which the plain format stores and the sealed one refuses as an
// invalid path, since it seals a name of at most 143 bytes into git's 255.
// A run on a plain vault keeps them.
var SealedDiffers = map[string]string{
	"path/segment-255":       sealedWhy,
	"path/length-4096":       sealedWhy,
	"path/length-4096-slash": sealedWhy,
}

const sealedWhy = "a sealed vault refuses a segment over 143 bytes"

// RunExcept is Run, except that each case named in differs is skipped with the
// reason given there: a face or format whose answer differs by design, which
// its own test then checks.
func RunExcept(t *testing.T, fresh func(t *testing.T) Target, differs map[string]string) {
	t.Helper()
	for i, c := range Cases {
		t.Run(c.Name, func(t *testing.T) {
			if why, ok := differs[c.Name]; ok {
				t.Skip(why)
			}
			runCase(t, i, c, fresh(t))
		})
	}
}

func runCase(t *testing.T, i int, c Case, tg Target) {
	t.Helper()
	for j, in := range c.Setup {
		if got, isErr := tg.Do(in, fmt.Sprintf("toolu_setup_%d", j)); isErr {
			t.Fatalf("setup %d: Do(%s) = %q, error; want success", j, abbrev(in), abbrev(got))
		}
	}
	before := history(t, tg)
	id := fmt.Sprintf("toolu_agenttest_%03d", i)
	got, isErr := tg.Do(c.Input, id)
	if got != c.Want || isErr != c.WantError {
		t.Errorf("Do(%s) = %s, is_error %v\nwant %s, is_error %v\n%s",
			abbrev(c.Input), abbrev(got), isErr, abbrev(c.Want), c.WantError, difference(got, c.Want))
	}
	after := history(t, tg)
	switch n := len(after) - len(before); {
	case !c.WantCommit && n != 0:
		t.Errorf("Do(%s) made %d commits, want none", abbrev(c.Input), n)
	case c.WantCommit && n != 1:
		t.Errorf("Do(%s) made %d commits, want 1", abbrev(c.Input), n)
	case c.WantCommit:
		if rec, cmd := after[0], commandOf(c.Input); rec.ToolUseID != id || rec.Command != cmd {
			t.Errorf("Do(%s) committed Tool-Use-Id %q, Memory-Command %q; want %q, %q",
				abbrev(c.Input), rec.ToolUseID, rec.Command, id, cmd)
		}
	}
}

func history(t *testing.T, tg Target) []vault.Record {
	t.Helper()
	recs, err := tg.Log()
	if err != nil {
		t.Fatalf("Log() = %v", err)
	}
	return recs
}

func commandOf(input string) string {
	var in struct{ Command string }
	_ = json.Unmarshal([]byte(input), &in)
	return in.Command
}

// abbrev quotes s, shortened in the middle when it is long.
func abbrev(s string) string {
	const n = 300
	if len(s) <= 2*n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…(%d bytes)…%q", s[:n], len(s)-2*n, s[len(s)-n:])
}

// difference describes where got first differs from want.
func difference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-40)
	return fmt.Sprintf("first difference at byte %d: got …%q…, want …%q…",
		i, got[from:min(len(got), i+40)], want[from:min(len(want), i+40)])
}

// Helpers that build the inputs and answers of the cases.

// obj renders a JSON object from key, value pairs, in order.
func obj(kv ...any) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		v, _ := json.Marshal(kv[i+1]) // strings, numbers and slices of them always marshal
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

func view(p string) string { return obj("command", "view", "path", p) }

func viewRange(p string, r any) string {
	return obj("command", "view", "path", p, "view_range", r)
}

func create(p, text string) string {
	return obj("command", "create", "path", p, "file_text", text)
}

func strReplace(p, old, new string) string {
	return obj("command", "str_replace", "path", p, "old_str", old, "new_str", new)
}

func insert(p string, line any, text string) string {
	return obj("command", "insert", "path", p, "insert_line", line, "insert_text", text)
}

func del(p string) string { return obj("command", "delete", "path", p) }

func rename(oldPath, newPath string) string {
	return obj("command", "rename", "old_path", oldPath, "new_path", newPath)
}

// listing is the answer to a view of directory p whose entries (after the
// line of p itself) are the given lines.
func listing(p string, entries ...string) string {
	s := "Here're the files and directories up to 2 levels deep in " + p +
		", excluding hidden items and node_modules:\n4K\t" + p
	for _, e := range entries {
		s += "\n" + e
	}
	return s
}

// fileView is the answer to a view of file p showing lines numbered from first.
func fileView(p string, first int, lines ...string) string {
	return "Here's the content of " + p + " with line numbers:\n" + numbered(first, lines...)
}

// edited is the answer to a str_replace whose snippet starts at line first.
func edited(first int, lines ...string) string {
	return "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
		numbered(first, lines...)
}

func numbered(first int, lines ...string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = fmt.Sprintf("%6d\t%s", first+i, l)
	}
	return strings.Join(out, "\n")
}

func lines(prefix string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprint(prefix, i))
	}
	return out
}
