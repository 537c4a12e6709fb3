package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault/vaulttest"
)

// BenchmarkViewFile1KB is a warm view of a 1 KB file, in process (target: ≤ 1 ms).
func BenchmarkViewFile1KB(b *testing.B) {
	ctx := context.Background()
	h := agent.New(vaulttest.New(b), agent.Options{})
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
	h := agent.New(vaulttest.New(b), agent.Options{})
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
