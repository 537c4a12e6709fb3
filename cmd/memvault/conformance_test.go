package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/agent/agenttest"
	"github.com/memvault/memvault/vault"
)

// TestConformance drives every case of the memory tool contract through the CLI:
// `memvault tool` answers each input and `memvault log --json` reports the history,
// both run in process through the cobra root on a fresh vault per case. The
// vault is what init makes, sealed; the agent package's TestContract runs the
// cases of long names a sealed vault refuses on a plain one.
func TestConformance(t *testing.T) {
	agenttest.RunExcept(t, func(t *testing.T) agenttest.Target {
		t.Parallel() // each case has its own vault; they wait on fsync more than on the CPU
		dir := t.TempDir()
		cli := cliFor("--vault", filepath.Join(dir, "vault.git"), "--identity", filepath.Join(dir, "identity"))
		if _, code, stderr := cli("", "init"); code != exitOK {
			t.Fatalf("memvault init: status %d: %s", code, stderr)
		}
		return agenttest.Target{
			Do: func(input, toolUseID string) (string, bool) {
				stdout, code, stderr := cli(input, "tool", "--tool-use-id", toolUseID)
				if code != exitOK && code != exitAnswer {
					t.Fatalf("memvault tool: status %d: %s", code, stderr)
				}
				if stderr != "" {
					t.Errorf("memvault tool: status %d with stderr %q, want none", code, stderr)
				}
				return stdout, code == exitAnswer
			},
			Log: func() ([]vault.Record, error) {
				stdout, code, stderr := cli("", "log", "--json")
				if code != exitOK {
					return nil, fmt.Errorf("memvault log: status %d: %s", code, stderr)
				}
				return decodeLog(stdout)
			},
		}
	}, agenttest.SealedDiffers)
}

// cliFor returns a function that runs memvault in process with flags before its args.
func cliFor(flags ...string) func(stdin string, args ...string) (stdout string, code int, stderr string) {
	return func(stdin string, args ...string) (string, int, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append(flags[:len(flags):len(flags)], args...),
			strings.NewReader(stdin), &out, &errOut)
		return out.String(), code, errOut.String()
	}
}

// decodeLog reads `memvault log --json` output: one record a line.
func decodeLog(s string) ([]vault.Record, error) {
	var recs []vault.Record
	dec := json.NewDecoder(strings.NewReader(s))
	for dec.More() {
		var r vault.Record
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("decode log --json: %w", err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}
