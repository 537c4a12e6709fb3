package vault

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/escape"
	"github.com/memvault/memvault/vault/internal/textdiff"
)

// FileStatus says how a memory file changed.
type FileStatus string

// The ways a file changes between two revisions.
const (
	Added    FileStatus = "added"
	Modified FileStatus = "modified"
	Deleted  FileStatus = "deleted"
	Renamed  FileStatus = "renamed" // moved with its content unchanged
)

// FileChange is one memory file that differs between two revisions.
type FileChange struct {
	Path    string     `json:"path"`     // the file's memory path (before, for a rename)
	NewPath string     `json:"new_path"` // where a renamed file went; "" otherwise
	Status  FileStatus `json:"status"`
	// Diff is the change of the file's plaintext as a unified diff, headed
	// "--- <path>" and "+++ <path>" ("/dev/null" for a missing side; a path
	// holding a control or bidi character or a '"' is quoted in Go syntax, as
	// git quotes unusual codec); "" for a
	// rename without edits, and where a result lists files without diffs.
	Diff string `json:"diff"`
	// Similarity is, for a rename with edits, how much of the file stayed,
	// in percent, as git's "similarity index" says; 0 otherwise.
	Similarity int `json:"similarity,omitempty"`
}

// Change is a commit with the changes it made to the memory files.
type Change struct {
	Record
	Files []FileChange `json:"files"`
}

// diffContext is the number of unchanged lines shown around each change.
const diffContext = 3

// Show returns the commit rev names (see Resolve) with a decrypted diff of each
// memory file it changed against its first parent. Files whose ciphertext changed
// but not their plaintext (a re-encryption) are left out. The error wraps
// ErrUnknownRevision for a bad rev, and ErrNoIdentity or ErrDecrypt when the
// files cannot be decrypted.
func (v *Vault) Show(ctx context.Context, rev string) (*Change, error) {
	h, err := v.resolve(rev)
	if err != nil {
		return nil, err
	}
	c, err := v.repo.ReadCommit(h)
	if err != nil {
		return nil, fmt.Errorf("vault: show: %w", err)
	}
	var parentTree gitlog.Hash
	if len(c.ParentHashes) > 0 {
		if parentTree, err = v.repo.RootTree(c.ParentHashes[0]); err != nil {
			return nil, fmt.Errorf("vault: show: %w", err)
		}
	}
	files, err := v.fileChanges(ctx, parentTree, c.TreeHash, "", true)
	if err != nil {
		return nil, err
	}
	rec, err := v.record(c)
	if err != nil {
		return nil, fmt.Errorf("vault: show: %w", err)
	}
	if err := v.checkTrailers(&rec, c); err != nil {
		return nil, fmt.Errorf("vault: show: %w", err)
	}
	return &Change{Record: rec, Files: files}, nil
}

// Diff returns the decrypted changes of the memory files from revision fromRev
// to revision toRev, of every file, or with path those at that memory path or
// under it. Errors are Show's, and a *PathError for an invalid path.
func (v *Vault) Diff(ctx context.Context, fromRev, toRev, path string) ([]FileChange, error) {
	if path != "" {
		if _, err := CleanPath(path); err != nil {
			return nil, err
		}
	}
	var trees [2]gitlog.Hash
	for i, rev := range []string{fromRev, toRev} {
		h, err := v.resolve(rev)
		if err != nil {
			return nil, err
		}
		if trees[i], err = v.repo.RootTree(h); err != nil {
			return nil, fmt.Errorf("vault: diff: %w", err)
		}
	}
	return v.fileChanges(ctx, trees[0], trees[1], path, true)
}

// fileChanges lists the memory files that differ between root trees a and b at
// or under memory path p ("": everywhere), by their plaintext paths in either
// format (see diffOpened), pairing a deleted and an added file with the same
// ciphertext as a rename. With withDiff it decrypts both sides of each change to
// render its diff, and leaves out files whose plaintext did not change.
func (v *Vault) fileChanges(ctx context.Context, a, b gitlog.Hash, p string, withDiff bool) ([]FileChange, error) {
	tcs, err := v.diffOpened(a, b, p)
	if err != nil {
		return nil, fmt.Errorf("vault: diff: %w", err)
	}
	renamedTo, isTarget := pairRenames(tcs)
	var similar map[int]similarPair
	if withDiff {
		if similar, err = v.pairSimilar(ctx, tcs, renamedTo, isTarget); err != nil {
			return nil, err
		}
	}
	var out []FileChange
	for i, tc := range tcs {
		if isTarget[i] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fc := FileChange{Path: memPath(tc.Path), Status: Modified}
		switch {
		case tc.From.IsZero():
			fc.Status = Added
		case tc.To.IsZero():
			fc.Status = Deleted
			if j, ok := renamedTo[i]; ok {
				fc.Status, fc.NewPath = Renamed, memPath(tcs[j].Path)
				out = append(out, fc)
				continue
			}
			if sp, ok := similar[i]; ok {
				fc.Status, fc.NewPath, fc.Similarity = Renamed, memPath(tcs[sp.to].Path), sp.score
				fc.Diff = textdiff.Unified(escape.Name(fc.Path), escape.Name(fc.NewPath), sp.old, sp.new, diffContext)
				out = append(out, fc)
				continue
			}
		}
		if withDiff {
			keep, err := v.renderDiff(&fc, tc, [2]gitlog.Hash{a, b})
			if err != nil {
				return nil, err
			}
			if !keep {
				continue
			}
		}
		out = append(out, fc)
	}
	return out, nil
}

// similarPair is a deleted file paired with an added one whose content is
// mostly the same: the addition's index, the score and both plaintexts.
type similarPair struct {
	to       int
	score    int
	old, new []byte
}

// Limits of the pairing of renamed and edited files, as git's: at least this
// much of the content kept (git's -M default), and at most this many
// deletion-addition pairs compared (git's diff.renameLimit is of files).
const (
	minSimilarity  = 50
	maxSimilarScan = 10000
)

// pairSimilar pairs the deleted and added files of tcs that pairRenames left
// alone when one's plaintext is at least minSimilarity percent the other's,
// as git pairs renames: the best pairs first, each file in one pair at most.
// It marks the additions taken in isTarget and returns the pairs by the
// deletion's index.
func (v *Vault) pairSimilar(ctx context.Context, tcs []gitlog.TreeChange, renamedTo map[int]int, isTarget map[int]bool) (map[int]similarPair, error) {
	var dels, adds []int
	for i, tc := range tcs {
		switch {
		case tc.To.IsZero() && !tc.From.IsZero():
			if _, ok := renamedTo[i]; !ok {
				dels = append(dels, i)
			}
		case tc.From.IsZero() && !tc.To.IsZero() && !isTarget[i]:
			adds = append(adds, i)
		}
	}
	if len(dels) == 0 || len(adds) == 0 || len(dels)*len(adds) > maxSimilarScan {
		return nil, nil
	}
	text := map[int][]byte{}
	read := func(i int, h gitlog.Hash) ([]byte, error) {
		if b, ok := text[i]; ok {
			return b, nil
		}
		b, err := v.readBlob(memPath(tcs[i].Path), h)
		text[i] = b
		return b, err
	}
	var cands []similarPair
	from := map[int]int{} // candidate index -> deletion
	for _, d := range dels {
		a, err := read(d, tcs[d].From)
		if err != nil {
			return nil, err
		}
		for _, ad := range adds {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			b, err := read(ad, tcs[ad].To)
			if err != nil {
				return nil, err
			}
			if sc := similarity(a, b); sc >= minSimilarity {
				from[len(cands)] = d
				cands = append(cands, similarPair{to: ad, score: sc, old: a, new: b})
			}
		}
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return cands[order[x]].score > cands[order[y]].score })
	out := map[int]similarPair{}
	for _, c := range order {
		d, sp := from[c], cands[c]
		if _, taken := out[d]; taken || isTarget[sp.to] {
			continue
		}
		out[d], isTarget[sp.to] = sp, true
	}
	return out, nil
}

// similarity is how much of a and b is the same, in percent: the bytes of
// the lines they share against the larger of the two, as git's score is.
func similarity(a, b []byte) int {
	la, lb := textdiff.Lines(a), textdiff.Lines(b)
	kept := len(a)
	for _, h := range textdiff.Diff(la, lb) {
		for _, l := range la[h.A0:h.A1] {
			kept -= len(l)
		}
	}
	size := max(len(a), len(b))
	if size == 0 {
		return 100
	}
	return kept * 100 / size
}

// pairRenames pairs each deleted file in tcs with an added file of the same
// ciphertext, whichever sorts first: renamedTo maps the deletion's index to the
// addition's, and isTarget marks the additions taken.
func pairRenames(tcs []gitlog.TreeChange) (renamedTo map[int]int, isTarget map[int]bool) {
	added := map[gitlog.Hash][]int{} // index in tcs of each added file, by blob
	for i, tc := range tcs {
		if tc.From.IsZero() {
			added[tc.To] = append(added[tc.To], i)
		}
	}
	renamedTo, isTarget = map[int]int{}, map[int]bool{}
	for i, tc := range tcs {
		if !tc.To.IsZero() || tc.From.IsZero() {
			continue
		}
		if js := added[tc.From]; len(js) > 0 {
			renamedTo[i], isTarget[js[0]] = js[0], true
			added[tc.From] = js[1:]
		}
	}
	return renamedTo, isTarget
}

// renderDiff fills in fc's Diff, reading each side in its root tree; keep is
// false when the plaintexts are equal.
func (v *Vault) renderDiff(fc *FileChange, tc gitlog.TreeChange, roots [2]gitlog.Hash) (keep bool, err error) {
	var texts [2][]byte
	names := [2]string{"/dev/null", "/dev/null"}
	for i, h := range []gitlog.Hash{tc.From, tc.To} {
		if h.IsZero() {
			continue
		}
		names[i] = escape.Name(fc.Path) // quoted, as git does, when it is unusual
		if texts[i], err = v.readBlobAt(fc.Path, h, roots[i]); err != nil {
			return false, err
		}
	}
	if fc.Status == Modified && bytes.Equal(texts[0], texts[1]) {
		return false, nil
	}
	fc.Diff = textdiff.Unified(names[0], names[1], texts[0], texts[1], diffContext)
	if fc.Diff == "" { // an empty file added or deleted
		fc.Diff = fmt.Sprintf("--- %s\n+++ %s\n", names[0], names[1])
	}
	return true, nil
}

// memPath maps a tree path under memories/ back to its memory path.
func memPath(tp string) string { return "/" + tp }
