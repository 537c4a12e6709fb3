package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
)

// The membership matrix: every change of who reads and who writes, in both
// formats, reaching a member through every door, and then who can read and
// who can write, checked through the CLI on real vaults (docs/membership.md).
//
// Members: alice made the vault and writes it; bob joined before the change
// (a reader and a writer); carol joined too (removed in "two clones rotate");
// dave joins with the change ("add reader", "add writer") or is removed with
// it. After the change and the door, alice writes once more, and each member
// then tries to read that write and to write a file alice must take.

// person is one member's vault and identity, driven through the CLI.
type person struct {
	name, dir, id string
	cli           func(stdin string, args ...string) (string, int, string)
}

func newPerson(root, name string) *person {
	p := &person{name: name, dir: filepath.Join(root, name, "vault.git"), id: filepath.Join(root, name, "identity")}
	p.cli = cliFor("--vault", p.dir, "--identity", p.id)
	return p
}

func (p *person) run(t *testing.T, stdin string, args ...string) (string, int, string) {
	t.Helper()
	return p.cli(stdin, args...)
}

func (p *person) must(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, code, stderr := p.cli(stdin, args...)
	if code != exitOK {
		t.Fatalf("%s: memvault %s: status %d\nstdout: %s\nstderr: %s", p.name, strings.Join(args, " "), code, out, stderr)
	}
	return out
}

func (p *person) write(t *testing.T, path, text string) {
	t.Helper()
	p.must(t, fmt.Sprintf(`{"command":"create","path":%q,"file_text":%q}`, path, text), "tool")
}

// reads tells whether p, after a sync, reads path as text.
func (p *person) reads(t *testing.T, path, text string) bool {
	t.Helper()
	p.run(t, "", "sync")
	out, code, _ := p.run(t, "", "cat", path)
	return code == exitOK && out == text
}

var fingerprintRE = regexp.MustCompile(`--expect-writer (SHA256:\S+)`)

// join makes p a member of alice's vault at url, the way the README shows:
// p's member line, alice's members add (readOnly: --read-only), p's join.
// It returns alice's signing fingerprint.
func join(t *testing.T, alice, p *person, url string, readOnly bool) string {
	t.Helper()
	out := p.must(t, "", "join", url, "--name", p.name)
	line := regexp.MustCompile(`memvault-member/v1 \S+ \S+ \S+`).FindString(out)
	if line == "" {
		t.Fatalf("%s's join printed no member line:\n%s", p.name, out)
	}
	args := []string{"members", "add", line}
	if readOnly {
		args = append(args, "--read-only")
	}
	m := fingerprintRE.FindStringSubmatch(alice.must(t, "", args...))
	if m == nil {
		t.Fatalf("alice's members add printed no join command")
	}
	p.must(t, "", "join", url, "--expect-writer", m[1])
	return m[1]
}

type matrixCell struct {
	plain        bool
	change, door string
}

var (
	matrixChanges = []string{"add reader", "add writer", "remove reader", "remove writer", "rotate", "two clones rotate", "writer removed while offline"}
	matrixDoors   = []string{"clone", "join", "sync fast-forward", "sync merge", "push into a local path"}
)

// matrixSample is the part of the matrix the short tests run: each change
// and each door at least once, in both formats.
func matrixSample(c matrixCell) bool {
	ci, di := slices.Index(matrixChanges, c.change), slices.Index(matrixDoors, c.door)
	f := 0
	if c.plain {
		f = 1
	}
	return (ci+di+f)%4 == 0 || c.door == "join" && c.change == "add writer"
}

func TestMembershipMatrix(t *testing.T) {
	ran := 0
	for _, plain := range []bool{false, true} {
		for _, change := range matrixChanges {
			for _, door := range matrixDoors {
				c := matrixCell{plain, change, door}
				if door == "join" && !strings.HasPrefix(change, "add") {
					continue // join is a newcomer's door
				}
				format := map[bool]string{true: "plain", false: "sealed"}[plain]
				t.Run(format+"/"+change+"/"+door, func(t *testing.T) {
					if testing.Short() && !matrixSample(c) {
						t.Skip("a sample of the matrix runs with -short; all of it without")
					}
					runMatrixCell(t, c)
				})
				ran++
			}
		}
	}
	if ran != 2*(len(matrixChanges)*len(matrixDoors)-(len(matrixChanges)-2)) {
		t.Errorf("the matrix has %d cells", ran)
	}
}

func runMatrixCell(t *testing.T, c matrixCell) {
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config")) // failed clones are noted there
	url := gittest.Bare(t, root, "remote")
	alice, bob, carol, dave := newPerson(root, "alice"), newPerson(root, "bob"), newPerson(root, "carol"), newPerson(root, "dave")
	initArgs := []string{"init", "--name", "alice"}
	if c.plain {
		initArgs = append(initArgs, "--plain")
	}
	alice.must(t, "", initArgs...)
	alice.must(t, "", "remote", "add", "origin", url)
	alice.write(t, "/memories/before.md", "written before the change\n")
	alice.must(t, "", "sync")
	fp := join(t, alice, bob, url, false)
	switch c.change {
	case "remove reader", "remove writer", "writer removed while offline":
	case "two clones rotate":
		join(t, alice, carol, url, false)
		join(t, alice, dave, url, false)
		bob.must(t, "", "sync", "--accept-recipients", "--accept-writers")
	}

	// The change.
	readers, writers := []*person{alice, bob}, []*person{alice, bob}
	switch c.change {
	case "add reader", "add writer":
		// dave joins below, through the door when it is join or clone.
	case "remove reader":
		bobKey := strings.TrimSpace(bob.must(t, "", "identity", "show"))
		alice.must(t, "", "recipients", "remove", bobKey)
		alice.must(t, "", "sync")
		readers = []*person{alice}
		if !c.plain {
			writers = []*person{alice} // bob no longer opens the vault key
		}
	case "remove writer":
		alice.must(t, "", "writers", "remove", writerFingerprint(t, bob))
		alice.must(t, "", "sync")
		writers = []*person{alice}
	case "rotate":
		alice.must(t, "", "rekey")
		alice.must(t, "", "sync")
	case "two clones rotate":
		// Each removes another member while the other does not know: the
		// lower-level commands, which do not push.
		alice.must(t, "", "recipients", "remove", strings.TrimSpace(carol.must(t, "", "identity", "show")))
		alice.must(t, "", "writers", "remove", writerFingerprint(t, carol))
		bob.must(t, "", "recipients", "remove", strings.TrimSpace(dave.must(t, "", "identity", "show")))
		bob.must(t, "", "writers", "remove", writerFingerprint(t, dave))
		alice.must(t, "", "sync")
		bob.must(t, "", "sync", "--accept-recipients", "--accept-writers")
		alice.must(t, "", "sync", "--accept-recipients", "--accept-writers")
	case "writer removed while offline":
		bob.write(t, "/memories/offline.md", "bob wrote this offline\n")
		alice.must(t, "", "members", "remove", "bob")
		readers, writers = []*person{alice}, []*person{alice}
	}

	// The door: how the members get the changed vault.
	var newcomer *person
	if strings.HasPrefix(c.change, "add") {
		readOnly := c.change == "add reader"
		if c.door == "join" || c.door == "clone" {
			newcomer = dave
			out := dave.must(t, "", "join", url, "--name", "dave")
			line := regexp.MustCompile(`memvault-member/v1 \S+ \S+ \S+`).FindString(out)
			args := []string{"members", "add", line}
			if readOnly {
				args = append(args, "--read-only")
			}
			alice.must(t, "", args...)
			if c.door == "join" {
				dave.must(t, "", "join", url, "--expect-writer", fp)
			} else {
				// clone names every writer, as a careful person does after
				// comparing the fingerprints.
				dave.must(t, "", append([]string{"clone", url, dave.dir, "--accept-recipients"}, expectAll(t, alice)...)...)
			}
		} else {
			newcomer = dave
			join(t, alice, dave, url, readOnly)
		}
		readers = append(readers, dave)
		if !readOnly {
			writers = append(writers, dave)
		}
	}
	switch c.door {
	case "clone":
		// bob clones afresh, pinned to alice.
		fresh := newPerson(root, "bob-again")
		fresh.id = bob.id
		fresh.cli = cliFor("--vault", fresh.dir, "--identity", bob.id)
		_, code, _ := fresh.run(t, "", append([]string{"clone", url, fresh.dir, "--accept-recipients"}, expectAll(t, alice)...)...)
		if code == exitOK {
			fresh.name = "bob"
			*bob = *fresh
		}
	case "sync merge":
		if slices.Contains(writers, bob) {
			bob.write(t, "/memories/bob-local.md", "bob's own, before he syncs\n")
		}
		bob.run(t, "", "sync", "--accept-recipients", "--accept-writers")
	case "sync fast-forward":
		bob.run(t, "", "sync", "--accept-recipients", "--accept-writers")
	case "push into a local path":
		// The vaults meet through a folder on this machine: alice pushes
		// into it, bob syncs from it.
		shared := filepath.Join(root, "shared.git")
		if out, err := exec.Command("git", "clone", "-q", "--bare", url, shared).CombinedOutput(); err != nil {
			t.Fatalf("git clone --bare: %v\n%s", err, out)
		}
		alice.must(t, "", "remote", "add", "local", shared)
		alice.run(t, "", "sync", "local")
		bob.run(t, "", "remote", "add", "local", shared)
		bob.run(t, "", "sync", "local", "--accept-recipients", "--accept-writers")
	}
	// Alice writes after everything; who reads it, and whose write does
	// alice take?
	alice.write(t, "/memories/after.md", "written after the change\n")
	alice.must(t, "", "sync")
	everyone := []*person{bob, carol, dave}
	for _, p := range everyone {
		if _, err := exec.Command("test", "-d", p.dir).Output(); err != nil {
			if slices.Contains(readers, p) {
				t.Errorf("%s should read, and has no vault", p.name)
			}
			continue
		}
		p.run(t, "", "sync", "--accept-recipients", "--accept-writers")
		if got, want := p.reads(t, "/memories/after.md", "written after the change\n"), slices.Contains(readers, p); got != want {
			t.Errorf("%s reads what alice wrote after the change: %v, want %v", p.name, got, want)
		}
		if p != bob && newcomer != p && c.change != "two clones rotate" {
			continue // not part of the cell
		}
		file := "/memories/from-" + p.name + ".md"
		p.run(t, fmt.Sprintf(`{"command":"create","path":%q,"file_text":"from %s\n"}`, file, p.name), "tool")
		p.run(t, "", "sync", "--accept-recipients", "--accept-writers")
		alice.run(t, "", "sync", "--accept-recipients", "--accept-writers")
		out, code, _ := alice.run(t, "", "cat", file)
		if got, want := code == exitOK && out == "from "+p.name+"\n", slices.Contains(writers, p); got != want {
			t.Errorf("alice takes %s's write: %v, want %v", p.name, got, want)
		}
	}
	if c.change == "writer removed while offline" {
		if _, code, _ := alice.run(t, "", "cat", "/memories/offline.md"); code == exitOK {
			t.Error("alice took what bob wrote offline and signed after his removal reached her")
		}
	}
	if out, code, stderr := alice.run(t, "", "fsck"); code != exitOK {
		t.Errorf("alice's fsck: %s %s", out, stderr)
	}
}

// writerFingerprint is p's signing key's fingerprint, as memvault members
// lists it.
func writerFingerprint(t *testing.T, p *person) string {
	t.Helper()
	out := p.must(t, "", "members")
	m := regexp.MustCompile(`(SHA256:\S+)\s+\(you\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("%s's members lists no key of theirs:\n%s", p.name, out)
	}
	return strings.TrimSuffix(m[1], ",")
}

// expectAll is --expect-writer for each writer alice's vault lists.
func expectAll(t *testing.T, alice *person) []string {
	t.Helper()
	alice.must(t, "", "sync")
	var args []string
	for _, f := range regexp.MustCompile(`(?m)^(SHA256:\S+)`).FindAllString(alice.must(t, "", "writers"), -1) {
		args = append(args, "--expect-writer", f)
	}
	return args
}
