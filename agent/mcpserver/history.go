package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent/internal/contract"
	"github.com/memvault/memvault/vault"
)

// History tool limits: how many commits it shows unless asked, and at most.
const (
	historyDefault = 20
	historyMax     = 200
)

const historyToolDescription = `Recent changes to your memory, newest first: one line per commit with its time, commit id, command and path, and who made it. Every change to /memories is a commit, so this shows what was written, when, and by which tool call. Give path to see only the changes to one file or directory.`

const historyInputSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Only commits that changed this file or directory, /memories or under it."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 200, "description": "At most this many commits; default 20."}
  }
}`

// historyTool is the MCP history tool: recent commits, of the vault or a path.
func historyTool() *mcp.Tool {
	return &mcp.Tool{
		Name:        "history",
		Title:       "Memory history",
		Description: historyToolDescription,
		InputSchema: json.RawMessage(historyInputSchema),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}
}

// callHistory answers the history tool.
func (m *mcpServer) callHistory(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	opts, msg := historyOptions(req.Params.Arguments)
	if msg != "" {
		return textResult("Error: "+msg, true), nil
	}
	recs, err := m.store.Log(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return textResult("Error: memvault: history failed: "+contract.StorageFailure, true), nil
	}
	return textResult(renderHistory(opts, recs), false), nil
}

// historyOptions reads the history tool's input; msg says what is wrong with it.
func historyOptions(raw json.RawMessage) (opts vault.LogOptions, msg string) {
	opts.Limit = historyDefault
	if len(bytes.TrimSpace(raw)) == 0 {
		return opts, ""
	}
	var in struct {
		Path  *string `json:"path"`
		Limit *int    `json:"limit"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return opts, "Invalid history input: expected an object with an optional path (a string) and limit (an integer)"
	}
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > historyMax {
			return opts, fmt.Sprintf("Invalid limit %d: it should be within [1, %d]", *in.Limit, historyMax)
		}
		opts.Limit = *in.Limit
	}
	if in.Path != nil {
		p, err := vault.CleanPath(*in.Path)
		if err != nil {
			return opts, fmt.Sprintf("Invalid path %s: %v", *in.Path, err)
		}
		if p != vault.Root {
			opts.Path = p
		}
	}
	return opts, ""
}

// renderHistory prints records one a line:
//
//	2025-06-01T12:00:00Z 1a2b3c4d5e6f create /memories/a.md (agent claude-code, session mcp-…, tool use toolu_…)
func renderHistory(opts vault.LogOptions, recs []vault.Record) string {
	var b strings.Builder
	where := "the memory"
	if opts.Path != "" {
		where = opts.Path
	}
	if len(recs) == 0 {
		return "No commits have changed " + where + "."
	}
	fmt.Fprintf(&b, "The last %d commits that changed %s, newest first:", len(recs), where)
	for _, r := range recs {
		c := r.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		fmt.Fprintf(&b, "\n%s %s %s", r.Time.UTC().Format(time.RFC3339), c, r.Subject)
		var who []string
		for _, kv := range [][2]string{{"agent", r.Agent}, {"session", r.Session}, {"tool use", r.ToolUseID}} {
			if kv[1] != "" {
				who = append(who, kv[0]+" "+kv[1])
			}
		}
		if r.Signer == "" {
			who = append(who, "unsigned: not a writer's")
		} else {
			who = append(who, "signed by "+r.Signer)
		}
		if len(who) > 0 {
			b.WriteString(" (" + strings.Join(who, ", ") + ")")
		}
	}
	return b.String()
}
