package vault_test

// The provenance answers are checked against git itself: beside each
// randomized vault history the test builds a plain git repository with the same
// sequence of plaintext states (one git commit per vault commit, so commits map
// by order), then compares memvault blame with git blame --porcelain, memvault
// log -S/-G with git log -S/-G, and memvault grep with grep -rn over the
// plaintext. The mirror's plaintext is test data written by the test; the vault
// writes none.

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// mirror is a plain git repository that follows a vault's plaintext.
type mirror struct {
	t   *testing.T
	dir string
}

func newMirror(t *testing.T) *mirror {
	m := &mirror{t: t, dir: t.TempDir()}
	m.git("init", "-q", "-b", "main")
	m.git("commit", "-q", "--allow-empty", "-m", "init")
	return m
}

func (m *mirror) git(args ...string) string {
	m.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = m.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			m.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		m.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// commit makes the mirror's files exactly files (memory path -> plaintext) and
// commits them, even when nothing changed.
func (m *mirror) commit(files map[string]string, msg string) {
	m.t.Helper()
	root := filepath.Join(m.dir, "memories")
	if err := os.RemoveAll(root); err != nil {
		m.t.Fatal(err)
	}
	for p, text := range files {
		fp := filepath.Join(m.dir, filepath.FromSlash(strings.TrimPrefix(p, "/")))
		if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
			m.t.Fatal(err)
		}
		if err := os.WriteFile(fp, []byte(text), 0o644); err != nil {
			m.t.Fatal(err)
		}
	}
	m.git("add", "-A")
	m.git("commit", "-q", "--allow-empty", "-m", msg)
}

// order maps each commit to its place in the history, oldest 0.
func (m *mirror) order() map[string]int {
	out := map[string]int{}
	for i, h := range strings.Fields(m.git("rev-list", "--reverse", "--first-parent", "HEAD")) {
		out[h] = i
	}
	return out
}

// blame returns git blame's commit for each line of the file at p.
func (m *mirror) blame(p, rev string) []string {
	out := m.git("blame", "--porcelain", rev, "--", strings.TrimPrefix(p, "/"))
	var commits []string
	var cur string
	sc := bufio.NewScanner(strings.NewReader(out))
	header := regexp.MustCompile(`^([0-9a-f]{40}) \d+ \d+`)
	for sc.Scan() {
		l := sc.Text()
		if mm := header.FindStringSubmatch(l); mm != nil {
			cur = mm[1]
		} else if strings.HasPrefix(l, "\t") {
			commits = append(commits, cur)
		}
	}
	return commits
}

// state reads every file of the vault's current state.
func state(t *testing.T, v *vault.Vault) map[string]string {
	t.Helper()
	snap, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	files, err := snap.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range files {
		b, err := snap.ReadFile(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(b)
	}
	return out
}

var oracleWords = []string{"alpha", "beta", "gamma", "delta", "eps"}

// randomHistory drives v through steps random memory commands and undos, and
// m through the same plaintext states.
type randomHistory struct {
	t     *testing.T
	v     *vault.Vault
	m     *mirror
	rng   *rand.Rand
	fresh int
	revs  []string // vault commits, oldest first (without init)
}

func (h *randomHistory) line() string {
	h.fresh++
	w := oracleWords[h.rng.IntN(len(oracleWords))]
	return fmt.Sprintf("l%d %s %s\n", h.fresh, w, strings.Repeat("x", h.rng.IntN(4)))
}

var oracleNames = []string{"/memories/a.md", "/memories/notes/b.md", "/memories/notes/c.md", "/memories/d/e.md", "/memories/f.md"}

func (h *randomHistory) step() {
	t := h.t
	cur := state(t, h.v)
	var have []string
	for p := range cur {
		have = append(have, p)
	}
	sort.Strings(have)
	before := vaulttest.Log(t, h.v, vault.LogOptions{Limit: 1})[0].Commit
	meta := vault.Meta{Command: "str_replace", ToolUseID: fmt.Sprintf("toolu_%d", len(h.revs))}
	r := h.rng.IntN(100)
	var err error
	switch {
	case len(have) == 0 || r < 12:
		p := oracleNames[h.rng.IntN(len(oracleNames))]
		if _, ok := cur[p]; ok {
			return
		}
		var b strings.Builder
		for range 1 + h.rng.IntN(6) {
			b.WriteString(h.line())
		}
		meta.Command = "create"
		err = h.v.Update(ctx, meta, func(tx *vault.Tx) error { return tx.WriteFile(ctx, p, []byte(b.String())) })
	case r < 65:
		p := have[h.rng.IntN(len(have))]
		lines := strings.SplitAfter(cur[p], "\n")
		lines = lines[:len(lines)-1]
		for range 1 + h.rng.IntN(3) {
			i := h.rng.IntN(len(lines) + 1)
			switch h.rng.IntN(5) {
			case 0, 1: // insert
				for range 1 + h.rng.IntN(3) {
					lines = slices.Insert(lines, i, h.line())
				}
			case 2: // delete
				if i < len(lines) && len(lines) > 1 {
					lines = slices.Delete(lines, i, i+1)
				}
			default: // replace
				if i < len(lines) {
					lines[i] = h.line()
				}
			}
		}
		err = h.v.Update(ctx, meta, func(tx *vault.Tx) error { return tx.WriteFile(ctx, p, []byte(strings.Join(lines, ""))) })
	case r < 71:
		p := have[h.rng.IntN(len(have))]
		meta.Command = "delete"
		err = h.v.Update(ctx, meta, func(tx *vault.Tx) error { return tx.Remove(p) })
	case r < 79:
		from := have[h.rng.IntN(len(have))]
		to := oracleNames[h.rng.IntN(len(oracleNames))]
		if h.rng.IntN(4) == 0 && strings.HasPrefix(from, "/memories/notes/") {
			from, to = "/memories/notes", "/memories/n"+fmt.Sprint(h.fresh)
		}
		meta.Command = "rename"
		err = h.v.Update(ctx, meta, func(tx *vault.Tx) error { return tx.Rename(from, to) })
	case r < 89 && len(h.revs) > 0:
		p := have[h.rng.IntN(len(have))]
		if h.rng.IntN(2) == 0 {
			p = oracleNames[h.rng.IntN(len(oracleNames))]
		}
		_, err = h.v.Restore(ctx, meta, p, h.revs[h.rng.IntN(len(h.revs))])
	case r < 97 && len(h.revs) > 0:
		_, err = h.v.Revert(ctx, meta, h.revs[h.rng.IntN(len(h.revs))])
	case len(h.revs) > 0:
		_, err = h.v.Rollback(ctx, meta, h.revs[h.rng.IntN(len(h.revs))])
	}
	if err != nil {
		return // a refused command (a conflict, nothing there) is part of a random history
	}
	after := vaulttest.Log(t, h.v, vault.LogOptions{Limit: 1})[0].Commit
	if after == before {
		return
	}
	h.revs = append(h.revs, after)
	h.m.commit(state(t, h.v), meta.Command)
}

func TestProvenanceAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary")
	}
	seeds, steps := 8, 120
	if testing.Short() {
		seeds, steps = 2, 40
	}
	defer vault.SetPickaxeBatchForTest(4)() // pages end inside batches, and batches overlap
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			h := &randomHistory{t: t, v: vaulttest.New(t), m: newMirror(t), rng: rand.New(rand.NewPCG(uint64(seed), 7))}
			for range steps {
				h.step()
			}
			// Vault commits, oldest first, map to the mirror's by place.
			recs := vaulttest.Log(t, h.v, vault.LogOptions{})
			place := map[string]int{}
			for i, r := range recs {
				place[r.Commit] = len(recs) - 1 - i
			}
			gitPlace := h.m.order()
			if len(gitPlace) != len(recs) {
				t.Fatalf("mirror has %d commits, vault %d", len(gitPlace), len(recs))
			}
			kinds := map[string]int{}
			for _, r := range recs {
				kinds[r.Command]++
			}
			t.Logf("%d commits: %v", len(recs), kinds)
			checkBlame(t, h, place, gitPlace)
			checkPickaxe(t, h, recs, place, gitPlace)
			checkPickaxePage(t, h)
			checkGrep(t, h)
		})
	}
}

// checkBlame compares Blame with git blame for every file now and at a few
// earlier revisions.
func checkBlame(t *testing.T, h *randomHistory, place, gitPlace map[string]int) {
	gitByPlace := make([]string, len(gitPlace))
	for c, i := range gitPlace {
		gitByPlace[i] = c
	}
	for _, i := range []int{len(h.revs) - 1, len(h.revs) * 2 / 3, len(h.revs) / 3} {
		checkBlameAt(t, h, h.revs[i], gitByPlace[place[h.revs[i]]], place, gitPlace)
	}
}

func checkBlameAt(t *testing.T, h *randomHistory, rev, gitRev string, place, gitPlace map[string]int) {
	snap, err := h.v.SnapshotAt(ctx, rev)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := snap.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	undone, origins, lines := 0, 0, 0
	for _, p := range paths {
		plain, err := snap.ReadFile(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		text := string(plain)
		b, err := h.v.Blame(ctx, p, rev)
		if err != nil {
			t.Fatalf("Blame(%s): %v", p, err)
		}
		want := h.m.blame(p, gitRev)
		if got := strings.Join(linesOf(b), ""); got != text {
			t.Fatalf("Blame(%s) lines = %q, want %q", p, got, text)
		}
		if len(want) != len(b.Lines) {
			t.Fatalf("Blame(%s): %d lines, git blame %d", p, len(b.Lines), len(want))
		}
		for i, l := range b.Lines {
			lines++
			if l.Origin != "" {
				origins++
			}
			g := gitPlace[want[i]]
			switch {
			case place[l.Commit] == g:
			case l.Origin != "" && place[l.Origin] == g:
				undone++ // git followed a rename an undo made; memvault names the undo and, as origin, git's answer
			default:
				t.Errorf("Blame(%s) line %d %q: commit #%d (%s, origin #%d), git blame says #%d",
					p, i+1, l.Text, place[l.Commit], b.Commits[l.Commit].Command, place[l.Origin], g)
			}
		}
	}
	t.Logf("at #%d: %d files, %d lines blamed; %d lines with an origin, %d where git names that origin", place[rev], len(paths), lines, origins, undone)
}

func linesOf(b *vault.Blame) []string {
	var out []string
	for _, l := range b.Lines {
		out = append(out, l.Text+"\n")
	}
	return out
}

func checkPickaxe(t *testing.T, h *randomHistory, recs []vault.Record, place, gitPlace map[string]int) {
	// Commits are compared by place; the mirror's hashes are read back through it.
	gitByPlace := make([]string, len(gitPlace))
	for c, i := range gitPlace {
		gitByPlace[i] = c
	}
	queries := []struct {
		name string
		opts vault.LogOptions
		args []string
	}{}
	for _, w := range oracleWords {
		queries = append(queries, struct {
			name string
			opts vault.LogOptions
			args []string
		}{"-S " + w, vault.LogOptions{Pickaxe: w}, []string{"-S" + w}})
	}
	for _, re := range []string{`alpha x+$`, `^l1[0-9] `, `beta|gamma`, `l[0-9]*7 delta`} {
		queries = append(queries, struct {
			name string
			opts vault.LogOptions
			args []string
		}{"-G " + re, vault.LogOptions{PickaxeRegexp: regexp.MustCompile(re)}, []string{"-G" + re}})
	}
	queries = append(queries, struct {
		name string
		opts vault.LogOptions
		args []string
	}{"-S beta -- notes", vault.LogOptions{Pickaxe: "beta", Path: "/memories/notes"}, []string{"-Sbeta", "--", "memories/notes"}},
		struct {
			name string
			opts vault.LogOptions
			args []string
		}{"-S alpha -n 3", vault.LogOptions{Pickaxe: "alpha", Limit: 3}, []string{"-Salpha", "-n3"}},
		struct {
			name string
			opts vault.LogOptions
			args []string
		}{"-G gamma -n 1", vault.LogOptions{PickaxeRegexp: regexp.MustCompile("gamma"), Limit: 1}, []string{"-Ggamma", "-n1"}})
	for _, q := range queries {
		got, err := h.v.Log(ctx, q.opts)
		if err != nil {
			t.Fatalf("Log(%s): %v", q.name, err)
		}
		var gotPlaces []int
		for _, r := range got {
			gotPlaces = append(gotPlaces, place[r.Commit])
		}
		args := append([]string{"log", "--format=%H", "-M100%"}, q.args...)
		var wantPlaces []int
		for _, c := range strings.Fields(h.m.git(args...)) {
			wantPlaces = append(wantPlaces, gitPlace[c])
		}
		if !slices.Equal(gotPlaces, wantPlaces) {
			t.Errorf("Log(%s) = commits %v, git log %s = %v", q.name, gotPlaces, strings.Join(q.args, " "), wantPlaces)
			for _, r := range got {
				if !slices.Contains(wantPlaces, place[r.Commit]) {
					t.Logf("#%d: %s %s -> %s; git show: %s", place[r.Commit], r.Command, r.Path, r.NewPath, h.m.git("show", "-M", "--stat", "--format=", gitByPlace[place[r.Commit]]))
				}
			}
		}
	}
}

// checkPickaxePage: Skip and Limit page through what the pickaxe keeps. (git's
// --skip counts commits before -S looks at them; memvault's Skip is the offset
// of a page of what log shows, so it is checked against the whole list.)
func checkPickaxePage(t *testing.T, h *randomHistory) {
	all, err := h.v.Log(ctx, vault.LogOptions{Pickaxe: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	for _, pg := range [][2]int{{2, 3}, {0, 1}, {5, 4}, {len(all) - 1, 5}} {
		got, err := h.v.Log(ctx, vault.LogOptions{Pickaxe: "alpha", Skip: pg[0], Limit: pg[1]})
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := min(pg[0], len(all)), min(pg[0]+pg[1], len(all))
		if !slices.Equal(commits(got), commits(all[lo:hi])) {
			t.Errorf("Log(-S alpha, skip %d, limit %d) = %v, want %v", pg[0], pg[1], commits(got), commits(all[lo:hi]))
		}
	}
}

func checkGrep(t *testing.T, h *randomHistory) {
	dir := h.m.dir
	if _, err := os.Stat(filepath.Join(dir, "memories")); err != nil {
		return // nothing to search: grep -r would fail on the missing folder
	}
	for _, q := range []struct {
		re   string
		fold bool
	}{{"alpha", false}, {"^l[0-9]*3 ", false}, {"BETA", true}, {"x$", false}, {"nomatch", false}} {
		pat := q.re
		if q.fold {
			pat = "(?i)" + pat
		}
		res, err := h.v.Grep(ctx, regexp.MustCompile(pat), vault.GrepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range res.Files {
			for _, l := range f.Lines {
				got = append(got, fmt.Sprintf("%s:%d:%s", f.Path, l.Number, l.Text))
			}
		}
		args := []string{"-rn", "-E", q.re, "memories"}
		if q.fold {
			args = append([]string{"-i"}, args...)
		}
		cmd := exec.Command("grep", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil && !(errors.As(err, new(*exec.ExitError)) && cmd.ProcessState.ExitCode() == 1) {
			t.Fatalf("grep %v: %v", args, err)
		}
		var want []string
		for _, l := range strings.SplitAfter(string(out), "\n") {
			if l != "" {
				want = append(want, "/"+strings.TrimSuffix(l, "\n"))
			}
		}
		sortGrep(want)
		if !slices.Equal(got, want) {
			t.Errorf("Grep(%q) =\n%s\ngrep -rn says\n%s", pat, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// sortGrep orders grep's lines as Grep does: by path, then line number.
func sortGrep(ls []string) {
	key := func(l string) (string, int) {
		p, rest, _ := strings.Cut(l, ":")
		var n int
		fmt.Sscanf(rest, "%d", &n)
		return p, n
	}
	sort.SliceStable(ls, func(i, j int) bool {
		pi, ni := key(ls[i])
		pj, nj := key(ls[j])
		if pi != pj {
			return pi < pj
		}
		return ni < nj
	})
}
