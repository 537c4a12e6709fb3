package agent_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoSDKDeps: a program that uses only the memory tool's
// Handler builds neither the MCP SDK nor the Anthropic SDK in. Those belong
// to agent/mcpserver, agent/claude and agent/memstoreapi.
func TestNoSDKDeps(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("skipped: no go binary on PATH to list agent's dependencies")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/memvault/memvault/agent").Output()
	if err != nil {
		t.Fatalf("go list -deps agent: %v", err)
	}
	deps := strings.Fields(string(out))
	found := false
	for _, d := range deps {
		found = found || d == "github.com/memvault/memvault/vault"
		for _, sdk := range []string{"github.com/modelcontextprotocol/go-sdk", "github.com/anthropics/anthropic-sdk-go", "github.com/hanwen/go-fuse/v2"} {
			if d == sdk || strings.HasPrefix(d, sdk+"/") {
				t.Errorf("agent depends on %s (module %s); only agent/mcpserver, agent/claude and agent/memstoreapi may", d, sdk)
			}
		}
	}
	if !found {
		t.Fatalf("go list -deps agent lists %d packages and not vault: not the list of agent's dependencies", len(deps))
	}
}
