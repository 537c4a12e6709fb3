package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/memvault/memvault/gitlog"
)

// Refusal is one entry of an arriving commit that the admission check refused.
type Refusal struct {
	Commit gitlog.Hash
	Path   string // the git path, as in the tree (escape it before printing)
	Reason string
	names  []string // Path, a name a level: a name may hold a slash
}

// skipAdmission turns the check off: only BenchmarkSyncAdmission sets it,
// to measure what the check costs a sync, old and new in one run.
var skipAdmission atomic.Bool

// skipArrivalTree turns off only the check of the tree main would take
// (sync's refusedOnArrival): BenchmarkSyncAdmission sets it to measure that check's
// share.
var skipArrivalTree atomic.Bool

// maxMetaFile bounds the files beside memories (.memvault/*, .gitattributes).
const maxMetaFile = 1 << 20

// ageHeaderSlack bounds an age header: the stanzas of many recipients,
// post-quantum ones included.
const ageHeaderSlack = 256 << 10

// maxCiphertext is the largest age file that can hold plaintext of n bytes:
// the header, the nonce, and a 16-byte tag per 64 KiB chunk.
func maxCiphertext(n int64) int64 {
	return n + (n/65536+1)*16 + 16 + ageHeaderSlack
}

// admission checks the commits between a vault's known history and what
// arrived. Only what is new is read: a subtree or blob whose hash equals the
// entry at the same path in a parent was checked when that parent arrived.
type admission struct {
	ctx      context.Context
	repo     *gitlog.Repo
	limits   Limits
	seen     map[gitlog.Hash]bool
	refused  []Refusal
	names    []string // of the entry being checked
	writers  *writersCache
	sigs     map[gitlog.Hash]error // signed's answers found ahead (see verifyAll)
	sealing                        // the sealed format's checks (admit_sealed.go)
	vouching                       // who signed what, for the trust rules (trust.go)
}

// admit checks every commit of repo reachable from theirs and not from base (ZeroHash:
// all of theirs' history) and returns what it refuses. A commit is admissible
// when its top level holds only memories/ (a tree), .memvault/ (a tree of
// regular files) and .gitattributes (a regular file); memories/ holds only
// regular files (mode 100644) and trees; every name passes CleanPath and git's
// own rules for names (no "/", no empty name); every memory blob is an age
// file whose size, read from the object header before anything is inflated,
// fits the vault's maxFileSize; and .memvault/format names the format this
// memvault reads.
//
// In a tree of the sealed format (one with .memvault/key, format 2) the key
// must open with openKey, every stored name under memories/ must open under
// it within its folder, and every memory blob must carry a size header that
// opens (see admit_sealed.go).
func admit(ctx context.Context, repo *gitlog.Repo, limits Limits, openKey keyOpener, base, theirs gitlog.Hash, trust trustRules) ([]Refusal, error) {
	return admitting(ctx, repo, limits, openKey, base, theirs, &writersCache{}, trust)
}

// admitting is admit; writers, when not nil, also refuses with ErrUnsigned a
// commit no writer signed (see signed). A check of history this clone holds
// already (fsck) leaves writers nil and lists such commits itself.
func admitting(ctx context.Context, repo *gitlog.Repo, limits Limits, openKey keyOpener, base, theirs gitlog.Hash, writers *writersCache, trust trustRules) ([]Refusal, error) {
	if skipAdmission.Load() {
		return nil, nil
	}
	a := &admission{ctx: ctx, repo: repo, limits: limits, seen: map[gitlog.Hash]bool{}, writers: writers}
	a.openKey = openKey
	a.trust = trust
	if writers != nil {
		if err := a.loadRemoved(theirs, trust.held); err != nil {
			return nil, err
		}
	}
	// What is new is found once, in one walk over both sides (newCommits),
	// never by asking, commit by commit, whether base reaches it.
	var fresh map[gitlog.Hash]*gitlog.Commit
	if !base.IsZero() {
		cs, err := newCommits(ctx, repo, base, theirs)
		if err != nil {
			return nil, fmt.Errorf("vault: admit %s: %w", theirs, err)
		}
		fresh = make(map[gitlog.Hash]*gitlog.Commit, len(cs))
		for _, c := range cs {
			fresh[c.Hash] = c
		}
		if a.writers != nil && !skipSigning.Load() {
			if err := a.verifyAll(cs); err != nil {
				return nil, err
			}
		}
	}
	stack := []gitlog.Hash{theirs}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if a.seen[h] {
			continue
		}
		a.seen[h] = true
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := fresh[h]
		if fresh == nil {
			var err error
			if c, err = repo.ReadCommit(h); err != nil {
				return nil, fmt.Errorf("vault: admit: %w", err)
			}
		} else if c == nil {
			continue // base reaches it: admitted when it arrived
		}
		if err := a.commit(c); err != nil {
			return nil, err
		}
		if a.writers != nil && !skipSigning.Load() {
			if err := a.signed(c); err != nil {
				return nil, err
			}
			a.walked(c)
		}
		for i := len(c.ParentHashes) - 1; i >= 0; i-- {
			stack = append(stack, c.ParentHashes[i])
		}
	}
	if a.writers != nil && !skipSigning.Load() {
		if err := a.trusted(theirs); err != nil {
			return nil, err
		}
	}
	return a.refused, nil
}

// commit checks what commit c changed against each of its parents.
func (a *admission) commit(c *gitlog.Commit) error {
	var parents []gitlog.Hash
	for _, p := range c.ParentHashes {
		t, err := a.repo.RootTree(p)
		if err != nil {
			return fmt.Errorf("vault: admit %s: %w", c.Hash, err)
		}
		parents = append(parents, t)
	}
	return a.tree(c.Hash, "", nil, c.TreeHash, parents)
}

// refuse records that commit c's entry at p is refused for reason.
func (a *admission) refuse(c gitlog.Hash, p, reason string) {
	a.refused = append(a.refused, Refusal{Commit: c, Path: p, Reason: reason, names: a.names})
}

// tree checks the entries of tree h at git path dir ("" for the root) that
// differ from the same entry in every one of the parent trees.
func (a *admission) tree(c gitlog.Hash, dir string, names []string, h gitlog.Hash, parents []gitlog.Hash) error {
	es, err := a.repo.ReadTree(h)
	if errors.Is(err, gitlog.ErrWrongType) || errors.Is(err, gitlog.ErrTooLarge) {
		a.names = names
		a.refuse(c, dir, "not a tree that memvault reads ("+errors.Unwrap(err).Error()+")")
		return nil
	}
	if err != nil {
		return fmt.Errorf("vault: admit %s: %w", c, err)
	}
	if reason := entryOrder(es); reason != "" {
		a.names = names
		a.refuse(c, dir, reason)
		return nil
	}
	var pes []parentTree
	for _, p := range parents {
		pe, err := a.repo.ReadTree(p)
		if errors.Is(err, gitlog.ErrWrongType) || errors.Is(err, gitlog.ErrTooLarge) {
			continue // refused when that parent arrived: all of this is new
		}
		if err != nil {
			return fmt.Errorf("vault: admit %s: %w", c, err)
		}
		if dir == "" && !a.sameKey(es, pe) {
			continue // names sealed under another key: all of this is new
		}
		pes = append(pes, newParentTree(pe))
	}
	if dir == "" {
		a.enterRoot(h, es)
	}
	for _, e := range es {
		var same bool
		var subs []gitlog.Hash
		for _, pe := range pes {
			for _, x := range pe.named(e.Name) {
				if x.Hash == e.Hash && x.Mode == e.Mode {
					same = true
				} else if x.IsDir() && e.IsDir() {
					subs = append(subs, x.Hash)
				}
			}
		}
		if same {
			continue
		}
		p := e.Name
		if dir != "" {
			p = dir + "/" + e.Name
		}
		a.names = append(names[:len(names):len(names)], e.Name)
		if err := a.entry(c, dir, p, e, subs); err != nil {
			return err
		}
	}
	return nil
}

// parentTree is a parent's tree, its entries found by name: comparing every
// entry of a folder of 100 names with every entry of its parent's version
// was a third of what admission spent on a commit.
type parentTree struct {
	es     []gitlog.Entry
	byName map[string]int // the index in es of each name; nil when a name is there twice
}

func newParentTree(es []gitlog.Entry) parentTree {
	byName := make(map[string]int, len(es))
	for i, e := range es {
		if _, ok := byName[e.Name]; ok {
			// Two entries of one name (a tree admission refused, left
			// out by SkipRefused): each is compared, as git's reader
			// might find either.
			return parentTree{es: es}
		}
		byName[e.Name] = i
	}
	return parentTree{es: es, byName: byName}
}

// named returns the entries called name.
func (t parentTree) named(name string) []gitlog.Entry {
	if t.byName == nil {
		var out []gitlog.Entry
		for _, x := range t.es {
			if x.Name == name {
				out = append(out, x)
			}
		}
		return out
	}
	if i, ok := t.byName[name]; ok {
		return t.es[i : i+1]
	}
	return nil
}

// entry checks one new entry e at git path p in directory dir.
func (a *admission) entry(c gitlog.Hash, dir, p string, e gitlog.Entry, subs []gitlog.Hash) error {
	if reason := badGitName(e.Name); reason != "" {
		a.refuse(c, p, reason)
		return nil
	}
	switch {
	case dir == "":
		return a.top(c, p, e, subs)
	case dir == ".memvault":
		if e.Mode != modeRegular {
			a.refuse(c, p, "not a regular file")
			return nil
		}
		return a.meta(c, p, e)
	case dir == memDir || strings.HasPrefix(dir, memDir+"/"):
		return a.memory(c, dir, p, e, subs)
	}
	return nil
}

// top checks an entry of the root tree.
func (a *admission) top(c gitlog.Hash, p string, e gitlog.Entry, subs []gitlog.Hash) error {
	switch {
	case p == memDir && e.IsDir():
		return a.tree(c, p, a.names, e.Hash, subs)
	case p == ".memvault" && e.IsDir():
		if err := a.tree(c, p, a.names, e.Hash, subs); err != nil {
			return err
		}
		return a.formatAndKey(c, e.Hash)
	case p == ".gitattributes" && e.Mode == modeRegular:
		return a.meta(c, p, e)
	case p == memDir || p == ".memvault":
		a.refuse(c, p, "not a directory")
	default:
		a.refuse(c, p, "outside the vault's layout (only memories/, .memvault/ and .gitattributes)")
	}
	return nil
}

// memory checks an entry under memories/.
func (a *admission) memory(c gitlog.Hash, dir, p string, e gitlog.Entry, subs []gitlog.Hash) error {
	k, err := a.treeKey(c)
	if err != nil || a.keyBroken {
		return err // a key that does not open is refused, and its names with it
	}
	if k != nil {
		// The stored path is longer than the memory path it seals: the
		// memory tool's rules hold for the opened one.
		if !a.openStored(c, k, dir, p, e) {
			return nil
		}
	} else if _, err := CleanPath("/" + p); err != nil {
		var pe *PathError
		if errors.As(err, &pe) {
			a.refuse(c, p, pe.Reason)
		} else {
			a.refuse(c, p, "not a memory path")
		}
		return nil
	}
	switch e.Mode {
	case modeDir:
		return a.tree(c, p, a.names, e.Hash, subs)
	case modeRegular:
	case modeSymlink:
		a.refuse(c, p, "a symbolic link")
		return nil
	case modeSubmodule:
		a.refuse(c, p, "a submodule (gitlink)")
		return nil
	case modeExecutable:
		a.refuse(c, p, "an executable file")
		return nil
	default:
		a.refuse(c, p, fmt.Sprintf("unknown mode %o", uint32(e.Mode)))
		return nil
	}
	if k != nil {
		return a.sealedBlob(c, k, p, e)
	}
	// The size from the header, then age's header, parsed as age parses it
	// (stanzas, MAC line): the payload is never read.
	for _, want := range []int{sizePrefix, ageHeaderSlack} {
		head, n, err := a.repo.BlobPrefix(e.Hash, want)
		if errors.Is(err, gitlog.ErrWrongType) {
			a.refuse(c, p, "not a blob")
			return nil
		}
		if err != nil {
			return fmt.Errorf("vault: admit: %w", err)
		}
		if limit := maxCiphertext(a.limits.MaxFileSize); n > limit {
			a.refuse(c, p, fmt.Sprintf("%d bytes, over the limit of %d", n, limit))
			return nil
		}
		if !bytes.HasPrefix(head, []byte(ageMagic)) {
			a.refuse(c, p, "not an age file")
			return nil
		}
		reason := ageReason(head, n)
		if reason == "" {
			return nil
		}
		if int64(len(head)) >= n || want == ageHeaderSlack {
			a.refuse(c, p, reason)
			return nil
		}
	}
	return nil
}

// entryOrder returns why a tree's entries are not as git writes them, or "":
// two entries of one name (git fsck's duplicateEntries: a listing shows both,
// a read finds one), or entries out of git's order (treeNotSorted), where a
// lookup that trusts the order misses one.
func entryOrder(es []gitlog.Entry) string {
	key := func(e gitlog.Entry) string {
		if e.IsDir() {
			return e.Name + "/"
		}
		return e.Name
	}
	for i := 1; i < len(es); i++ {
		switch {
		case es[i].Name == es[i-1].Name:
			return fmt.Sprintf("two entries named %q (duplicateEntries)", es[i].Name)
		case key(es[i]) < key(es[i-1]):
			return fmt.Sprintf("entries not in git's order: %q after %q (treeNotSorted)", es[i].Name, es[i-1].Name)
		}
	}
	// A file and a directory of one name need not be neighbours.
	if len(es) > 2 {
		seen := make(map[string]bool, len(es))
		for _, e := range es {
			if seen[e.Name] {
				return fmt.Sprintf("two entries named %q (duplicateEntries)", e.Name)
			}
			seen[e.Name] = true
		}
	}
	return ""
}

// meta checks a file beside the memories: bounded, and a known format.
func (a *admission) meta(c gitlog.Hash, p string, e gitlog.Entry) error {
	data, reason, err := a.blob(e.Hash, maxMetaFile)
	if err != nil || reason != "" {
		if reason != "" {
			a.refuse(c, p, reason)
		}
		return err
	}
	switch f := strings.TrimSpace(string(data)); {
	case p == formatPath && f != formatVersion && !sealedFormat(f):
		a.refuse(c, p, fmt.Sprintf("format %q; this memvault reads formats %s, %s and %s", f, formatVersion, sealedFormatVersion, generationsFormatVersion))
	case p == keyPath:
		if reason := ageReason(data, int64(len(data))); reason != "" {
			a.refuse(c, p, reason)
		}
	}
	return nil
}

// blob reads blob h when its header says it holds at most limit bytes;
// otherwise reason says why not.
func (a *admission) blob(h gitlog.Hash, limit int64) (data []byte, reason string, err error) {
	n, err := a.repo.ObjectSize(h)
	if err != nil {
		return nil, "", fmt.Errorf("vault: admit: %w", err)
	}
	if n > limit {
		return nil, fmt.Sprintf("%d bytes, over the limit of %d", n, limit), nil
	}
	data, err = a.repo.ReadBlob(h)
	if errors.Is(err, gitlog.ErrWrongType) {
		return nil, "not a blob", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("vault: admit: %w", err)
	}
	return data, "", nil
}

// badGitName returns why git itself would refuse name in a tree, or "".
func badGitName(name string) string {
	switch {
	case name == "":
		return "empty name"
	case name == "." || name == "..":
		return fmt.Sprintf("%q name", name)
	case strings.ContainsRune(name, '/'):
		return "name contains a slash"
	case strings.IndexByte(name, 0) >= 0:
		return "name contains NUL"
	case len(name) > maxSegmentLen:
		return "name over 255 bytes"
	case gitReserved(name) && name != ".gitattributes":
		return "reserved name in git"
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "name contains a control character"
		}
	}
	return ""
}

// refusedError names every refused entry.
func refusedError(op string, rs []Refusal) error {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString("\n  " + r.String())
	}
	return fmt.Errorf("vault: %s: nothing moved; %d entries refused:%s\nyour vault is unchanged and keeps working: %w",
		op, len(rs), b.String(), ErrRefused)
}
