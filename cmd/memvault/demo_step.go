package main

import (
	"bytes"
	"encoding/json"
)

// demoConversation is one session of the scripted agent: what the user asked, then the
// memory tool calls the agent made while it worked on it.
type demoConversation struct {
	title string
	user  string
	steps []demoStep
}

// demoStep is one memory tool call of the demo.
type demoStep struct {
	note    string          // why the agent makes the call
	summary string          // command and path, for the step's header
	input   json.RawMessage // the tool input, fields in the order a model writes them
	fails   bool            // the script expects an error answer
}

// failing marks a step whose answer should be an error.
func (s demoStep) failing() demoStep {
	s.fails = true
	return s
}

// toolJSON builds a tool input object from key, value pairs, keeping their order.
func toolJSON(kv ...any) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(&b, kv[i])
		b.WriteByte(':')
		writeJSON(&b, kv[i+1])
	}
	b.WriteByte('}')
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings, ints and int slices always encode
	b.Truncate(b.Len() - 1)
}

func view(note, p string) demoStep {
	return demoStep{note: note, summary: "view " + p,
		input: toolJSON("command", "view", "path", p)}
}

func viewRange(note, p string, from, to int) demoStep {
	return demoStep{note: note, summary: "view " + p,
		input: toolJSON("command", "view", "path", p, "view_range", []int{from, to})}
}

func create(note, p, text string) demoStep {
	return demoStep{note: note, summary: "create " + p,
		input: toolJSON("command", "create", "path", p, "file_text", text)}
}

func strReplace(note, p, oldStr, newStr string) demoStep {
	return demoStep{note: note, summary: "str_replace " + p,
		input: toolJSON("command", "str_replace", "path", p, "old_str", oldStr, "new_str", newStr)}
}

func insert(note, p string, line int, text string) demoStep {
	return demoStep{note: note, summary: "insert " + p,
		input: toolJSON("command", "insert", "path", p, "insert_line", line, "insert_text", text)}
}

func remove(note, p string) demoStep {
	return demoStep{note: note, summary: "delete " + p,
		input: toolJSON("command", "delete", "path", p)}
}

func rename(note, oldPath, newPath string) demoStep {
	return demoStep{note: note, summary: "rename " + oldPath + " -> " + newPath,
		input: toolJSON("command", "rename", "old_path", oldPath, "new_path", newPath)}
}
