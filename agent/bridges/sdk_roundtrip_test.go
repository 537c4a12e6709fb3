package bridges_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sdkWrites are what an agent wrote with the TypeScript SDK's own
// local-filesystem memory tool before it met memvault: nested folders, text
// that is not ASCII, CRLF line ends, an empty file, a hidden folder, and edits.
var sdkWrites = []string{
	`{"command":"create","path":"/memories/user.md","file_text":"# User\nPrefers green tea.\nWorks in Lisbon.\n"}`,
	`{"command":"create","path":"/memories/projects/app/notes.md","file_text":"- ship the importer\n- status: TODO\n"}`,
	`{"command":"create","path":"/memories/projects/app/windows.txt","file_text":"one\r\ntwo\r\n"}`,
	`{"command":"create","path":"/memories/日本/ñ é.md","file_text":"héllo\t✓\n"}`,
	`{"command":"create","path":"/memories/empty.md","file_text":""}`,
	`{"command":"create","path":"/memories/.hidden/x.md","file_text":"not listed\n"}`,
	`{"command":"str_replace","path":"/memories/projects/app/notes.md","old_str":"status: TODO","new_str":"status: DONE"}`,
	`{"command":"insert","path":"/memories/user.md","insert_line":1,"insert_text":"Name: Ada"}`,
	`{"command":"create","path":"/memories/scratch/old.md","file_text":"moved away\n"}`,
	`{"command":"rename","old_path":"/memories/scratch","new_path":"/memories/archive"}`,
}

// sdkReplay is the same session continued after the import, through memvault
// serve and through the SDK's folder: views of every kind, edits, and the
// errors the model meets. It never empties a folder: the SDK keeps an empty
// folder and memvault, storing no empty folder in git, does not (the
// contract's state rules say so).
var sdkReplay = []string{
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/user.md"}`,
	`{"command":"view","path":"/memories/user.md","view_range":[2,3]}`,
	`{"command":"view","path":"/memories/projects/app/windows.txt"}`,
	`{"command":"view","path":"/memories/日本/ñ é.md"}`,
	`{"command":"view","path":"/memories/empty.md"}`,
	`{"command":"view","path":"/memories/archive"}`,
	`{"command":"view","path":"/memories/nope.md"}`,
	`{"command":"create","path":"/memories/user.md","file_text":"again"}`,
	`{"command":"str_replace","path":"/memories/user.md","old_str":"green tea","new_str":"black coffee"}`,
	`{"command":"str_replace","path":"/memories/user.md","old_str":"absent","new_str":"x"}`,
	`{"command":"insert","path":"/memories/projects/app/notes.md","insert_line":0,"insert_text":"# Notes"}`,
	`{"command":"view","path":"/memories/projects/app/notes.md"}`,
	`{"command":"rename","old_path":"/memories/projects/app/windows.txt","new_path":"/memories/projects/windows.txt"}`,
	`{"command":"delete","path":"/memories/archive"}`,
	`{"command":"create","path":"/memories/new/today.md","file_text":"written after the import\n"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/../etc/passwd"}`,
}

// TestSDKFolderRoundTrip takes memory an agent kept with the TypeScript SDK's
// local-filesystem memory tool (@anthropic-ai/sdk/tools/memory/node, driven by
// testdata/sdkserve.js) into memvault with `memvault import`, then runs the
// rest of the session through `memvault serve` and through the SDK on its own
// folder: every answer must be the same. At the end `memvault export` gives
// back the SDK's folder, byte for byte.
func TestSDKFolderRoundTrip(t *testing.T) {
	dir := installTypeScript(t)
	harness, err := os.ReadFile(filepath.Join("testdata", "sdkserve.js"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sdkserve.js"), harness, 0o644); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	sdkBase := filepath.Join(work, "memory") // the SDK's base: files live in memory/memories
	env := append(os.Environ(),
		"MEMVAULT_DIR="+filepath.Join(work, "vault.git"), "MEMVAULT_IDENTITY="+filepath.Join(work, "identity"))
	memvault := filepath.Join(memvaultDir, "memvault")

	sdk := startLines(t, "sdk", os.Environ(), "node", filepath.Join(dir, "sdkserve.js"), sdkBase)
	for _, in := range sdkWrites {
		if ans, isErr := sdk.call(t, in); isErr {
			t.Fatalf("SDK %s = %q, an error", in, ans)
		}
	}

	imp := exec.Command(memvault, "import", sdkBase)
	imp.Env = env
	out := run(t, imp)
	if !strings.Contains(out, "7 files added, 0 replaced, 0 deleted, 0 already there") {
		t.Fatalf("memvault import %s said:\n%s", sdkBase, out)
	}
	again := exec.Command(memvault, "import", sdkBase)
	again.Env = env
	if out := run(t, again); !strings.Contains(out, "nothing to import: the vault is unchanged") {
		t.Errorf("a second import said:\n%s", out)
	}

	mv := startLines(t, "memvault serve", env, memvault, "serve")
	for _, in := range sdkReplay {
		want, wantErr := sdk.call(t, in)
		got, gotErr := mv.call(t, in)
		if got != want || gotErr != wantErr {
			t.Errorf("%s\nmemvault serve: %q (is_error %v)\nSDK folder:     %q (is_error %v)", in, got, gotErr, want, wantErr)
		}
	}

	exportDir := filepath.Join(work, "export")
	exp := exec.Command(memvault, "export", exportDir)
	exp.Env = env
	run(t, exp)
	if diff, err := exec.Command("diff", "-r", sdkBase, exportDir).CombinedOutput(); err != nil {
		t.Errorf("diff -r of the SDK's folder and memvault's export: %v\n%s", err, diff)
	}
}

// lines is a process answering JSON lines, as memvault serve does.
type lines struct {
	name string
	in   io.Writer
	out  *bufio.Reader
}

func startLines(t *testing.T, name string, env []string, prog string, args ...string) *lines {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, stderr.String())
		}
	})
	return &lines{name: name, in: in, out: bufio.NewReader(out)}
}

// call sends one tool input and returns the answer's content and is_error.
func (l *lines) call(t *testing.T, input string) (string, bool) {
	t.Helper()
	if _, err := io.WriteString(l.in, `{"id":1,"input":`+input+"}\n"); err != nil {
		t.Fatalf("%s: write: %v", l.name, err)
	}
	ans, err := l.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("%s: read the answer to %s: %v", l.name, input, err)
	}
	var a struct {
		Content string `json:"content"`
		IsError bool   `json:"is_error"`
	}
	if err := json.Unmarshal(ans, &a); err != nil {
		t.Fatalf("%s: answer %s: %v", l.name, ans, err)
	}
	return a.Content, a.IsError
}
