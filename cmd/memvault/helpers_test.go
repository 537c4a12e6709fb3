package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		err        error
		want       int
		wantStderr string // a substring; "" means stderr stays empty
	}{
		{nil, exitOK, ""},
		{errErrorAnswer, exitAnswer, ""},
		{fmt.Errorf("cat /memories/x: %w", errNoMemory), exitAnswer, "no such memory file"},
		{fmt.Errorf("cat /memories/d: %w", errMemoryDir), exitAnswer, "a directory"},
		{&usageError{cmd: "memvault cat", err: errors.New("accepts 1 arg(s)")}, exitSetup, "'memvault cat --help'"},
		{fmt.Errorf("vault: open /x: %w", vault.ErrNotVault), exitSetup, "memvault init"},
		{fmt.Errorf("vault: identity: %w", vault.ErrNoIdentity), exitSetup, "--identity"},
		{fmt.Errorf("vault: read: %w", vault.ErrDecrypt), exitSetup, "--identity"},
		{fmt.Errorf("agent: %w", context.Canceled), exitInterrupt, "interrupted"},
		{fmt.Errorf("vault: sync: %w", vault.ErrTimeout), exitSetup, "--timeout"},
		{fmt.Errorf("vault: sync: %w", vault.ErrAuth), exitSetup, "credential helper"},
		{fmt.Errorf("vault: sync: %w", vault.ErrAuth), exitSetup, "~/.ssh/id_rsa, id_ecdsa and id_ed25519"},
		{fmt.Errorf("vault: sync: %w", vault.ErrUnknownHost), exitSetup, "ssh-keyscan HOST >> ~/.ssh/known_hosts"},
		{fmt.Errorf("vault: sync: %w", vault.ErrHostKeyChanged), exitSetup, "ssh-keygen -R HOST"},
		{conflictsLeftError(2), exitAnswer, "memvault: sync: 2 files hold both sides of a conflict (listed above)\nSettle each with 'memvault edit PATH'"},
		{fmt.Errorf("vault: sync: %w", vault.ErrUnreachable), exitSetup, "memvault remote list"},
		{fmt.Errorf("vault: sync: %w: %w", vault.ErrUnreachable, vault.ErrTimeout), exitSetup, "--timeout"},
		{fmt.Errorf("vault: push to origin: %w", vault.ErrBehind), exitSetup, "Run 'memvault sync'"},
		{fmt.Errorf("vault: sync: %w", vault.ErrRecipientsChanged), exitSetup, "--accept-recipients"},
		{fmt.Errorf("vault: clone: %w", vault.ErrNotRecipient), exitSetup, "'memvault recipients add'"},
		{fmt.Errorf("vault: open: %w", vault.ErrDamaged), exitSetup, "'memvault fsck --repair'"},
		{fmt.Errorf("vault: recipients: %w", vault.ErrMixedRecipients), exitSetup, "'memvault identity new --pq'"},
		{fmt.Errorf("vault: sync: %w after 3 rounds: %w", vault.ErrTimeout, vault.ErrRejected), exitSetup, "Another clone kept pushing first"},
		{fmt.Errorf("revert: %w", vault.ErrConflict), exitAnswer, "memvault restore PATH"},
		{errors.New("disk on fire"), exitSetup, "memvault: disk on fire"},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		if got := exitCode(tt.err, &stderr, false); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
		switch {
		case tt.wantStderr == "" && stderr.Len() > 0:
			t.Errorf("exitCode(%v) printed %q, want nothing", tt.err, stderr.String())
		case !strings.Contains(stderr.String(), tt.wantStderr):
			t.Errorf("exitCode(%v) printed %q, want it to hold %q", tt.err, stderr.String(), tt.wantStderr)
		}
	}
}

func TestStylesFor(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st := stylesFor(f); st.on {
		t.Errorf("stylesFor(regular file) colours, want plain")
	}
	if st := stylesFor(&bytes.Buffer{}); st.on {
		t.Errorf("stylesFor(buffer) colours, want plain")
	}
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		if isTerminal(null) {
			t.Errorf("isTerminal(%s) = true: a character device, but no terminal", os.DevNull)
		}
		null.Close()
	}
	if got := (styles{}).red("x"); got != "x" {
		t.Errorf("plain red(%q) = %q, want %q", "x", got, "x")
	}
	if got, want := (styles{on: true}).red("x"), "\x1b[31mx\x1b[0m"; got != want {
		t.Errorf("coloured red(%q) = %q, want %q", "x", got, want)
	}
	t.Setenv("NO_COLOR", "1")
	if st := stylesFor(os.Stdout); st.on {
		t.Errorf("stylesFor(stdout) with NO_COLOR colours, want plain")
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		text   string
		width  int
		indent string
		want   string
	}{
		{"", 10, "", ""},
		{"one two three", 20, "", "one two three"},
		{"one two three", 7, "  ", "one two\n  three"},
		{"  spaces   collapse ", 40, "", "spaces collapse"},
		{"averyveryverylongword x", 5, "", "averyveryverylongword\nx"},
	}
	for _, tt := range tests {
		if got := wrap(tt.text, tt.width, tt.indent); got != tt.want {
			t.Errorf("wrap(%q, %d, %q) = %q, want %q", tt.text, tt.width, tt.indent, got, tt.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/tmp/memvault-demo-1/vault.git", "/tmp/memvault-demo-1/vault.git"},
		{"/home/a b/v.git", "'/home/a b/v.git'"},
		{"it's", `'it'\''s'`},
		{"", "''"},
	}
	for _, tt := range tests {
		if got := shellQuote(tt.in); got != tt.want {
			t.Errorf("shellQuote(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDemoPlaces(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir, identity, temp, err := demoPlaces("")
	if err != nil || !temp || filepath.Dir(dir) != filepath.Dir(identity) {
		t.Errorf(`demoPlaces("") = %q, %q, %t, %v; want both in one new temporary directory`, dir, identity, temp, err)
	}
	fresh := filepath.Join(t.TempDir(), "demo.git")
	dir, identity, temp, err = demoPlaces(fresh + "/")
	if dir != fresh || identity != fresh+".identity" || temp || err != nil {
		t.Errorf("demoPlaces(%q) = %q, %q, %t, %v; want %q, %q, false, nil",
			fresh+"/", dir, identity, temp, err, fresh, fresh+".identity")
	}
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "HEAD"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := demoPlaces(full); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("demoPlaces(non-empty dir) error = %v, want one saying it is not empty", err)
	}
}

// TestDemoScript checks the demo's script itself: every input is a JSON object, and
// each conversation has the 15 to 30 calls the demo promises.
func TestDemoScript(t *testing.T) {
	for i, conv := range demoScript {
		if n := len(conv.steps); n < 15 || n > 30 {
			t.Errorf("conversation %d has %d calls, want 15 to 30", i+1, n)
		}
		for j, s := range conv.steps {
			if !json.Valid(s.input) || s.input[0] != '{' {
				t.Errorf("call %d.%02d input %s is not a JSON object", i+1, j+1, s.input)
			}
		}
	}
}

// TestGCSummary: gc says in one line what it did. It once printed "nothing to
// pack: every object is in a pack" and then "1.3 KiB saved" from the merge of
// packs that followed.
func TestGCSummary(t *testing.T) {
	for _, tt := range []struct {
		loose         int
		before, after int64
		want          string
	}{
		{0, 3000, 1700, "merged the packs into one: the objects take 1.7 KiB, from 2.9 KiB (1.3 KiB saved)"},
		{0, 1700, 1700, "nothing to do: the objects are in one pack already (1.7 KiB)"},
		{1, 1800, 1700, "packed 1 loose object and merged the packs into one: the objects take 1.7 KiB, from 1.8 KiB (100 bytes saved)"},
		{3, 1700, 1800, "packed 3 loose objects and merged the packs into one: the objects take 1.8 KiB, from 1.7 KiB (100 bytes more)"},
		{2, 1700, 1700, "packed 2 loose objects and merged the packs into one: the objects take 1.7 KiB, as before"},
	} {
		if got := gcSummary(tt.loose, tt.before, tt.after); got != tt.want {
			t.Errorf("gcSummary(%d, %d, %d) = %q, want %q", tt.loose, tt.before, tt.after, got, tt.want)
		}
	}
}

// TestSelfCommand: the demo's last lines name a command that runs. They once
// said "Run 'memvault demo --keep'" to someone who had run the demo with go
// run and had no memvault installed.
func TestSelfCommand(t *testing.T) {
	dir := t.TempDir()
	installed := filepath.Join(dir, "bin", "memvault")
	built := filepath.Join(dir, "src", "memvault")
	goRun := filepath.Join(dir, "go-build1234", "b001", "exe", "memvault")
	for _, f := range []string{installed, built, goRun} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	onPath := func(p string) func(string) (string, error) {
		return func(string) (string, error) {
			if p == "" {
				return "", exec.ErrNotFound
			}
			return p, nil
		}
	}
	for _, tt := range []struct {
		exe, path, want string
	}{
		{installed, installed, "memvault"},
		{goRun, "", "go run ./cmd/memvault"},
		{goRun, installed, "go run ./cmd/memvault"},
		{built, "", built},
		{built, installed, "memvault"},
	} {
		if got := selfCommandOf(tt.exe, onPath(tt.path)); got != tt.want {
			t.Errorf("selfCommandOf(%s) with %q on PATH = %q, want %q", tt.exe, tt.path, got, tt.want)
		}
	}
}
