package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// watchHelperEnv names the vault directory the helper process writes to.
const watchHelperEnv = "MEMVAULT_TEST_WATCH_WRITER"

// TestMCPWatchWriterProcess is not a test: it is the other process of
// TestMCPNotifiesOtherProcessesAtOnce, run by it with watchHelperEnv set.
func TestMCPWatchWriterProcess(t *testing.T) {
	dir := os.Getenv(watchHelperEnv)
	if dir == "" {
		return
	}
	ctx := context.Background()
	v, err := vault.Open(ctx, filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity")})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	h := agent.New(agent.Vault(v), agent.Options{Agent: "other-process"})
	for _, in := range []string{
		`{"command":"str_replace","path":"/memories/todo.md","old_str":"one","new_str":"uno"}`,
		`{"command":"create","path":"/memories/new.md","file_text":"x"}`,
	} {
		if c, isErr := h.Handle(ctx, []byte(in), ""); isErr {
			t.Fatalf("Handle(%s) = %s", in, c)
		}
	}
}

// A commit by another process reaches a subscribed client without waiting for
// the poll: the fallback poll is an hour here, so only the watch of the vault's
// ref can bring the notifications. The wait bounds only a failing run.
func TestMCPNotifiesOtherProcessesAtOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, _ := vaulttest.NewAt(t, dir)
	listChanged := make(chan struct{}, 16)
	updated := make(chan string, 16)
	cs := connectMCP(t, v, "test", mcpserver.Options{Poll: time.Hour}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { listChanged <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
	})
	const uri = "memory:///memories/todo.md"
	callMemory(t, cs, `{"command":"create","path":"/memories/todo.md","file_text":"- one"}`, "")
	waitFor(t, listChanged, "resources/list_changed after a create")
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("Subscribe(%s): %v", uri, err)
	}
	drain(listChanged)

	cmd := exec.Command(os.Args[0], "-test.run=^TestMCPWatchWriterProcess$")
	cmd.Env = append(os.Environ(), watchHelperEnv+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writer process: %v\n%s", err, out)
	}
	done := time.Now()
	if got := waitFor(t, updated, "resources/updated after another process's commit"); got != uri {
		t.Errorf("resources/updated for %s, want %s", got, uri)
	}
	waitFor(t, listChanged, "resources/list_changed after another process's create")
	t.Logf("notified %v after the writer process ended", time.Since(done))
}
