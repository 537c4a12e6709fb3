package vault_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// files returns every memory file of v's head and its plaintext.
func files(t *testing.T, v *vault.Vault) map[string]string {
	t.Helper()
	s, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var walk func(dir string)
	walk = func(dir string) {
		es, err := s.List(ctx, dir)
		if err != nil {
			t.Fatalf("List(%s): %v", dir, err)
		}
		for _, e := range es {
			p := dir + "/" + e.Name
			if e.Dir {
				walk(p)
				continue
			}
			b, err := s.ReadFile(ctx, p)
			if err != nil {
				t.Fatalf("ReadFile(%s): %v", p, err)
			}
			out[p] = string(b)
		}
	}
	walk("/memories")
	return out
}

// lines is the set of lines in all files.
func lines(fs map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, c := range fs {
		for _, l := range strings.Split(c, "\n") {
			out[l] = true
		}
	}
	return out
}

// idPrefix starts the first line of every file an actor creates. Edits never
// change such a line, so it stays with the file through renames, merges and
// moves aside, and its absence means the file is gone. (Two files can share an
// id: both sides renaming one file to different names keeps both.)
const idPrefix = "id "

// actor makes random memory commands on one vault and keeps a model of the
// vault's files, so a command needs no read of the vault.
type actor struct {
	name  string
	v     *vault.Vault
	rng   *rand.Rand
	n     int               // lines written
	cmds  int               // commands made
	files map[string]string // the model: memory path -> plaintext
	// Since the last sync: where each file was when it began ("" for a file
	// made since), whether it wrote the file (created or edited it), where the
	// files it deleted were when it began, and the commands, for a failure to
	// show.
	origin  map[string]string
	wrote   map[string]bool
	deleted map[string]bool
	log     []string
}

// begin starts a round: every file is where it was when the round began.
func (a *actor) begin() {
	a.origin, a.wrote, a.deleted, a.log = map[string]string{}, map[string]bool{}, map[string]bool{}, nil
	for p := range a.files {
		a.origin[p] = p
	}
}

func (a *actor) logf(format string, args ...any) {
	a.log = append(a.log, fmt.Sprintf(format, args...))
}

func (a *actor) line() string {
	a.n++
	return fmt.Sprintf("%s-%d", a.name, a.n)
}

// sharedNames are names both actors use, as files and as directories, so that
// the two sides make the same file, or a file where the other has a directory.
var sharedNames = []string{"/memories/s0", "/memories/s1", "/memories/s2.md", "/memories/sub", "/memories/sub/s0", "/memories/sub/s1"}

// kind says what the model holds at p: 0 nothing, 1 a file, 2 a directory.
func (a *actor) kind(p string) int {
	if _, ok := a.files[p]; ok {
		return 1
	}
	for q := range a.files {
		if strings.HasPrefix(q, p+"/") {
			return 2
		}
	}
	return 0
}

// free says whether a file or directory could be made at p: nothing is there
// and no directory above it is a file.
func (a *actor) free(p string) bool {
	if a.kind(p) != 0 {
		return false
	}
	for d := p; ; {
		i := strings.LastIndexByte(d, '/')
		d = d[:i]
		if d == "/memories" {
			return true
		}
		if _, ok := a.files[d]; ok {
			return false
		}
	}
}

func (a *actor) paths() []string {
	ps := make([]string, 0, len(a.files))
	for p := range a.files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// dirs lists the directories under /memories in the model.
func (a *actor) dirs() []string {
	set := map[string]bool{}
	for p := range a.files {
		for d := p[:strings.LastIndexByte(p, '/')]; d != "/memories"; d = d[:strings.LastIndexByte(d, '/')] {
			set[d] = true
		}
	}
	ds := make([]string, 0, len(set))
	for d := range set {
		ds = append(ds, d)
	}
	sort.Strings(ds)
	return ds
}

func (a *actor) pick(ps []string) string { return ps[a.rng.IntN(len(ps))] }

// ids returns the id lines of content c.
func ids(c string) []string {
	var out []string
	for _, l := range strings.Split(c, "\n") {
		if strings.HasPrefix(l, idPrefix) {
			out = append(out, l)
		}
	}
	return out
}

// step makes one random memory command, or none when the one drawn does not
// apply to the model; it reports whether it made one.
func (a *actor) step(t *testing.T) bool {
	op := a.rng.IntN(20)
	if len(a.files) == 0 {
		op = 0
	}
	switch {
	case op < 4:
		return a.create(t)
	case op < 12:
		return a.edit(t)
	case op < 17:
		return a.move(t)
	default:
		return a.delete(t)
	}
}

// create writes a new file: under a name of its own, under a shared name, in a
// shared directory, or in a directory the vault has.
func (a *actor) create(t *testing.T) bool {
	own := fmt.Sprintf("%s-%d.md", a.name, a.n)
	var p string
	switch ds := a.dirs(); a.rng.IntN(4) {
	case 0:
		p = "/memories/" + own
	case 1:
		p = a.pick(sharedNames)
	case 2:
		p = a.pick(sharedNames) + "/" + own
	default:
		if len(ds) == 0 {
			return false
		}
		p = a.pick(ds) + "/" + own
	}
	if !a.free(p) {
		return false
	}
	c := idPrefix + a.line() + "\n" + a.line() + "\n" + a.line() + "\n"
	write(t, a.v, p, c)
	a.logf("create %s %q", p, c)
	a.files[p], a.origin[p], a.wrote[p] = c, "", true
	return true
}

// edit replaces a line of a file, often one the other side edits too, or adds
// one at the end. An id line stays.
func (a *actor) edit(t *testing.T) bool {
	p := a.pick(a.paths())
	ls := strings.SplitAfter(a.files[p], "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	var can []int
	for i, l := range ls {
		if !strings.HasPrefix(l, idPrefix) {
			can = append(can, i)
		}
	}
	if i := a.rng.IntN(len(can) + 1); i == len(can) {
		ls = append(ls, a.line()+"\n")
	} else {
		ls[can[i]] = a.line() + "\n"
	}
	c := strings.Join(ls, "")
	write(t, a.v, p, c)
	a.logf("edit %s %q", p, c)
	a.files[p], a.wrote[p] = c, true
	return true
}

// move renames a file, or now and then a directory, to a name of its own, a
// shared name, or into a directory the vault has.
func (a *actor) move(t *testing.T) bool {
	ds := a.dirs()
	from := a.pick(a.paths())
	if len(ds) > 0 && a.rng.IntN(4) == 0 {
		from = a.pick(ds)
	}
	own := fmt.Sprintf("%s-r%d", a.name, a.n)
	if a.kind(from) == 1 {
		own += ".md"
	}
	var to string
	switch a.rng.IntN(4) {
	case 0:
		to = "/memories/" + own
	case 1, 2:
		to = a.pick(sharedNames)
	default:
		if len(ds) == 0 {
			return false
		}
		to = a.pick(ds) + "/" + own
	}
	if to == from || strings.HasPrefix(to, from+"/") || !a.free(to) {
		return false
	}
	a.n++
	rename(t, a.v, from, to)
	a.logf("rename %s %s", from, to)
	for _, p := range a.paths() {
		if p == from || strings.HasPrefix(p, from+"/") {
			q := to + p[len(from):]
			a.files[q], a.origin[q], a.wrote[q] = a.files[p], a.origin[p], a.wrote[p]
			delete(a.files, p)
			delete(a.origin, p)
			delete(a.wrote, p)
		}
	}
	return true
}

// delete removes a file, or now and then a whole directory.
func (a *actor) delete(t *testing.T) bool {
	p := a.pick(a.paths())
	if ds := a.dirs(); len(ds) > 0 && a.rng.IntN(4) == 0 {
		p = a.pick(ds)
	}
	remove(t, a.v, p)
	a.logf("delete %s", p)
	for _, q := range a.paths() {
		if q == p || strings.HasPrefix(q, p+"/") {
			if o := a.origin[q]; o != "" {
				a.deleted[o] = true
			}
			delete(a.files, q)
			delete(a.origin, q)
			delete(a.wrote, q)
		}
	}
	return true
}

func dump(fs map[string]string) string {
	var b strings.Builder
	for _, p := range sortedPaths(fs) {
		fmt.Fprintf(&b, "%s %q\n", p, fs[p])
	}
	return b.String()
}

// For a longer soak: go test ./vault -run TestSyncRandom -random.seeds 100.
var (
	randomSeeds = flag.Int("random.seeds", 0, "TestSyncRandom: how many seeds (0: 8, or 2 with -short)")
	randomFirst = flag.Int("random.first", 0, "TestSyncRandom: the first seed")
)

// TestSyncRandom: two vaults from one remote make hundreds of random
// memory commands each (creates, edits of the same and different lines, renames
// and deletes of files and directories, a file where the other side has a
// directory), sync both ways every few dozen, and end identical, with every
// line either wrote since the last sync still present (in its file, inside a
// conflict block, or in a file moved aside), no file lost that the other side
// did not delete, and every conflict named.
func TestSyncRandom(t *testing.T) {
	seeds, rounds, steps := 8, 4, 50 // 200 commands per vault per seed
	switch {
	case testing.Short():
		seeds = 2
	case raceEnabled:
		// One goroutine drives both vaults, so the race detector watches only
		// the library's own goroutines (transfers), which three seeds exercise
		// as well as eight, at a fifth of the speed.
		seeds = 3
	}
	if *randomSeeds > 0 {
		seeds = *randomSeeds
	}
	for _, sealed := range []bool{false, true} {
		format, n := "plain", seeds
		if sealed {
			format = "sealed"
			if raceEnabled && *randomSeeds == 0 {
				// The sealed format's merges run the same code on
				// other names: one seed gives the race detector
				// what it watches, and keeps the run to a minute.
				n = 1
			}
		}
		t.Run(format, func(t *testing.T) { syncRandom(t, n, rounds, steps, sealed) })
	}
}

func syncRandom(t *testing.T, seeds, rounds, steps int, sealed bool) {
	for seed := *randomFirst; seed < *randomFirst+seeds; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			url := fileRemote(t)
			a, b := pairIn(t, url, newClock(300*time.Millisecond), sealed)
			if sealed {
				// What the merges pushed stays sealed: no name, trailer or
				// conflict in anything the host holds.
				defer func() {
					for _, needle := range []string{"-1.md", "Memory-", "conflict", "merge origin"} {
						if found := vaulttest.FindInObjects(t, strings.TrimPrefix(url, "file://"), []byte(needle)); len(found) > 0 {
							t.Errorf("the remote holds %q in %v", needle, found)
						}
					}
				}()
			}
			actors := []*actor{
				{name: "A", v: a, rng: rand.New(rand.NewPCG(uint64(seed), 1)), files: map[string]string{}},
				{name: "B", v: b, rng: rand.New(rand.NewPCG(uint64(seed), 2)), files: map[string]string{}},
			}
			conflicts := 0
			for round := range rounds {
				base := map[string]string{} // both sides' files at the round's start
				for p, c := range actors[0].files {
					base[p] = c
				}
				written := map[*actor]map[string]bool{}
				for _, ac := range actors {
					ac.begin()
					start := lines(ac.files)
					for done := 0; done < steps; {
						if ac.step(t) {
							done++
							ac.cmds++
						}
					}
					// The model and the vault agree before the sync.
					if got := files(t, ac.v); fmt.Sprint(got) != fmt.Sprint(ac.files) {
						t.Fatalf("round %d: %s's vault holds %q, its model %q", round, ac.name, got, ac.files)
					}
					written[ac] = map[string]bool{}
					for l := range lines(ac.files) {
						if !start[l] {
							written[ac][l] = true // written this round, and still there
						}
					}
				}
				// On a failure, the round's story.
				var res vault.SyncResult
				after := map[string]string{}
				report := func() {
					for _, ac := range actors {
						t.Logf("round %d: %s's commands:\n%s", round, ac.name, strings.Join(ac.log, "\n"))
						t.Logf("%s's files before the sync:\n%s", ac.name, dump(ac.files))
					}
					t.Logf("the files after the sync:\n%s", dump(after))
					t.Logf("the merge: %+v", res)
					t.FailNow()
				}
				sync := func(v *vault.Vault) vault.SyncResult {
					r, err := v.Sync(ctx, vault.SyncOptions{Host: "test"})
					if err != nil {
						t.Errorf("round %d: Sync: %v", round, err)
						report()
					}
					return r
				}
				first, second := actors[0], actors[1]
				if round%2 == 1 {
					first, second = second, first // each side merges in turn
				}
				sync(first.v)
				res = sync(second.v)
				sync(first.v)
				if ha, hb := head(t, a), head(t, b); ha != hb {
					t.Fatalf("round %d: heads differ after syncing both ways: %s, %s", round, ha, hb)
				}
				after = files(t, a)
				if fb := files(t, b); fmt.Sprint(after) != fmt.Sprint(fb) {
					t.Fatalf("round %d: the vaults' files differ", round)
				}
				present := lines(after)
				for i, ac := range actors {
					other := actors[1-i]
					for l := range written[ac] {
						if !present[l] {
							t.Errorf("round %d: line %q %s wrote is lost", round, l, ac.name)
						}
					}
					// A file stays unless the other side deleted it and this side
					// left it as it was, where it was (renamed there and back is
					// left as it was).
					for p, c := range ac.files {
						if o := ac.origin[p]; o == p && !ac.wrote[p] && other.deleted[o] {
							continue
						}
						for _, id := range ids(c) {
							if !present[id] {
								t.Errorf("round %d: %s's file %s (%s) is lost", round, ac.name, p, id)
							}
						}
					}
				}
				named := map[string]bool{}
				for _, p := range res.Conflicts {
					named[p] = true
					c, ok := after[p]
					if !ok || !strings.Contains(c, "<<<<<<< ours (test, ") && !strings.Contains(p, ".conflict-") {
						t.Errorf("round %d: conflict %s is not a file with markers nor one moved aside", round, p)
					}
				}
				// And every conflict is named: each file holding a marker line
				// this sync wrote (one neither side had: each carries the merge's
				// time), each file moved aside by it, and each path both sides
				// created anew with different texts (nothing in common to merge
				// from, so the texts conflict, or one is moved aside).
				before := lines(first.files)
				for l := range lines(second.files) {
					before[l] = true
				}
				for p, c := range after {
					for l := range lines(map[string]string{p: c}) {
						if strings.HasPrefix(l, "<<<<<<< ") && !before[l] && !named[p] {
							t.Errorf("round %d: %s has the conflict markers %q, but the sync does not name it", round, p, strings.TrimSpace(l))
							break
						}
					}
					if _, had := first.files[p]; strings.Contains(p, ".conflict-") && !had && second.files[p] == "" && !named[p] {
						t.Errorf("round %d: %s was moved aside, but the sync does not name it", round, p)
					}
				}
				for p, ca := range actors[0].files {
					cb, inB := actors[1].files[p]
					if _, inBase := base[p]; inBase || !inB || ca == cb {
						continue
					}
					aside := false
					for q := range named {
						aside = aside || strings.HasPrefix(q, p+".conflict-") || strings.HasPrefix(q, p+"/")
					}
					if !named[p] && !aside {
						t.Errorf("round %d: both sides created %s with different texts, but the sync names no conflict there (named: %q)", round, p, res.Conflicts)
					}
				}
				conflicts += len(res.Conflicts)
				if t.Failed() {
					report()
				}
				for _, ac := range actors {
					ac.files = map[string]string{}
					for p, c := range after {
						ac.files[p] = c
					}
				}
			}
			t.Logf("%d and %d commands, %d conflicts, %d files at the end", actors[0].cmds, actors[1].cmds, conflicts, len(actors[0].files))
		})
	}
}
