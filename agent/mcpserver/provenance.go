package mcpserver

// The search and blame tools answer questions about content over MCP: where
// something is written now (search, a grep of the decrypted files), and who
// wrote a line and when (blame). Both are read-only, bounded like a view.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent/internal/contract"
	"github.com/memvault/memvault/vault"
)

// ProvenanceStore is what the search and blame tools need; *vault.Vault
// implements it. New offers them when its store does.
type ProvenanceStore interface {
	Grep(ctx context.Context, re *regexp.Regexp, opts vault.GrepOptions) (*vault.GrepResult, error)
	Blame(ctx context.Context, path, rev string) (*vault.Blame, error)
	Limits() vault.Limits
}

const searchToolDescription = `Search the text of all your memory files at once for a regular expression, and get each matching line back as path:line: text. Use it to find where something is recorded (a person, a project, a decision, a preference) before you view or edit it, instead of viewing file after file, and to check whether you already noted something before creating a new file. The pattern is a Go regular expression matched against each line (use ignore_case for case-insensitive search); path narrows the search to one file or directory; context adds lines around each match (shown as path-line- text). The answer is bounded like a view: if it is cut, narrow the pattern or the path.`

const searchInputSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Regular expression (Go syntax) matched against each line, such as \"deadline\" or \"prefers (tea|coffee)\"."},
    "path": {"type": "string", "description": "Search only this file or directory, /memories or under it; default /memories."},
    "ignore_case": {"type": "boolean", "description": "Match letters in either case."},
    "context": {"type": "integer", "minimum": 0, "maximum": 10, "description": "Lines to show before and after each match; default 0."}
  },
  "required": ["pattern"]
}`

const blameToolDescription = `Who wrote each line of a memory file, and when: every line with the commit that put it there, that commit's time, command, tool use id, agent and session. Use it when you need to know where a remembered fact came from or how old it is, for example before trusting, correcting or deleting a line that looks wrong, out of date or not written by you. A line that an undo (restore, revert, rollback) or a sync with another machine brought back also names the commit that first wrote it. at reads the file as it was at an earlier revision: a commit id from the history tool, or main@{2d} for two days ago (also main@{2026-11-24}). view_range [first, last] limits the answer to those lines, as in view.`

const blameInputSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The memory file, /memories/..."},
    "at": {"type": "string", "description": "A revision to read the file at: a commit id, main~N, or main@{DATE} with DATE such as 2d, 3h or 2026-11-24. Default: now."},
    "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2, "description": "[first line, last line], 1-based and inclusive; -1 as last means the end."}
  },
  "required": ["path"]
}`

// searchTool and blameTool are the provenance tools' definitions.
func searchTool() *mcp.Tool {
	return &mcp.Tool{
		Name: "search", Title: "Search memory", Description: searchToolDescription,
		InputSchema: json.RawMessage(searchInputSchema), Annotations: readOnlyTool(),
	}
}

func blameTool() *mcp.Tool {
	return &mcp.Tool{
		Name: "blame", Title: "Memory line history", Description: blameToolDescription,
		InputSchema: json.RawMessage(blameInputSchema), Annotations: readOnlyTool(),
	}
}

func readOnlyTool() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
}

// addProvenanceTools offers search and blame when the store can answer them.
func (m *mcpServer) addProvenanceTools() {
	ps, ok := m.store.(ProvenanceStore)
	if !ok {
		return
	}
	m.srv.AddTool(searchTool(), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, isErr, err := callSearch(ctx, ps, req.Params.Arguments)
		if err != nil {
			return nil, err
		}
		return textResult(text, isErr), nil
	})
	m.srv.AddTool(blameTool(), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, isErr, err := callBlame(ctx, ps, req.Params.Arguments)
		if err != nil {
			return nil, err
		}
		return textResult(text, isErr), nil
	})
}

// callSearch answers the search tool: the text, whether it is an error, and
// an error only when ctx ended.
func callSearch(ctx context.Context, ps ProvenanceStore, raw json.RawMessage) (string, bool, error) {
	var in struct {
		Pattern    *string `json:"pattern"`
		Path       *string `json:"path"`
		IgnoreCase bool    `json:"ignore_case"`
		Context    int     `json:"context"`
	}
	if err := json.Unmarshal(orEmpty(raw), &in); err != nil || in.Pattern == nil {
		return "Error: Invalid search input: expected an object with pattern (a string) and optional path, ignore_case and context", true, nil
	}
	if in.Context < 0 || in.Context > 10 {
		return fmt.Sprintf("Error: Invalid context %d: it should be within [0, 10]", in.Context), true, nil
	}
	pat := *in.Pattern
	if in.IgnoreCase {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return fmt.Sprintf("Error: Invalid pattern %q: %v", *in.Pattern, err), true, nil
	}
	var opts vault.GrepOptions
	where := vault.Root
	if in.Path != nil {
		p, err := vault.CleanPath(*in.Path)
		if err != nil {
			return fmt.Sprintf("Error: Invalid path %s: %v", *in.Path, err), true, nil
		}
		where, opts.Paths = p, []string{p}
	}
	opts.Context = in.Context
	limit := ps.Limits().ViewLimit
	if limit > 0 {
		opts.MaxLines = limit/8 + 1 // a line takes more than 8 characters with its path; the text bound below is exact
	}
	res, err := ps.Grep(ctx, re, opts)
	switch {
	case ctx.Err() != nil:
		return "", false, ctx.Err()
	case errors.Is(err, vault.ErrNotExist):
		return fmt.Sprintf("Error: The path %s does not exist. Please provide a valid path.", where), true, nil
	case err != nil:
		return "Error: memvault: search failed: " + storeFailure(err), true, nil
	}
	return renderSearch(*in.Pattern, where, res, limit) + unsearched(res), false, nil
}

// unsearched says which entries the search left out, as no memory file
// memvault reads: a search that went past them is incomplete, and says so.
func unsearched(res *vault.GrepResult) string {
	if len(res.BadEntries) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n[Not searched, as no memory file memvault can read (%d):", len(res.BadEntries))
	for i, e := range res.BadEntries {
		if i == 10 {
			fmt.Fprintf(&b, " and %d more", len(res.BadEntries)-i)
			break
		}
		fmt.Fprintf(&b, " %q (%s)", e.Path, e.Reason)
	}
	b.WriteString("]")
	return b.String()
}

// renderSearch prints matches as grep -rn does, under a header, within limit
// characters.
func renderSearch(pattern, where string, res *vault.GrepResult, limit int) string {
	matches, files := 0, len(res.Files)
	for _, f := range res.Files {
		matches += f.Matches
	}
	if files == 0 {
		return fmt.Sprintf("No line under %s matches %q.", where, pattern)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Lines under %s that match %q (path:line: text):", where, pattern)
	if !res.Truncated {
		fmt.Fprintf(&b, " %d in %d file(s).", matches, files)
	}
	size := utf8.RuneCountInString(b.String())
	cut := res.Truncated
	var line strings.Builder
lines:
	for _, f := range res.Files {
		for _, l := range f.Lines {
			line.Reset()
			sep := "-"
			if l.Match {
				sep = ":"
			}
			fmt.Fprintf(&line, "\n%s%s%d%s %s", f.Path, sep, l.Number, sep, l.Text)
			n := utf8.RuneCountInString(line.String())
			if limit > 0 && size+n > limit {
				cut = true
				break lines
			}
			size += n
			b.WriteString(line.String())
		}
	}
	if cut {
		fmt.Fprintf(&b, "\n[Output truncated at %d characters. Narrow the pattern or give a path to see more.]", limit)
	}
	return b.String()
}

// callBlame answers the blame tool.
func callBlame(ctx context.Context, ps ProvenanceStore, raw json.RawMessage) (string, bool, error) {
	var in struct {
		Path      *string `json:"path"`
		At        string  `json:"at"`
		ViewRange []int64 `json:"view_range"`
	}
	if err := json.Unmarshal(orEmpty(raw), &in); err != nil || in.Path == nil || in.ViewRange != nil && len(in.ViewRange) != 2 {
		return "Error: Invalid blame input: expected an object with path (a string) and optional at (a string) and view_range (two integers)", true, nil
	}
	p, err := vault.CleanPath(*in.Path)
	if err != nil {
		return fmt.Sprintf("Error: Invalid path %s: %v", *in.Path, err), true, nil
	}
	bl, err := ps.Blame(ctx, p, in.At)
	switch {
	case ctx.Err() != nil:
		return "", false, ctx.Err()
	case errors.Is(err, vault.ErrUnknownRevision):
		return fmt.Sprintf("Error: Unknown revision %q: give a commit id from the history tool, main~N, or main@{DATE} such as main@{2d}", in.At), true, nil
	case errors.Is(err, vault.ErrIsDir):
		return fmt.Sprintf("Error: %s is a directory: blame reads one file", p), true, nil
	case errors.Is(err, vault.ErrNotExist) && in.At != "":
		return fmt.Sprintf("Error: The path %s did not exist at %s.", p, in.At), true, nil
	case errors.Is(err, vault.ErrNotExist):
		return fmt.Sprintf("Error: The path %s does not exist. Please provide a valid path.", p), true, nil
	case err != nil:
		return "Error: memvault: blame failed: " + storeFailure(err), true, nil
	}
	first, last := 1, len(bl.Lines)
	if len(in.ViewRange) == 2 {
		first, last = contract.SelectLines(in.ViewRange[0], in.ViewRange[1], len(bl.Lines))
	}
	return renderBlame(bl, first, last, ps.Limits().ViewLimit), false, nil
}

// renderBlame prints the commits the lines name, then the lines first..last,
// each with its commit, within limit characters.
func renderBlame(bl *vault.Blame, first, last, limit int) string {
	var b strings.Builder
	when := ""
	if len(bl.Commit) >= 12 {
		when = " at commit " + bl.Commit[:12]
	}
	if first > last {
		return fmt.Sprintf("%s%s has no lines in that range (it has %d).", bl.Path, when, len(bl.Lines))
	}
	short := func(h string) string {
		if len(h) > 12 {
			return h[:12]
		}
		return h
	}
	// The commits, in the order the lines first name them.
	seen := map[string]bool{}
	var order []string
	for _, l := range bl.Lines[first-1 : last] {
		for _, c := range []string{l.Commit, l.Origin} {
			if c != "" && !seen[c] {
				seen[c] = true
				order = append(order, c)
			}
		}
	}
	fmt.Fprintf(&b, "Who wrote each line of %s%s. Commits:", bl.Path, when)
	for _, c := range order {
		r := bl.Commits[c]
		fmt.Fprintf(&b, "\n%s %s %s", short(c), r.Time.UTC().Format(time.RFC3339), r.Subject)
		var who []string
		for _, kv := range [][2]string{{"agent", r.Agent}, {"session", r.Session}, {"tool use", r.ToolUseID}} {
			if kv[1] != "" {
				who = append(who, kv[0]+" "+kv[1])
			}
		}
		if len(who) > 0 {
			b.WriteString(" (" + strings.Join(who, ", ") + ")")
		}
	}
	b.WriteString("\nLines (number, commit, text; \"A<B\": brought back by A, first written by B):")
	size := utf8.RuneCountInString(b.String())
	var line bytes.Buffer
	for _, l := range bl.Lines[first-1 : last] {
		line.Reset()
		who := short(l.Commit)
		if l.Origin != "" {
			who += "<" + short(l.Origin)
		}
		fmt.Fprintf(&line, "\n%6d %s\t%s", l.Number, who, l.Text)
		n := utf8.RuneCount(line.Bytes())
		if limit > 0 && size+n > limit {
			fmt.Fprintf(&b, "\n[Output truncated at %d characters. Use view_range to see more.]", limit)
			break
		}
		size += n
		b.Write(line.Bytes())
	}
	return b.String()
}

// orEmpty reads a missing input as an empty object.
func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// storeFailure says what kind of failure err is without quoting it: an error
// can name paths, never content, but the model needs only the kind.
func storeFailure(err error) string {
	switch {
	case errors.Is(err, vault.ErrNoIdentity), errors.Is(err, vault.ErrDecrypt):
		return "the memory cannot be decrypted here"
	}
	return contract.StorageFailure
}
