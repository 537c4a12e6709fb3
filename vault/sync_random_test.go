package vault_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
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

// actor makes random memory commands on one vault and remembers the lines it
// wrote that its vault still holds.
type actor struct {
	name string
	v    *vault.Vault
	rng  *rand.Rand
	n    int
}

func (a *actor) line() string {
	a.n++
	return fmt.Sprintf("%s-%d", a.name, a.n)
}

func (a *actor) step(t *testing.T) {
	fs := files(t, a.v)
	paths := make([]string, 0, len(fs))
	for p := range fs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	op := a.rng.IntN(10)
	if len(paths) == 0 {
		op = 0
	}
	pick := func() string { return paths[a.rng.IntN(len(paths))] }
	switch {
	case op <= 1: // create: a new file of its own, or a shared name both may create
		p := fmt.Sprintf("/memories/%s-%d.md", a.name, a.n)
		if op == 1 {
			p = fmt.Sprintf("/memories/shared-%d.md", a.rng.IntN(4))
			if _, ok := fs[p]; ok {
				return
			}
		}
		if a.rng.IntN(3) == 0 {
			p = strings.Replace(p, "/memories/", "/memories/sub/", 1)
		}
		write(t, a.v, p, a.line()+"\n"+a.line()+"\n"+a.line()+"\n")
	case op <= 6: // edit one line: the same lines as the other side, often
		p := pick()
		lines := strings.SplitAfter(fs[p], "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		i := a.rng.IntN(len(lines) + 1)
		if i == len(lines) {
			lines = append(lines, a.line()+"\n")
		} else {
			lines[i] = a.line() + "\n"
		}
		write(t, a.v, p, strings.Join(lines, ""))
	case op <= 8: // rename
		p := pick()
		rename(t, a.v, p, fmt.Sprintf("/memories/%s-r%d.md", a.name, a.n))
		a.n++
	default:
		remove(t, a.v, pick())
	}
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

// TestSyncRandom: two vaults from one remote make random memory commands, sync
// both ways, and end identical, with every line either wrote since the last
// sync still present (in its file, or inside a conflict block), whatever the
// other did.
func TestSyncRandom(t *testing.T) {
	seeds, rounds, steps := 3, 5, 20
	if testing.Short() {
		seeds = 1
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			a, b := pair(t, fileRemote(t))
			actors := []*actor{
				{name: "A", v: a, rng: rand.New(rand.NewPCG(uint64(seed), 1))},
				{name: "B", v: b, rng: rand.New(rand.NewPCG(uint64(seed), 2))},
			}
			for round := range rounds {
				before := map[string]bool{}
				for _, ac := range actors {
					start := lines(files(t, ac.v))
					for range steps {
						ac.step(t)
					}
					for l := range lines(files(t, ac.v)) {
						if !start[l] {
							before[l] = true // written this round, and still there
						}
					}
				}
				mustSync(t, a)
				mustSync(t, b)
				mustSync(t, a)
				if ha, hb := head(t, a), head(t, b); ha != hb {
					t.Fatalf("round %d: heads differ after syncing both ways: %s, %s", round, ha, hb)
				}
				after := lines(files(t, a))
				for l := range before {
					if !after[l] {
						t.Errorf("round %d: line %q written this round is lost", round, l)
					}
				}
			}
			fa, fb := files(t, a), files(t, b)
			if fmt.Sprint(fa) != fmt.Sprint(fb) {
				t.Errorf("the vaults' files differ")
			}
			t.Logf("%d files at the end", len(fa))
		})
	}
}
