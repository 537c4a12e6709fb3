package gitlog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/memvault/memvault/gitlog/internal/disk"
	"github.com/memvault/memvault/gitlog/internal/journal"
)

// randomHistory commits n random change sets over a small tree of paths and
// returns every path that ever existed, directories included.
func randomHistory(t *testing.T, r *Repo, n int, seed uint64) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	names := []string{"m/a", "m/b", "m/d/x", "m/d/y", "m/e/f/z", "m/a2"}
	ever := map[string]bool{}
	for i := range n {
		head, _ := r.Head()
		root, _ := r.RootTree(head)
		var files []string
		r.files("", Entry{Hash: root, Mode: 0o40000}, func(p string, _ Hash) { files = append(files, p) })
		if root.IsZero() {
			files = nil
		}
		var c Change
		switch k := rng.IntN(10); {
		case k < 5 || len(files) == 0:
			c = Change{Op: Put, Path: names[rng.IntN(len(names))], Data: []byte(fmt.Sprint(rng.IntN(3)))}
		case k < 7:
			c = Change{Op: Delete, Path: files[rng.IntN(len(files))]}
		case k < 9:
			from := files[rng.IntN(len(files))]
			if rng.IntN(2) == 0 {
				from = from[:strings.LastIndex(from, "/")]
			}
			c = Change{Op: Move, Path: from, NewPath: "m/r" + fmt.Sprint(rng.IntN(3))}
		default:
			e, _ := r.Lookup(root, files[rng.IntN(len(files))])
			c = Change{Op: Link, Path: "m/old" + fmt.Sprint(rng.IntN(2)), Hash: e.Hash}
		}
		wl, _ := r.Lock(context.Background())
		_, err := wl.Commit(context.Background(), head, []Change{c}, CommitInfo{Message: fmt.Sprintf("c%d\n", i), Author: sig(), Committer: sig()})
		wl.Unlock()
		if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrNotDir) && !strings.Contains(err.Error(), "into itself") {
			t.Fatalf("commit %d %+v: %v", i, c, err)
		}
		head, _ = r.Head()
		root, _ = r.RootTree(head)
		r.files("", Entry{Hash: root, Mode: 0o40000}, func(p string, _ Hash) {
			for q := p; q != ""; q = q[:max(strings.LastIndex(q, "/"), 0)] {
				ever[q] = true
				if !strings.Contains(q, "/") {
					break
				}
			}
		})
	}
	ps := []string{"", "m/never", "m/d/x/under-a-file"}
	for p := range ever {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
	return ps[:min(len(ps), 30)]
}

// gitPathLogs lists, for each of paths, the commits on main whose tree holds
// something else at the path than their first parent's, as git itself sees it:
// git rev-list for the commits and their parents, then one git cat-file
// --batch-check for what each commit holds at each path. It shares no code
// with walkPath.
func gitPathLogs(t *testing.T, dir string, paths []string) map[string][]Hash {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", dir, "rev-list", "--topo-order", "--parents", string(Branch)).Output()
	if err != nil {
		t.Fatalf("git rev-list: %v", err)
	}
	type commit struct{ hash, parent string }
	var commits []commit
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		c := commit{hash: f[0]}
		if len(f) > 1 {
			c.parent = f[1]
		}
		commits = append(commits, c)
	}
	spec := func(c, p string) string {
		if p == "" {
			return c + "^{tree}"
		}
		return c + ":" + p
	}
	var in strings.Builder
	for _, c := range commits {
		for _, p := range paths {
			fmt.Fprintln(&in, spec(c.hash, p))
		}
	}
	cmd := exec.Command("git", "--git-dir", dir, "cat-file", "--batch-check")
	cmd.Stdin = strings.NewReader(in.String())
	if out, err = cmd.Output(); err != nil {
		t.Fatalf("git cat-file --batch-check: %v", err)
	}
	at := map[string]string{} // spec -> "object type", or "" when missing
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	specs := strings.Split(strings.TrimSuffix(in.String(), "\n"), "\n")
	if len(lines) != len(specs) {
		t.Fatalf("git cat-file --batch-check answered %d lines to %d", len(lines), len(specs))
	}
	for i, l := range lines {
		if f := strings.Fields(l); len(f) == 3 {
			at[specs[i]] = f[0] + " " + f[1]
		} else if !strings.HasSuffix(l, " missing") {
			t.Fatalf("git cat-file --batch-check: %q for %q", l, specs[i])
		}
	}
	logs := map[string][]Hash{}
	for _, p := range paths {
		for _, c := range commits {
			parent := ""
			if c.parent != "" {
				parent = at[spec(c.parent, p)]
			}
			if at[spec(c.hash, p)] != parent {
				logs[p] = append(logs[p], fromGG(plumbing.NewHash(c.hash)))
			}
		}
	}
	return logs
}

func walkPath(t *testing.T, r *Repo, p string) []Hash {
	var out []Hash
	head, _ := r.Head()
	err := r.walkPath(context.Background(), head, p, func(c *Commit, q string) (string, error) {
		out = append(out, c.Hash)
		return q, nil
	})
	if err != nil {
		t.Fatalf("walkPath(%q): %v", p, err)
	}
	return out
}

// TestWalkPathMatchesBruteForce checks the index-driven path walk against git
// itself, commit by commit (gitPathLogs): with the index made at commit time,
// rebuilt from nothing, and read past damage.
func TestWalkPathMatchesBruteForce(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: it is this test's oracle")
	}
	for seed := range uint64(2) {
		dir := t.TempDir()
		r, _ := Init(dir)
		paths := randomHistory(t, r, 100, seed)
		flush(t, r)
		want := gitPathLogs(t, dir, paths)
		check := func(how string, r *Repo) {
			for _, p := range paths {
				if got := walkPath(t, r, p); !slices.Equal(got, want[p]) {
					t.Errorf("seed %d, %s: walkPath(%q) = %d commits, want %d", seed, how, p, len(got), len(want[p]))
				}
			}
		}
		check("indexed at commit", r)
		r.Close()
		os.Remove(filepath.Join(dir, stateDir, indexName))
		r, _ = Open(dir)
		check("index rebuilt", r)
		r.Close()
		data, _ := os.ReadFile(filepath.Join(dir, stateDir, indexName))
		if len(data) < 1000 {
			t.Fatalf("index not written back: %d bytes", len(data))
		}
		copy(data[len(data)/2:], "garbage garbage garbage")
		os.WriteFile(filepath.Join(dir, stateDir, indexName), append([]byte("junk"), data...), 0o600)
		r, _ = Open(dir)
		check("index damaged", r)
		r.Close()
	}
}

func TestWalkPathFollows(t *testing.T) {
	r, _ := Init(t.TempDir())
	a := commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte("1")})
	commit(t, r, Change{Op: Put, Path: "m/other", Data: []byte("x")})
	mv := commit(t, r, Change{Op: Move, Path: "m/a", NewPath: "m/b"})
	ed := commit(t, r, Change{Op: Put, Path: "m/b", Data: []byte("2")})
	head, _ := r.Head()
	var got []Hash
	err := r.walkPath(context.Background(), head, "m/b", func(c *Commit, p string) (string, error) {
		got = append(got, c.Hash)
		if c.Hash == mv {
			return "m/a", nil
		}
		return p, nil
	})
	if err != nil || !slices.Equal(got, []Hash{ed, mv, a}) {
		t.Errorf("walkPath(m/b) following the move = %v, %v; want %v", got, err, []Hash{ed, mv, a})
	}
}

func TestLink(t *testing.T) {
	r, _ := Init(t.TempDir())
	first := commit(t, r, Change{Op: Put, Path: "m/d/a", Data: []byte("1")}, Change{Op: Put, Path: "m/f", Data: []byte("2")})
	root, _ := r.RootTree(first)
	d, _ := r.Lookup(root, "m/d")
	f, _ := r.Lookup(root, "m/f")
	commit(t, r, Change{Op: Delete, Path: "m/d"}, Change{Op: Put, Path: "m/x/y", Data: []byte("3")})
	// A tree over a file, a blob over a directory, and into new parents.
	commit(t, r, Change{Op: Link, Path: "m/f", Hash: d.Hash}, Change{Op: Link, Path: "m/x", Hash: f.Hash},
		Change{Op: Link, Path: "m/n/e/w", Hash: d.Hash})
	for p, want := range map[string]string{"m/f/a": "1", "m/x": "2", "m/n/e/w/a": "1"} {
		if got, err := read(t, r, p); err != nil || got != want {
			t.Errorf("after Link, read %s = %q, %v; want %q", p, got, err, want)
		}
	}
	wl, _ := r.Lock(context.Background())
	defer wl.Unlock()
	head, _ := r.Head()
	_, err := wl.Commit(context.Background(), head, []Change{{Op: Link, Path: "m/z", Hash: fromGG(plumbing.NewHash(strings.Repeat("ab", 20)))}}, CommitInfo{Author: sig(), Committer: sig()})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("Link of a missing object: err = %v, want ErrNotFound", err)
	}
	if _, err := r.flushJournal(context.Background(), false); err != nil { // under wl
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", r.Dir(), "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

func TestTags(t *testing.T) {
	dir := t.TempDir()
	r, _ := Init(dir)
	c1 := commit(t, r, Change{Op: Put, Path: "a", Data: []byte("1")})
	c2 := commit(t, r, Change{Op: Put, Path: "a", Data: []byte("2")})
	wl, _ := r.Lock(context.Background())
	_, err := wl.CreateTag("before/v1", c1, sig(), "first\n")
	if err == nil {
		_, err = wl.CreateTag("after", c2, sig(), "second\n")
	}
	_, errExist := wl.CreateTag("after", c1, sig(), "again\n")
	_, errBad := wl.CreateTag("a..b", c1, sig(), "")
	wl.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(errExist, fs.ErrExist) {
		t.Errorf("CreateTag of an existing name: err = %v, want fs.ErrExist", errExist)
	}
	if !errors.Is(errBad, ErrBadRefName) {
		t.Errorf("CreateTag(a..b): err = %v, want ErrBadRefName", errBad)
	}
	tags, err := r.Tags()
	if err != nil || len(tags) != 2 || tags[0].Name != "after" || tags[0].Target != c2 || tags[1].Message != "first\n" {
		t.Fatalf("Tags = %+v, %v", tags, err)
	}
	if tg, err := r.LookupTag("before/v1"); err != nil || tg.Target != c1 {
		t.Errorf("LookupTag(before/v1) = %+v, %v", tg, err)
	}
	if _, err := r.LookupTag("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("LookupTag(nope): err = %v, want ErrNotFound", err)
	}
	flush(t, r)
	out, err := exec.Command("git", "-C", dir, "tag", "-n1", "-l").Output()
	if err != nil || !strings.Contains(string(out), "before/v1") || !strings.Contains(string(out), "second") {
		t.Errorf("git tag -n1 -l = %q, %v", out, err)
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

// TestTagReplayAfterCrash loses a tag's ref as a machine crash might, before its
// object was packed; the journal brings both back.
func TestTagReplayAfterCrash(t *testing.T) {
	dir := t.TempDir()
	r, _ := Init(dir)
	c := commit(t, r, Change{Op: Put, Path: "a", Data: []byte("1")})
	wl, _ := r.Lock(context.Background())
	tag, err := wl.CreateTag("cp", c, sig(), "m\n")
	wl.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	r.abandon()
	if _, err := os.Stat(r.loosePath(tag.Object)); err == nil {
		t.Fatal("the tag object is a loose file: it should be in the journal only")
	}
	data, _ := os.ReadFile(filepath.Join(dir, stateDir, journal.Name))
	data = []byte(strings.Replace(string(data), "boot "+disk.BootID(), "boot "+strings.Repeat("x", len(disk.BootID())), 1))
	os.WriteFile(filepath.Join(dir, stateDir, journal.Name), data, 0o600)
	os.Remove(filepath.Join(dir, "refs/tags/cp"))
	r2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if got, err := r2.LookupTag("cp"); err != nil || got.Target != c {
		t.Errorf("after replay, LookupTag(cp) = %+v, %v; want target %s", got, err, c)
	}
	if h, _ := r2.Head(); h != c {
		t.Errorf("after replay, head = %s, want %s", h, c)
	}
}

func TestUpdateRef(t *testing.T) {
	r, _ := Init(t.TempDir())
	c1 := commit(t, r, Change{Op: Put, Path: "a", Data: []byte("1")})
	c2 := commit(t, r, Change{Op: Put, Path: "a", Data: []byte("2")})
	wl, _ := r.Lock(context.Background())
	defer wl.Unlock()
	if err := wl.UpdateRef(Branch, c1, c1); !errors.Is(err, ErrStale) {
		t.Errorf("UpdateRef from a value it does not hold: err = %v, want ErrStale", err)
	}
	if err := wl.UpdateRef(Branch, c2, c1); err != nil {
		t.Fatal(err)
	}
	if h, _ := r.Head(); h != c1 {
		t.Errorf("after UpdateRef, head = %s, want %s", h, c1)
	}
}

func TestCheckRefName(t *testing.T) {
	for _, name := range []string{"v1", "before-cleanup", "a/b", "x.y", "日本", "a@b"} {
		if err := CheckRefName(name); err != nil {
			t.Errorf("CheckRefName(%q) = %v, want nil", name, err)
		}
	}
	for _, name := range []string{"", "@", "-x", "a..b", ".a", "a/.b", "a.", "a.lock", "a/b.lock/c", "a//b", "/a", "a/",
		"a b", "a~1", "a^", "a:b", "a?", "a*", "a[", `a\b`, "a@{1}", "a\x01", strings.Repeat("x", 256), "\xff"} {
		if err := CheckRefName(name); !errors.Is(err, ErrBadRefName) {
			t.Errorf("CheckRefName(%q) = %v, want ErrBadRefName", name, err)
		}
	}
}

func TestDiffTreesAndPrefix(t *testing.T) {
	r, _ := Init(t.TempDir())
	c1 := commit(t, r, Change{Op: Put, Path: "m/d/a", Data: []byte("1")}, Change{Op: Put, Path: "m/f", Data: []byte("2")})
	c2 := commit(t, r, Change{Op: Move, Path: "m/d", NewPath: "m/e"}, Change{Op: Put, Path: "m/f", Data: []byte("3")},
		Change{Op: Put, Path: "n", Data: []byte("4")})
	t1, _ := r.RootTree(c1)
	t2, _ := r.RootTree(c2)
	got, err := r.DiffTrees(t1, t2, "m")
	var paths []string
	for _, c := range got {
		kind := "M"
		if c.From.IsZero() {
			kind = "A"
		} else if c.To.IsZero() {
			kind = "D"
		}
		paths = append(paths, kind+" "+c.Path)
	}
	if want := "D m/d/a,A m/e/a,M m/f"; err != nil || strings.Join(paths, ",") != want {
		t.Errorf("DiffTrees(m) = %v, %v; want %s", paths, err, want)
	}
	if hs, err := r.CommitsWithPrefix(c2.String()[:6]); err != nil || len(hs) != 1 || hs[0] != c2 {
		t.Errorf("CommitsWithPrefix(%s) = %v, %v", c2.String()[:6], hs, err)
	}
	if hs, _ := r.CommitsWithPrefix(t2.String()[:8]); len(hs) != 0 {
		t.Errorf("CommitsWithPrefix of a tree's name = %v, want none", hs)
	}
}

// TestWalkPathMerge walks a history with a merge: each commit once, in Walk's
// order, each change compared with the first parent.
func TestWalkPathMerge(t *testing.T) {
	r, _ := Init(t.TempDir())
	c1 := commit(t, r, Change{Op: Put, Path: "a", Data: []byte("1")})
	c2 := commit(t, r, Change{Op: Put, Path: "b", Data: []byte("1")})
	wl, _ := r.Lock(context.Background())
	defer wl.Unlock()
	info := CommitInfo{Message: "m\n", Author: sig(), Committer: sig()}
	must := func(h Hash, err error) Hash {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if err := wl.UpdateRef(Branch, c2, c1); err != nil {
		t.Fatal(err)
	}
	side := must(wl.Commit(context.Background(), c1, []Change{{Op: Put, Path: "a", Data: []byte("2")}}, info))
	if err := wl.UpdateRef(Branch, side, c2); err != nil {
		t.Fatal(err)
	}
	x := must(wl.Commit(context.Background(), c2, []Change{{Op: Put, Path: "a", Data: []byte("2")}}, info))
	tree, _ := r.RootTree(x)
	base, _ := r.RootTree(c2)
	merge := must(r.commitTree(x, tree, base, []Hash{c2, side}, info, nil, nil))
	wants := map[string][]Hash{"a": {merge, c1, side}, "b": {c2}, "": {merge, c2, c1, side}}
	if _, err := r.flushJournal(context.Background(), false); err != nil { // under wl
		t.Fatal(err)
	}
	git := gitPathLogs(t, r.Dir(), []string{"a", "b", ""})
	for p, want := range wants {
		if got := walkPath(t, r, p); !slices.Equal(got, want) {
			t.Errorf("walkPath(%q) over a merge = %v, want %v", p, got, want)
		}
		// git lists the same commits, in its own order.
		sorted := func(hs []Hash) []Hash {
			return slices.SortedFunc(slices.Values(hs), func(a, b Hash) int { return strings.Compare(a.String(), b.String()) })
		}
		if got := git[p]; !slices.Equal(sorted(got), sorted(want)) {
			t.Errorf("git's log of %q = %v, want %v", p, got, want)
		}
	}
}

// TestChanged checks Changed against the trees, for a file changed, one left
// alone, one under a folder added whole, and a file deleted; and in a freshly
// opened repository, whose index must be read or completed first.
func TestChanged(t *testing.T) {
	dir := t.TempDir()
	r, _ := Init(dir)
	first := commit(t, r, Change{Op: Put, Path: ".k/key", Data: []byte("k1")}, Change{Op: Put, Path: "m/a", Data: []byte("1")})
	edit := commit(t, r, Change{Op: Put, Path: "m/a", Data: []byte("2")})
	added := commit(t, r, Change{Op: Put, Path: "m/d/e/f", Data: []byte("3")})
	rotate := commit(t, r, Change{Op: Put, Path: ".k/key", Data: []byte("k2")}, Change{Op: Delete, Path: "m/a"})
	cases := []struct {
		c    Hash
		p    string
		want bool
	}{
		{first, ".k/key", true}, {first, "m/a", true}, {first, "m/b", false},
		{edit, "m/a", true}, {edit, ".k/key", false}, {edit, "m", true},
		{added, "m/d/e/f", true}, {added, "m/d/e/g", false}, {added, "m/a", false},
		{rotate, ".k/key", true}, {rotate, "m/a", true}, {rotate, "m/d/e/f", false},
	}
	check := func(r *Repo, when string) {
		for _, tc := range cases {
			if got, err := r.Changed(tc.c, tc.p); err != nil || got != tc.want {
				t.Errorf("%s: Changed(%s, %q) = %v, %v; want %v", when, tc.c, tc.p, got, err, tc.want)
			}
		}
	}
	check(r, "as made")
	r.Close()
	r2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	check(r2, "reopened")
}
