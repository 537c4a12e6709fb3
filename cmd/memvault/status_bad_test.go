package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestStatusWithABadEntry: one entry put into the vault's tree by hand with
// git (in a sealed vault, a name stored in the clear, which does not open
// under the vault's key) once made `status` of a sealed vault fail whole, so
// the user could not see the state of the vault at all. Status, in either
// format, reports the vault as usual, still finds the conflict in the files
// that read, and names the bad entry; a listing shows the rest, and a view of
// the bad entry says what is wrong with it.
func TestStatusWithABadEntry(t *testing.T) {
	for _, c := range badEntryFormats {
		t.Run(c.format, func(t *testing.T) {
			cli := badEntryVault(t, c.init, "evil.md",
				`{"command":"create","path":"/memories/keep.md","file_text":"kept\n"}`,
				`{"command":"create","path":"/memories/notes/clash.md","file_text":"<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n"}`)

			out, code, stderr := cli("", "status")
			if code != exitOK {
				t.Fatalf("status = status %d\n%s%s\nwant the vault's status", code, out, stderr)
			}
			for _, want := range []string{
				"\nbad entry  /memories/evil.md  " + c.reason + "\n",
				"\nconflict   /memories/notes/clash.md  holds conflict markers\n",
				"\nreads      everything",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("status =\n%s\nwant it to hold %q", out, want)
				}
			}
			if strings.Contains(out, "conflicts  unknown") {
				t.Errorf("status =\n%s\nwant the conflicts found in the files that read", out)
			}
			out, _, _ = cli("", "status", "--json")
			if want := `"bad_entries":[{"path":"/memories/evil.md","reason":"` + c.reason + `"}]`; !strings.Contains(out, want) {
				t.Errorf("status --json = %s\nwant %s", out, want)
			}

			out, code, _ = cli(`{"command":"view","path":"/memories"}`, "tool")
			for _, want := range []string{"\n5B\t/memories/keep.md", "\n4K\t/memories/notes/\n", "\n0B\t/memories/evil.md"} {
				if code != exitOK || !strings.Contains(out, want) {
					t.Errorf("view /memories = %q (status %d), want it to hold %q", out, code, want)
				}
			}
			out, code, _ = cli(`{"command":"view","path":"/memories/evil.md"}`, "tool")
			if want := "Error: /memories/evil.md is not a memory file memvault can read: " + c.reason; code != exitAnswer || out != want {
				t.Errorf("view /memories/evil.md = %q (status %d), want %q", out, code, want)
			}
		})
	}
}

// badEntryFormats are the two formats, each with what a read says of the entry
// badEntryVault puts in.
var badEntryFormats = []struct {
	format string
	init   []string // memvault init's flags
	reason string
}{
	{"sealed", nil, "a name not sealed under this vault's key"},
	{"plain", []string{"--plain"}, "a damaged age file (no complete header)"},
}

// badEntryVault makes a vault with init's flags and the memory commands ins,
// then puts in by hand, with git, the entry memories/name: a damaged age
// file, and in a sealed vault a name stored in the clear, which does not open
// under the vault's key. It returns the command line on that vault.
func badEntryVault(t *testing.T, init []string, name string, ins ...string) func(stdin string, args ...string) (string, int, string) {
	t.Helper()
	dir := t.TempDir()
	git := dir + "/vault.git"
	cli := cliFor("--vault", git, "--identity", dir+"/identity")
	if _, code, stderr := cli("", append([]string{"init"}, init...)...); code != exitOK {
		t.Fatalf("memvault init: %s", stderr)
	}
	for _, in := range ins {
		if out, code, stderr := cli(in, "tool"); code != exitOK {
			t.Fatalf("tool %s: %s%s", in, out, stderr)
		}
	}
	h := gittest.Damage(t, git)
	blob := h.Blob([]byte("age-encryption.org/v1\n-> X25519 x\nbody\n"))
	h.Change("memories/"+name, gittest.TreeEntry{Mode: "100644", Hash: blob}, "by hand\n")
	return cli
}

// TestBadEntryNameQuotedOnce: a name in the tree that is no memory path (put
// in by hand with git, holding an ESC, a newline and a byte that is not
// UTF-8) was quoted by the vault and quoted again by the CLI, so status and
// grep printed "/memories/\"a\\x1bb\\n\\xff.md\"". Each shows it quoted once,
// every unsafe byte still escaped, and --json carries the name as stored.
func TestBadEntryNameQuotedOnce(t *testing.T) {
	const name = "a\x1bb\n\xff.md"
	const shown = `"/memories/a\x1bb\n\xff.md"`
	for _, c := range badEntryFormats {
		t.Run(c.format, func(t *testing.T) {
			cli := badEntryVault(t, c.init, name,
				`{"command":"create","path":"/memories/keep.md","file_text":"kept\n"}`)
			out, code, stderr := cli("", "status")
			if code != exitOK || !strings.Contains(out, "\nbad entry  "+shown+"  ") {
				t.Errorf("status = %q (status %d) %s\nwant a line bad entry  %s", out, code, stderr, shown)
			}
			_, _, stderr = cli("", "grep", "kept")
			if !strings.Contains(stderr, "\nmemvault:   "+shown+"  ") {
				t.Errorf("grep kept: stderr = %q\nwant a line naming %s", stderr, shown)
			}
			for _, s := range []string{out, stderr} {
				if strings.Contains(s, "\x1b") || !utf8.ValidString(s) {
					t.Errorf("output %q holds an unsafe byte", s)
				}
			}
			out, _, _ = cli("", "status", "--json")
			if want := `"path":"/memories/a\u001bb\n`; !strings.Contains(out, want) || strings.Contains(out, "\x1b") {
				t.Errorf("status --json = %s\nwant the name as stored, JSON-escaped: %s", out, want)
			}
		})
	}
}
