package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkViewFile1KB is a warm view of a 1 KB file, in process (target: ≤ 1 ms).
func BenchmarkViewFile1KB(b *testing.B) {
	ctx := context.Background()
	h := agent.New(agent.Vault(vaulttest.New(b)), agent.Options{})
	text := strings.Repeat(strings.Repeat("x", 63)+"\n", 16)
	if a, err := h.Run(ctx, fmt.Appendf(nil, `{"command":"create","path":"/memories/a.md","file_text":%q}`, text), ""); err != nil || a.IsError {
		b.Fatal(a, err)
	}
	in := []byte(`{"command":"view","path":"/memories/a.md"}`)
	b.ResetTimer()
	for b.Loop() {
		if a, err := h.Run(ctx, in, ""); err != nil || a.IsError {
			b.Fatal(a, err)
		}
	}
}

// BenchmarkStrReplace is one durable str_replace on a small vault, in process.
func BenchmarkStrReplace(b *testing.B) {
	ctx := context.Background()
	h := agent.New(agent.Vault(vaulttest.New(b)), agent.Options{})
	if a, err := h.Run(ctx, []byte(`{"command":"create","path":"/memories/a.md","file_text":"n=0"}`), ""); err != nil || a.IsError {
		b.Fatal(a, err)
	}
	i := 0
	for b.Loop() {
		in := fmt.Appendf(nil, `{"command":"str_replace","path":"/memories/a.md","old_str":"n=%d","new_str":"n=%d"}`, i, i+1)
		if a, err := h.Run(ctx, in, ""); err != nil || a.IsError {
			b.Fatal(a, err)
		}
		i++
	}
}

// BenchmarkServeMix is the mix of bridges' BenchmarkServeVsSDK in process, from
// request line to answer line through Serve, on a 5,000-file vault: per group,
// create a file, str_replace in it, view it and view a seeded file. The
// whole-process comparison with the SDK's plain-folder backend is bridges'
// BenchmarkServeVsSDK; this one is for profiling:
//
//	go test ./agent -run '^$' -bench ServeMix -benchtime 400x -cpuprofile cpu.out
func BenchmarkServeMix(b *testing.B) {
	const files = 5000
	ctx := context.Background()
	v := vaulttest.New(b)
	vaulttest.Seed(b, v, files, 1)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- agent.Serve(ctx, agent.New(agent.Vault(v), agent.Options{}), inR, outW) }()
	answers := bufio.NewReader(outR)
	call := func(input map[string]any) {
		line, _ := json.Marshal(map[string]any{"id": 1, "input": input})
		if _, err := inW.Write(append(line, '\n')); err != nil {
			b.Fatal(err)
		}
		ans, err := answers.ReadBytes('\n')
		if err != nil || bytes.Contains(ans, []byte(`"is_error":true`)) {
			b.Fatalf("%s: %s %v", line, ans, err)
		}
	}
	runs++
	i := 0
	for b.Loop() {
		p := fmt.Sprintf("/memories/d%03d/new-%d-%d.md", i%50, runs, i)
		call(map[string]any{"command": "create", "path": p, "file_text": string(vaulttest.Content(i)) + "status: TODO\n"})
		call(map[string]any{"command": "str_replace", "path": p, "old_str": "status: TODO", "new_str": "status: DONE"})
		call(map[string]any{"command": "view", "path": p})
		call(map[string]any{"command": "view", "path": vaulttest.FilePath(i * 7919 % files)})
		i++
	}
	b.StopTimer()
	inW.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// runs tells the runs of a benchmark apart, so each creates new files.
var runs int
