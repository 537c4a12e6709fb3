package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestViewRecordsUse: a file the agent views is used, so expire keeps it; a
// listing of its directory does not count as a use of the files in it.
func TestViewRecordsUse(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := vaulttest.NewClocked(t, &now)
	h := agent.New(agent.Vault(v), agent.Options{})
	for _, in := range []string{
		`{"command":"create","path":"/memories/kept.md","file_text":"k"}`,
		`{"command":"create","path":"/memories/gone.md","file_text":"g"}`,
	} {
		if got, isErr := h.Handle(ctx, []byte(in), ""); isErr {
			t.Fatalf("Handle(%s) = %q", in, got)
		}
	}
	now = now.Add(60 * 24 * time.Hour)
	for _, in := range []string{`{"command":"view","path":"/memories/kept.md"}`, `{"command":"view","path":"/memories"}`} {
		if got, isErr := h.Handle(ctx, []byte(in), ""); isErr {
			t.Fatalf("Handle(%s) = %q", in, got)
		}
	}
	now = now.Add(60 * 24 * time.Hour)
	unused, _, err := v.Expire(ctx, 90*24*time.Hour, true)
	if err != nil || len(unused) != 1 || unused[0].Path != "/memories/gone.md" {
		t.Errorf("Expire(90d, dry run) = %v, %v; want gone.md alone", unused, err)
	}
}
