package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/agenttest"
	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

var _ mcpserver.Store = (*vault.AgentStore)(nil)
var _ mcpserver.ProvenanceStore = (*vault.AgentStore)(nil)

// TestMCPConformanceReview drives the whole contract through the MCP server
// in review mode, with the SDK's client: every answer is the normal mode's,
// each write is one pending change, and main does not move.
func TestMCPConformanceReview(t *testing.T) {
	template := t.TempDir()
	if v, _ := vaulttest.NewAt(t, template); v.Close() != nil {
		t.Fatal("close the template vault")
	}
	agenttest.RunExcept(t, func(t *testing.T) agenttest.Target {
		v := copyVault(t, template)
		head, _ := v.Head()
		cs := connectMCP(t, v.Agent(vault.AgentOptions{Review: true}), "agenttest", mcpserver.Options{Poll: -1}, nil)
		t.Cleanup(func() {
			if now, _ := v.Head(); now != head {
				t.Errorf("main moved in review mode")
			}
		})
		return agenttest.Target{
			Do: func(input, toolUseID string) (string, bool) {
				if !isObject(input) {
					t.Skip("not a JSON object: MCP tool arguments are always one")
				}
				return callMemory(t, cs, input, toolUseID)
			},
			Log: func() ([]vault.Record, error) {
				ps, err := v.Review(context.Background(), vault.ReviewOptions{})
				recs := make([]vault.Record, len(ps))
				for i, p := range ps {
					recs[len(ps)-1-i] = p.Record
				}
				return recs, err
			},
		}
	}, agenttest.SealedDiffers)
}

// copyVault opens a copy of the vault NewAt made in dir: a fresh vault for
// each case costs a copy, not a new vault's keys and syncs.
func copyVault(t *testing.T, dir string) *vault.Vault {
	t.Helper()
	to := t.TempDir()
	if err := os.CopyFS(to, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(context.Background(), filepath.Join(to, "vault.git"), vault.Options{IdentityFile: filepath.Join(to, "identity")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// TestMCPReadOnly: a read-only server marks its memory tool so to clients,
// views as ever, and answers every other command with the read-only error.
func TestMCPReadOnly(t *testing.T) {
	v := vaulttest.New(t)
	vaulttest.Write(t, v, "/memories/a.md", []byte("a\n"))
	cs := connectMCP(t, v.Agent(vault.AgentOptions{}), "test", mcpserver.Options{Poll: -1, ReadOnly: true}, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name != "memory" {
			continue
		}
		if a := tool.Annotations; a == nil || !a.ReadOnlyHint || a.DestructiveHint != nil && *a.DestructiveHint {
			t.Errorf("the read-only memory tool's annotations = %+v, want readOnlyHint", a)
		}
		if !strings.HasPrefix(tool.Description, "READ-ONLY HERE") {
			t.Errorf("the read-only memory tool's description starts %.40q", tool.Description)
		}
	}
	head, _ := v.Head()
	if text, isErr := callMemory(t, cs, `{"command":"view","path":"/memories/a.md"}`, "toolu_1"); isErr || !strings.Contains(text, "1\ta") {
		t.Errorf("view = %q, %v", text, isErr)
	}
	text, isErr := callMemory(t, cs, `{"command":"create","path":"/memories/b.md","file_text":"b"}`, "toolu_2")
	if !isErr || text != agent.ReadOnlyAnswer("create") {
		t.Errorf("create = %q, %v; want %q", text, isErr, agent.ReadOnlyAnswer("create"))
	}
	if now, _ := v.Head(); now != head {
		t.Errorf("a read-only server moved main")
	}
}

// TestMCPReview: in review mode a write through MCP is pending: the client
// reads it back, and finds it with search, while main does not hold it;
// out of review mode a deletion of many files is held, and its answer says
// how a person approves it.
func TestMCPReview(t *testing.T) {
	ctx := context.Background()
	v := vaulttest.New(t)
	cs := connectMCP(t, v.Agent(vault.AgentOptions{Review: true}), "review-client", mcpserver.Options{Poll: -1}, nil)
	if _, isErr := callMemory(t, cs, `{"command":"create","path":"/memories/p.md","file_text":"a pending needle\n"}`, "toolu_p"); isErr {
		t.Fatal("create in review mode failed")
	}
	if text, _ := callMemory(t, cs, `{"command":"view","path":"/memories/p.md"}`, "toolu_v"); !strings.Contains(text, "a pending needle") {
		t.Errorf("the client does not read back its pending write: %q", text)
	}
	if text, _ := callTool(t, cs, "search", `{"pattern":"needle"}`); !strings.Contains(text, "p.md") {
		t.Errorf("search does not find the pending write: %q", text)
	}
	snap, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := snap.Stat("/memories/p.md"); k != vault.KindNone {
		t.Errorf("main holds the pending write")
	}
	ps, err := v.Review(ctx, vault.ReviewOptions{})
	if err != nil || len(ps) != 1 || ps[0].ToolUseID != "toolu_p" || !strings.HasPrefix(ps[0].Agent, "review-client") {
		t.Fatalf("Review = %+v, %v", ps, err)
	}

	w := vaulttest.New(t)
	for i := range 7 {
		vaulttest.Write(t, w, fmt.Sprintf("/memories/old/%d.md", i), []byte("x\n"))
	}
	cs = connectMCP(t, w.Agent(vault.AgentOptions{}), "test", mcpserver.Options{Poll: -1}, nil)
	text, isErr := callMemory(t, cs, `{"command":"delete","path":"/memories/old"}`, "toolu_d")
	if !isErr || !strings.Contains(text, "deleted or emptied to 7 of 7, over the limit of 5 files") || !strings.Contains(text, "memvault review approve ") {
		t.Errorf("a deletion of 7 files through MCP = %q, %v; want it held", text, isErr)
	}
	if k, _ := mustSnap(t, w).Stat("/memories/old/3.md"); k != vault.KindFile {
		t.Errorf("the held deletion reached main")
	}
}

func mustSnap(t *testing.T, v *vault.Vault) *vault.Snapshot {
	t.Helper()
	s, err := v.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}
