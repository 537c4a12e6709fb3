package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/agenttest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

var _ agent.VaultStore = (*vault.Vault)(nil)

// TestContract runs the conformance suite through a Handler on a store held
// in memory: the answers are the tool's. vault's TestContractOnVault runs it
// on real vaults, in both formats and in review mode.
func TestContract(t *testing.T) {
	agenttest.Run(t, func(t *testing.T) agenttest.Target { return agenttest.MemoryTarget(t) })
}

// TestCases checks the table itself: names unique, flags consistent.
func TestCases(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range agenttest.Cases {
		if seen[c.Name] {
			t.Errorf("case %q: name used twice", c.Name)
		}
		seen[c.Name] = true
		if c.WantError != strings.HasPrefix(c.Want, "Error: ") {
			t.Errorf("case %q: WantError %v but Want %.60q", c.Name, c.WantError, c.Want)
		}
		if c.WantCommit && c.WantError {
			t.Errorf("case %q: a failure cannot commit", c.Name)
		}
	}
}

func TestCommitMeta(t *testing.T) {
	ctx := context.Background()
	v := vaulttest.New(t)
	h := agent.New(agent.Vault(v), agent.Options{Agent: "claude-test", Session: "sess-1"})
	for i, in := range []string{
		`{"command":"create","path":"/memories/a.md","file_text":"a"}`,
		`{"command":"str_replace","path":"/memories/a.md","old_str":"a","new_str":"b"}`,
		`{"command":"insert","path":"/memories/a.md","insert_line":0,"insert_text":"c"}`,
		`{"command":"rename","old_path":"/memories/a.md","new_path":"/memories/b.md"}`,
		`{"command":"delete","path":"/memories/b.md"}`,
	} {
		id := fmt.Sprintf("toolu_%d", i)
		if a, err := h.Run(ctx, []byte(in), id); err != nil || a.IsError {
			t.Fatalf("Run(%s) = %+v, %v", in, a, err)
		}
		recs, err := v.Log(ctx, vault.LogOptions{Limit: 1})
		if err != nil || len(recs) != 1 {
			t.Fatalf("Log = %v, %v", recs, err)
		}
		r := recs[0]
		cmd := strings.Split(in, `"`)[3]
		if r.Command != cmd || r.ToolUseID != id || r.Agent != "claude-test" || r.Session != "sess-1" {
			t.Errorf("after %s: record %+v, want command %s, tool use %s, agent claude-test, session sess-1", in, r, cmd, id)
		}
	}
}

// failingStore fails every read and write with err.
type failingStore struct{ err error }

func (s failingStore) Snapshot(context.Context) (*vault.Snapshot, error) { return nil, s.err }
func (s failingStore) Update(context.Context, vault.Meta, func(*vault.Tx) error) error {
	return s.err
}
func (s failingStore) Limits() vault.Limits { return vault.DefaultLimits }

func TestInternalErrors(t *testing.T) {
	ctx := context.Background()
	secret := fmt.Errorf("open /home/u/.config/memvault/identity: AGE-SECRET-KEY-1XYZ: %w", vault.ErrNoIdentity)
	tests := []struct {
		err   error
		input string
		want  string
	}{
		{secret, `{"command":"view","path":"/memories"}`, "Error: memvault: view failed: no usable identity"},
		{fmt.Errorf("vault: read /memories/a: %w", vault.ErrDecrypt), `{"command":"view","path":"/memories/a"}`,
			"Error: memvault: view failed: cannot decrypt a memory file"},
		{errors.New("disk on fire: plaintext"), `{"command":"create","path":"/memories/a","file_text":""}`,
			"Error: memvault: create failed: storage failure (try again; if it fails again, run memvault fsck)"},
		{context.Canceled, `{"command":"delete","path":"/memories/a"}`, "Error: memvault: delete failed: canceled"},
	}
	for _, tt := range tests {
		h := agent.New(agent.Vault(failingStore{tt.err}), agent.Options{})
		a, err := h.Run(ctx, []byte(tt.input), "")
		if !errors.Is(err, tt.err) || a != (agent.Answer{}) {
			t.Errorf("Run(%s) = %+v, %v; want zero Answer and an error wrapping %v", tt.input, a, err, tt.err)
		}
		content, isErr := h.Handle(ctx, []byte(tt.input), "")
		if content != tt.want || !isErr {
			t.Errorf("Handle(%s) = %q, %v; want %q, true", tt.input, content, isErr, tt.want)
		}
		// A contract failure needs no store.
		content, isErr = h.Handle(ctx, []byte(`{"command":"view","path":"/etc"}`), "")
		if content != "Error: Path must start with /memories, got: /etc" || !isErr {
			t.Errorf("Handle(bad path) = %q, %v", content, isErr)
		}
	}
}

// TestConcurrentInserts: 8 goroutines × 50 inserts into one file, through one
// Handler and through two Handlers on two opens of the same vault directory.
// Every line must be there and every insert must be one commit.
func TestConcurrentInserts(t *testing.T) {
	const workers, each = 8, 50
	ctx := context.Background()
	dir := t.TempDir()
	opts := vault.Options{IdentityFile: filepath.Join(dir, "identity")}
	v1, _, err := vault.Init(ctx, filepath.Join(dir, "vault.git"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v1.Close()
	v2, err := vault.Open(ctx, filepath.Join(dir, "vault.git"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	h1 := agent.New(agent.Vault(v1), agent.Options{})
	h2 := agent.New(agent.Vault(v2), agent.Options{})
	for _, tc := range []struct {
		name   string
		file   string
		second *agent.Handler
	}{{"one-handler", "/memories/one.md", h1}, {"two-opens", "/memories/two.md", h2}} {
		t.Run(tc.name, func(t *testing.T) {
			create := fmt.Sprintf(`{"command":"create","path":%q,"file_text":"end"}`, tc.file)
			if a, err := h1.Run(ctx, []byte(create), ""); err != nil || a.IsError {
				t.Fatalf("create: %+v, %v", a, err)
			}
			before := commits(t, v1)
			var wg sync.WaitGroup
			for w := range workers {
				h := h1
				if w%2 == 1 {
					h = tc.second
				}
				wg.Go(func() {
					for i := range each {
						in := fmt.Sprintf(`{"command":"insert","path":%q,"insert_line":0,"insert_text":"w%d-%d"}`, tc.file, w, i)
						if a, err := h.Run(ctx, []byte(in), fmt.Sprintf("toolu_%d_%d", w, i)); err != nil || a.IsError {
							t.Errorf("insert w%d-%d: %+v, %v", w, i, a, err)
							return
						}
					}
				})
			}
			wg.Wait()
			if got := commits(t, v1) - before; got != workers*each {
				t.Errorf("%d inserts made %d commits", workers*each, got)
			}
			s, err := v2.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			data, err := s.ReadFile(ctx, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(string(data), "\n")
			if len(got) != workers*each+1 || got[len(got)-1] != "end" {
				t.Fatalf("file has %d lines, last %q; want %d, last \"end\"", len(got), got[len(got)-1], workers*each+1)
			}
			seen := map[string]bool{}
			for _, l := range got {
				seen[l] = true
			}
			for w := range workers {
				for i := range each {
					if !seen[fmt.Sprintf("w%d-%d", w, i)] {
						t.Errorf("line w%d-%d lost", w, i)
					}
				}
			}
		})
	}
}

func commits(t *testing.T, v *vault.Vault) int {
	t.Helper()
	recs, err := v.Log(context.Background(), vault.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memvault-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	v, _, err := vault.Init(ctx, filepath.Join(dir, "vault.git"), vault.Options{IdentityFile: filepath.Join(dir, "identity")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()

	h := agent.New(agent.Vault(v), agent.Options{Agent: "example"})
	for _, input := range []string{
		`{"command":"create","path":"/memories/progress.md","file_text":"# Progress\n- parsed the spec"}`,
		`{"command":"str_replace","path":"/memories/progress.md","old_str":"- parsed the spec","new_str":"- parsed the spec\n- wrote the tests"}`,
		`{"command":"view","path":"/memories"}`,
		`{"command":"view","path":"/memories/../etc/passwd"}`,
	} {
		content, isError := h.Handle(ctx, []byte(input), "toolu_example")
		fmt.Printf("is_error=%v\n%s\n\n", isError, content)
	}
	// Output:
	// is_error=false
	// File created successfully at: /memories/progress.md
	//
	// is_error=false
	// The memory file has been edited. Here is the snippet showing the change (with line numbers):
	//      1	# Progress
	//      2	- parsed the spec
	//      3	- wrote the tests
	//
	// is_error=false
	// Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:
	// 4K	/memories
	// 46B	/memories/progress.md
	//
	// is_error=true
	// Error: Path /memories/../etc/passwd would escape /memories directory
}
