package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/memvault/memvault/vault"
)

// Without colour a long added or removed line, wrapped, once went on without
// its sign, so its second row read as unchanged text. Each row keeps it.
func TestWrappedDiffLineKeepsItsSign(t *testing.T) {
	v, _ := newVault(t)
	long := strings.Repeat("a long line the agent wrote ", 6)
	write(t, v, vault.Meta{Command: "create"}, "/memories/long.md", "short\n")
	write(t, v, vault.Meta{Command: "str_replace"}, "/memories/long.md", long+"\n")
	d := newDriver(t, v, 80, 24)
	d.keys("tab")
	d.golden("diff_wrapped_signs")
	var plus, minus, bare int
	for _, r := range d.m.content.rows {
		switch {
		case strings.HasPrefix(r.text, "+") && !strings.HasPrefix(r.text, "+++"):
			plus++
		case strings.HasPrefix(r.text, "-") && !strings.HasPrefix(r.text, "---"):
			minus++
		case strings.Contains(r.text, "agent wrote"):
			bare++
		}
	}
	if plus < 3 || minus != 1 || bare != 0 {
		t.Errorf("the added line's rows: %d with +, %d without; the removed %d", plus, bare, minus)
	}
}

// A name of joined emoji (a family: man, ZWJ, woman, ZWJ, girl) is one glyph
// two cells wide to some terminals and three glyphs six cells wide to others,
// tmux among them: its row pushed the tree's border off the screen. Every
// line of the frame is as wide as the screen by either count.
func TestJoinedEmojiKeepsTheBorder(t *testing.T) {
	v, _ := newVault(t)
	write(t, v, vault.Meta{Command: "create"}, "/memories/👨\u200d👩\u200d👧 family.md", "kids\n")
	d := newDriver(t, v, 80, 24)
	d.keys("j", "tab")
	for i, l := range strings.Split(ansi.Strip(d.m.View().Content), "\n") {
		if g, w := ansi.StringWidth(l), ansi.StringWidthWc(l); g != 80 || w != 80 {
			t.Errorf("line %d is %d cells wide as graphemes, %d as code points, want 80: %q", i, g, w, l)
		}
	}
}

// A sealed vault opened with an identity that is not among its recipients
// once showed an empty screen, the reason cut off in the status bar. The
// reason takes the screen, whole: which identity was tried, to which keys
// the vault is encrypted, and how to name another.
func TestWrongIdentitySaysWhy(t *testing.T) {
	v, opts := newVault(t)
	seed(t, v)
	_, other := newVault(t) // another identity
	dir := v.Dir()
	v.Close()
	opts.IdentityFile = other.IdentityFile
	w, err := vault.Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	d := newDriverFor(t, w, w, 80, 24)
	screen := ansi.Strip(d.m.View().Content)
	flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ", "╭", " ", "╮", " ", "╰", " ", "╯", " ", "─", " ").Replace(screen)), " ")
	for _, want := range []string{"Cannot open the vault: no usable identity", "is not one of its recipients", "the vault is encrypted to x25519 age1", "--identity FILE or MEMVAULT_IDENTITY"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the screen does not say %q:\n%s", want, screen)
		}
	}
}

// A mistyped MEMVAULT_DIR makes a new, empty vault; the interface said only
// "No memories yet", and the word that a vault was made came after it was
// left. The empty vault names its directory, and one made a moment ago says
// so and how to name another.
func TestNewVaultSaysWhereItIs(t *testing.T) {
	v, _ := newVault(t)
	recs := history(t, v)
	d := newDriverOpts(t, fixedDir{v}, v, 100, 30, Options{})
	d.m.opts.Now = func() time.Time { return recs[0].Time.Add(10 * time.Second) }
	d.run(d.m.readHead(false))
	d.m.snap = nil // read the head afresh, as at the start
	d.run(d.m.readHead(false))
	d.golden("empty_just_made")
	if f := d.frame(); !strings.Contains(f, "default.git") || !strings.Contains(f, "made just now") {
		t.Errorf("the empty vault does not say where it is or that it was just made:\n%s", f)
	}
}
