package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// limitedVault is a vault whose config sets the [memvault] limits in cfg.
func limitedVault(t *testing.T, cfg string) *vault.Vault {
	t.Helper()
	dir := t.TempDir()
	v, opts := vaulttest.NewAt(t, dir)
	f, err := os.OpenFile(filepath.Join(v.Dir(), "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("[memvault]\n" + cfg); err != nil {
		t.Fatal(err)
	}
	f.Close()
	v2, err := vault.Open(context.Background(), v.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v2.Close() })
	return v2
}

func TestLimitsFromConfig(t *testing.T) {
	v := limitedVault(t, "\tmaxVaultSize = 100\n\tmaxFiles = 3\n\tmaxRequestLine = 300\n\tmaxFileSize = 60\n"+
		"\tmassDeleteFiles = 9\n\tmassDeleteShare = 40\n\treview = true\n")
	got := v.Limits()
	want := vault.Limits{MaxFileSize: 60, ViewLimit: vault.DefaultLimits.ViewLimit, MaxVaultSize: 100, MaxFiles: 3, MaxRequestLine: 300,
		MassDeleteFiles: 9, MassDeleteShare: 40, Review: true}
	if got != want {
		t.Errorf("Limits() = %+v, want %+v", got, want)
	}
	if d := vaulttest.New(t).Limits(); d != vault.DefaultLimits {
		t.Errorf("Limits() of a vault without config = %+v, want %+v", d, vault.DefaultLimits)
	}
}

// TestVaultLimits: each limit answers with what happened and what to do, and
// changes nothing; shrinking and deleting still work at the limit.
func TestVaultLimits(t *testing.T) {
	v := limitedVault(t, "\tmaxVaultSize = 100\n\tmaxFiles = 3\n")
	h := agent.New(agent.Vault(v), agent.Options{})
	ctx := context.Background()
	steps := []struct{ input, want string }{
		{`{"command":"create","path":"/memories/a.md","file_text":"` + strings.Repeat("a", 40) + `"}`, "File created successfully at: /memories/a.md"},
		{`{"command":"create","path":"/memories/d/b.md","file_text":"` + strings.Repeat("b", 40) + `"}`, "File created successfully at: /memories/d/b.md"},
		{`{"command":"create","path":"/memories/c.md","file_text":"c"}`, "File created successfully at: /memories/c.md"},
		{`{"command":"create","path":"/memories/e.md","file_text":""}`,
			"Error: Cannot create /memories/e.md: the memory directory would hold 4 files, over the limit of 3 files. Delete memory files you no longer need, or merge small ones, then try again."},
		{`{"command":"str_replace","path":"/memories/c.md","old_str":"c","new_str":"` + strings.Repeat("c", 21) + `"}`,
			"Error: Cannot write /memories/c.md: the memory directory would hold 101 bytes, over the limit of 100 bytes. Delete or shorten memory files you no longer need, then try again."},
		{`{"command":"insert","path":"/memories/c.md","insert_line":1,"insert_text":"` + strings.Repeat("c", 19) + `"}`,
			"Error: Cannot write /memories/c.md: the memory directory would hold 101 bytes, over the limit of 100 bytes. Delete or shorten memory files you no longer need, then try again."},
		{`{"command":"insert","path":"/memories/c.md","insert_line":1,"insert_text":"` + strings.Repeat("c", 18) + `"}`, "The file /memories/c.md has been edited."},
		{`{"command":"str_replace","path":"/memories/a.md","old_str":"` + strings.Repeat("a", 40) + `","new_str":"a"}`, "The memory file has been edited."},
		{`{"command":"delete","path":"/memories/d"}`, "Successfully deleted /memories/d"},
		{`{"command":"create","path":"/memories/e.md","file_text":""}`, "File created successfully at: /memories/e.md"},
	}
	for i, s := range steps {
		got, isErr := h.Handle(ctx, []byte(s.input), "")
		if !strings.HasPrefix(got, s.want) || isErr != strings.HasPrefix(s.want, "Error:") {
			t.Fatalf("step %d: Handle(%s) = %q, %v; want %q", i, s.input, got, isErr, s.want)
		}
	}
	snap, _ := v.Snapshot(ctx)
	if u, err := snap.Usage(ctx); err != nil || u.Files != 3 || u.Bytes != 1+20+0 {
		t.Errorf("Usage() = %+v, %v; want 3 files of 21 bytes", u, err)
	}
	if log, _ := v.Log(ctx, vault.LogOptions{}); len(log) != 1+3+1+1+1+1 {
		t.Errorf("%d commits, want 8: a refused write committed", len(log))
	}
}

// TestRequestLineLimit: serve takes its line limit from the vault's config, and
// its answer to a longer line names the config key that raises it; the next
// line is answered as usual.
func TestRequestLineLimit(t *testing.T) {
	v := limitedVault(t, "\tmaxRequestLine = 100\n")
	var out strings.Builder
	in := `{"id":1,"input":{"command":"view","path":"/memories"}}` + "\n" +
		`{"id":2,"input":{"command":"create","path":"/memories/x.md","file_text":"` + strings.Repeat("x", 100) + `"}}` + "\n" +
		`{"id":3,"input":{"command":"create","path":"/memories/x.md","file_text":"x"}}` + "\n"
	if err := agent.Serve(context.Background(), agent.New(agent.Vault(v), agent.Options{}), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"id":2,"content":"Error: Invalid request: line longer than 100 bytes, so nothing was run. ` +
			`Send a shorter request (less file_text at once), or raise the limit in the vault's config: ` +
			`git --git-dir=VAULT config memvault.maxRequestLine BYTES","is_error":true}`,
		`{"id":3,"content":"File created successfully at: /memories/x.md","is_error":false}`,
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 3 || lines[1] != want[0] || lines[2] != want[1] {
		t.Errorf("Serve answers = %q, want the second and third to be\n%s", out.String(), strings.Join(want, "\n"))
	}
}
