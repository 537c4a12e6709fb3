package claude_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/memvault/memvault/agent/claude"
)

// contextManagement is the context_management of every request of a chat
// whose options ask for the default edits: context editing that spares the
// memory tool, then compaction with memvault's trigger and instructions
// (pausing after it if pause).
func contextManagement(pause bool) string {
	instructions, _ := json.Marshal(claude.CompactionInstructions)
	p := ""
	if pause {
		p = `"pause_after_compaction":true,`
	}
	return `{"edits":[{"exclude_tools":["memory"],"type":"clear_tool_uses_20250919"},` +
		`{"instructions":` + string(instructions) + `,` + p + `"trigger":{"value":150000,"type":"input_tokens"},"type":"compact_20260112"}]}`
}

// messageEdits is message with the context edits the API reports it applied.
func messageEdits(stop, appliedEdits string, blocks ...string) apiReply {
	r := message(stop, blocks...)
	r.body = strings.Replace(r.body, `"applied_edits":[]`, `"applied_edits":`+appliedEdits, 1)
	return r
}

func compactionBlock(summary, encrypted, signature string) string {
	s, _ := json.Marshal(summary)
	return `{"type":"compaction","content":` + string(s) + `,"encrypted_content":"` + encrypted + `","signature":"` + signature + `"}`
}

// sameJSON tells whether a and b are the same JSON value, whatever the order of keys.
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// TestChatLongSession plays a long session's turn: a response that compacted
// the conversation and goes on with a memory call (the API also cleared old
// tool results), then a turn paused right after a second compaction
// (the chat asked for pause_after_compaction), then another memory call and
// the answer. Every request asks for context editing and compaction; the compaction blocks go
// back verbatim in the assistant content that held them; the paused turn is
// sent back as it stood, which continues it, instead of ending with no answer;
// and what the model wrote is in the vault.
func TestChatLongSession(t *testing.T) {
	first := compactionBlock("Ada is planning a trip; the plan is in /memories/trip.md.", "enc_1", "sig_1")
	second := compactionBlock("Ada goes to Lisbon in May (/memories/trip.md); next: the hotel.", "enc_2", "sig_2")
	api, client := newFakeAPI(t,
		messageEdits("tool_use", `[{"type":"clear_tool_uses_20250919","cleared_tool_uses":2,"cleared_input_tokens":4000}]`,
			first, textBlock("Saving the plan."),
			toolUse("toolu_L1", `{"command":"create","path":"/memories/trip.md","file_text":"- Lisbon, May\n"}`)),
		message("compaction", second),
		message("tool_use", toolUse("toolu_L2", `{"command":"str_replace","path":"/memories/trip.md","old_str":"May","new_str":"May, Hotel Avenida"}`)),
		message("end_turn", textBlock("Planned: Lisbon in May, Hotel Avenida.")))
	var edits []claude.ContextEdit
	chat, v := newChat(t, client, claude.ChatOptions{ContextEdits: claude.ContextEdits{PauseAfterCompaction: true},
		OnContextEdit: func(e claude.ContextEdit) { edits = append(edits, e) }})

	got, err := chat.Send(context.Background(), "Plan my trip to Lisbon in May, with a hotel.")
	if err != nil || got != "Planned: Lisbon in May, Hotel Avenida." {
		t.Fatalf("Send = %q, %v; want the final text", got, err)
	}
	reqs := api.requests()
	if len(reqs) != 4 {
		t.Fatalf("the API got %d requests, want 4 (the paused turn continued)", len(reqs))
	}
	for i, r := range reqs {
		if b := r.Header.Get("anthropic-beta"); b != "context-management-2025-06-27,compact-2026-01-12" {
			t.Errorf("request %d: anthropic-beta = %q, want context-management-2025-06-27,compact-2026-01-12", i, b)
		}
		if cm, want := string(r.Body.ContextManagement), contextManagement(true); cm != want {
			t.Errorf("request %d: context_management = %s\nwant %s", i, cm, want)
		}
	}

	// What each request sends back: role and content blocks, in order.
	type msg struct {
		role   string
		blocks []string
	}
	prompt := msg{"user", []string{textBlock("Plan my trip to Lisbon in May, with a hotel.")}}
	compacted := msg{"assistant", []string{first, textBlock("Saving the plan."),
		toolUse("toolu_L1", `{"command":"create","path":"/memories/trip.md","file_text":"- Lisbon, May\n"}`)}}
	result1 := msg{"user", []string{`{"type":"tool_result","tool_use_id":"toolu_L1","content":[{"type":"text","text":"File created successfully at: /memories/trip.md"}]}`}}
	paused := msg{"assistant", []string{second}}
	call2 := msg{"assistant", []string{toolUse("toolu_L2", `{"command":"str_replace","path":"/memories/trip.md","old_str":"May","new_str":"May, Hotel Avenida"}`)}}
	for i, want := range [][]msg{
		{prompt},
		{prompt, compacted, result1},
		{prompt, compacted, result1, paused}, // ends with the paused turn: the API continues it
		{prompt, compacted, result1, paused, call2},
	} {
		sent := reqs[i].Body.Messages
		if len(sent) < len(want) {
			t.Errorf("request %d has %d messages, want at least %d", i, len(sent), len(want))
			continue
		}
		for j, w := range want {
			m := sent[j]
			ok := m.Role == w.role && len(m.Content) == len(w.blocks)
			for k := 0; ok && k < len(w.blocks); k++ {
				ok = sameJSON(t, string(m.Content[k]), w.blocks[k])
			}
			if !ok {
				t.Errorf("request %d, message %d: %s %s\nwant %s %s", i, j, m.Role, m.Content, w.role, w.blocks)
			}
		}
		if i == 2 && len(sent) != len(want) {
			t.Errorf("request %d has %d messages, want %d: the paused turn sent back alone, as it stood", i, len(sent), len(want))
		}
	}
	if last := reqs[3].Body.Messages; len(last) != 6 || last[5].Role != "user" ||
		!strings.Contains(string(last[5].Content[0]), `"tool_use_id":"toolu_L2"`) {
		t.Errorf("the last request ends %+v, want the result of toolu_L2", last[len(last)-1])
	}

	wantEdits := []claude.ContextEdit{{Type: "clear_tool_uses_20250919", ClearedToolUses: 2, ClearedInputTokens: 4000},
		{Type: "compaction"}, {Type: "compaction"}}
	if !reflect.DeepEqual(edits, wantEdits) {
		t.Errorf("OnContextEdit saw %+v, want %+v", edits, wantEdits)
	}

	snap, err := v.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if b, err := snap.ReadFile(context.Background(), "/memories/trip.md"); err != nil || string(b) != "- Lisbon, May, Hotel Avenida\n" {
		t.Errorf("ReadFile(/memories/trip.md) = %q, %v; want what the model wrote across both compactions", b, err)
	}
}

// TestContextManagementEdits: either edit can be left out, and the beta
// headers follow the edits asked for; the memory tool's own beta is always there.
func TestContextManagementEdits(t *testing.T) {
	for _, tc := range []struct {
		edits claude.ContextEdits
		types string
		betas string
	}{
		{claude.ContextEdits{}, "clear_tool_uses_20250919 compact_20260112", "context-management-2025-06-27 compact-2026-01-12"},
		{claude.ContextEdits{NoCompaction: true}, "clear_tool_uses_20250919", "context-management-2025-06-27"},
		{claude.ContextEdits{NoContextEditing: true}, "compact_20260112", "context-management-2025-06-27 compact-2026-01-12"},
		{claude.ContextEdits{NoContextEditing: true, NoCompaction: true}, "", "context-management-2025-06-27"},
		{claude.ContextEdits{NoCompaction: true, PauseAfterCompaction: true}, "clear_tool_uses_20250919", "context-management-2025-06-27"},
	} {
		cm, betas := claude.BetaContextManagement(tc.edits)
		var types []string
		for _, e := range cm.Edits {
			types = append(types, *e.GetType())
			if p := e.GetPauseAfterCompaction(); p != nil {
				t.Errorf("BetaContextManagement(%+v) asks for pause_after_compaction %v, want it left to the API", tc.edits, *p)
			}
		}
		var bs []string
		for _, b := range betas {
			bs = append(bs, string(b))
		}
		if strings.Join(types, " ") != tc.types || strings.Join(bs, " ") != tc.betas {
			t.Errorf("BetaContextManagement(%+v) = edits %v, betas %v; want %s; %s", tc.edits, types, bs, tc.types, tc.betas)
		}
	}
	// The summary of a memory agent's conversation points at its memory and
	// has what is not saved there yet saved.
	for _, want := range []string{"/memories", "not yet saved"} {
		if !strings.Contains(claude.CompactionInstructions, want) {
			t.Errorf("CompactionInstructions do not say %q", want)
		}
	}
}
