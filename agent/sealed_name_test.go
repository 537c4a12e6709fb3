package agent_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault"
)

// TestSealedLongName: the sealed format stores a path component in at most
// 255 bytes, so a name over 143 bytes is an invalid path there, where the
// plain format takes names of up to 255 bytes (agenttest.SealedDiffers).
func TestSealedLongName(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, _, err := vault.Init(ctx, filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity")})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	h := agent.New(agent.Vault(v), agent.Options{})
	long := "/memories/" + strings.Repeat("s", 144)
	ok := "/memories/" + strings.Repeat("s", 143)
	for _, tc := range []struct{ input, want string }{
		{`{"command":"create","path":"` + ok + `","file_text":"x"}`, "File created successfully at: " + ok},
		{`{"command":"create","path":"` + long + `","file_text":"x"}`, "Error: Invalid path " + long + ": segment over 143 bytes, the longest a sealed vault stores"},
		{`{"command":"view","path":"` + long + `"}`, "Error: The path " + long + " does not exist. Please provide a valid path."},
		{`{"command":"rename","old_path":"` + ok + `","new_path":"` + long + `"}`, "Error: Invalid path " + long + ": segment over 143 bytes, the longest a sealed vault stores"},
	} {
		a, err := h.Run(ctx, []byte(tc.input), "toolu_1")
		if err != nil || a.Content != tc.want {
			t.Errorf("Run(%.80s…) = %q, %v; want %q", tc.input, a.Content, err, tc.want)
		}
	}
}
