package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent/mcpserver"
	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

var _ mcpserver.ProvenanceStore = (*vault.Vault)(nil)

func callTool(t *testing.T, cs *mcp.ClientSession, name, args string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("CallTool(%s, %s) = %v", name, args, err)
	}
	return resultText(t, res), res.IsError
}

// TestMCPSearchAndBlame runs on both formats: a sealed vault's search and
// blame give the same answers, with names and messages opened.
func TestMCPSearchAndBlame(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		t.Run(fmt.Sprintf("sealed=%v", sealed), func(t *testing.T) { testMCPSearchAndBlame(t, vaulttest.NewFormat(t, sealed)) })
	}
}

func testMCPSearchAndBlame(t *testing.T, v *vault.Vault) {
	cs := connectMCP(t, v, "prov-client", mcpserver.Options{Poll: -1}, nil)
	for i, in := range []string{
		`{"command":"create","path":"/memories/people/ada.md","file_text":"Ada prefers tea.\nAda works on the compiler.\n"}`,
		`{"command":"create","path":"/memories/projects.md","file_text":"compiler: due Friday\n"}`,
		`{"command":"str_replace","path":"/memories/people/ada.md","old_str":"prefers tea","new_str":"prefers coffee"}`,
	} {
		if text, isErr := callMemory(t, cs, in, fmt.Sprintf("toolu_%d", i+1)); isErr {
			t.Fatalf("memory %s: %s", in, text)
		}
	}

	// The tools are listed with schemas and descriptions that say when to use them.
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range list.Tools {
		tools[tool.Name] = tool
	}
	for name, want := range map[string]string{"search": "before you view or edit it", "blame": "where a remembered fact came from"} {
		tool := tools[name]
		if tool == nil || !strings.Contains(tool.Description, want) || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Fatalf("tool %s = %+v, want a read-only tool whose description says %q", name, tool, want)
		}
		var schema struct {
			Required []string `json:"required"`
		}
		raw, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(raw, &schema); err != nil || len(schema.Required) != 1 {
			t.Errorf("%s schema = %s, want one required field", name, raw)
		}
	}

	for _, tc := range []struct {
		args    string
		want    []string
		isError bool
	}{
		{`{"pattern":"compiler"}`, []string{"2 in 2 file(s).", "\n/memories/people/ada.md:2: Ada works on the compiler.", "\n/memories/projects.md:1: compiler: due Friday"}, false},
		{`{"pattern":"ADA PREFERS","ignore_case":true,"path":"/memories/people"}`, []string{"\n/memories/people/ada.md:1: Ada prefers coffee."}, false},
		{`{"pattern":"prefers","context":1}`, []string{":1: Ada prefers coffee.", "\n/memories/people/ada.md-2- Ada works on the compiler."}, false},
		{`{"pattern":"tea"}`, []string{`No line under /memories matches "tea".`}, false},
		{`{"pattern":"("}`, []string{"Error: Invalid pattern"}, true},
		{`{"pattern":"x","path":"/memories/none"}`, []string{"Error: The path /memories/none does not exist. Please provide a valid path."}, true},
		{`{"pattern":"x","path":"/etc"}`, []string{"Error: Invalid path /etc"}, true},
		{`{}`, []string{"Error: Invalid search input"}, true},
	} {
		text, isErr := callTool(t, cs, "search", tc.args)
		for _, w := range tc.want {
			if !strings.Contains(text, w) || isErr != tc.isError {
				t.Errorf("search %s = %q (error %v), want %q (error %v)", tc.args, text, isErr, w, tc.isError)
			}
		}
	}

	head := vaulttest.Log(t, v, vault.LogOptions{Limit: 1})[0].Commit
	text, isErr := callTool(t, cs, "blame", `{"path":"/memories/people/ada.md"}`)
	if isErr {
		t.Fatal(text)
	}
	for _, w := range []string{
		"(agent prov-client, session mcp-", "tool use toolu_3)", "tool use toolu_1)",
		"\n     1 " + head[:12] + "\tAda prefers coffee.",
		"\n     2 ", "\tAda works on the compiler.",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("blame = %q, want %q", text, w)
		}
	}
	if text, _ := callTool(t, cs, "blame", `{"path":"/memories/people/ada.md","at":"main~1","view_range":[1,1]}`); !strings.Contains(text, "Ada prefers tea.") || strings.Contains(text, "compiler") {
		t.Errorf("blame at main~1, line 1 = %q, want only the tea line", text)
	}
	for args, want := range map[string]string{
		`{"path":"/memories/people"}`:                       "is a directory",
		`{"path":"/memories/nobody.md"}`:                    "does not exist",
		`{"path":"/memories/people/ada.md","at":"nope"}`:    "Unknown revision",
		`{"path":"/memories/projects.md","at":"main~2"}`:    "did not exist at main~2",
		`{"path":"/memories/people/ada.md","view_range":1}`: "Invalid blame input",
	} {
		if text, isErr := callTool(t, cs, "blame", args); !isErr || !strings.Contains(text, want) {
			t.Errorf("blame %s = %q (error %v), want an error saying %q", args, text, isErr, want)
		}
	}
}

// TestMCPSearchBounded: a search is cut at the view limit and says so.
func TestMCPSearchBounded(t *testing.T) {
	v := vaulttest.New(t)
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "needle %d\n", i)
	}
	vaulttest.Write(t, v, "/memories/big.md", []byte(b.String()))
	cs := connectMCP(t, v, "t", mcpserver.Options{Poll: -1}, nil)
	text, isErr := callTool(t, cs, "search", `{"pattern":"needle"}`)
	limit := v.Limits().ViewLimit
	if isErr || len([]rune(text)) > limit+120 || !regexp.MustCompile(`\[Output truncated at \d+ characters\. Narrow the pattern`).MatchString(text) {
		t.Errorf("search of 3,000 matches: %d characters (limit %d), error %v, ends %q", len(text), limit, isErr, text[max(0, len(text)-120):])
	}
}

// TestMCPSearchSaysWhatItLeftOut: the search goes on past an entry that is no
// memory file memvault reads, and tells the model it did, so a search that
// found nothing is not taken for a search of everything.
func TestMCPSearchSaysWhatItLeftOut(t *testing.T) {
	v := vaulttest.NewFormat(t, false)
	vaulttest.Write(t, v, "/memories/kept.md", []byte("the needle\n"))
	if err := v.Close(); err != nil { // what it wrote reaches git's refs
		t.Fatal(err)
	}
	h := gittest.Damage(t, v.Dir())
	h.Change("memories/z-bad.md", gittest.TreeEntry{Mode: "100644", Hash: h.Blob([]byte("age-encryption.org/v1\n-> X25519 x\nbody\n"))}, "by hand\n")
	v2, err := vault.Open(context.Background(), v.Dir(), vault.Options{IdentityFile: v.IdentityFile()})
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	cs := connectMCP(t, v2, "prov-client", mcpserver.Options{Poll: -1}, nil)
	text, isErr := callTool(t, cs, "search", `{"pattern":"needle"}`)
	if isErr || !strings.Contains(text, "/memories/kept.md:1: the needle") ||
		!strings.Contains(text, `[Not searched, as no memory file memvault can read (1): "/memories/z-bad.md" (a damaged age file (no complete header))]`) {
		t.Errorf("search = %q, %v; want the match and the entry left out", text, isErr)
	}
}
