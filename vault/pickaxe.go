package vault

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/internal/textdiff"
)

// pickaxe is the content filter of Log: -S's text or -G's expression.
type pickaxe struct {
	text  string
	re    *regexp.Regexp
	quick *regexp.Regexp // wholeText(re)
}

// wholeText returns an expression that matches a whole text wherever re
// matches one of its lines (and perhaps elsewhere), so that a text it does not
// match can be skipped without splitting it into lines; nil when there is none.
func wholeText(re *regexp.Regexp) *regexp.Regexp {
	s := re.String()
	if strings.Contains(s, `\A`) || strings.Contains(s, `\z`) {
		return nil
	}
	q, err := regexp.Compile("(?m:" + s + ")")
	if err != nil {
		return nil
	}
	return q
}

// pickaxeBatchSize is how many commits the pickaxe decrypts together: enough
// to keep every core busy, few enough that a short page stops soon.
var pickaxeBatchSize = 64

// pickaxeRun is a batch of commits the pickaxe looks at in the background.
type pickaxeRun struct {
	items []pickaxeItem
	done  chan struct{}
	hits  []bool
	err   error
}

// pickaxeItem is a commit waiting for the pickaxe, with the tree path its
// change is looked at under.
type pickaxeItem struct {
	rec   Record
	c     *gitlog.Commit
	scope string
}

// pickaxeBatch tells, for each item, whether its commit's change against its
// first parent, at or under the item's scope, adds or removes the pickaxe's
// text: for text, the number of its occurrences in a file differs before and
// after (git log -S); for re, an added or removed line matches (git log -G). A
// file moved without an edit is no change.
func (v *Vault) pickaxeBatch(ctx context.Context, items []pickaxeItem, px pickaxe) ([]bool, error) {
	var refs []fileRef
	firsts := make([]int, len(items)+1) // items[i]'s files are refs[firsts[i]:firsts[i+1]], in pairs
	for i, it := range items {
		firsts[i] = len(refs)
		var err error
		if refs, err = v.changedPairs(it.c, it.scope, refs); err != nil {
			return nil, err
		}
	}
	firsts[len(items)] = len(refs)
	texts, err := v.readAll(ctx, refs)
	if err != nil {
		return nil, err
	}
	hits := make([]bool, len(items))
	for i := range items {
		hits[i] = px.changes(texts[firsts[i]:firsts[i+1]])
	}
	return hits, nil
}

// changedPairs appends to refs, for each file commit c changed at or under
// tree path tp (of c's tree) against its first parent, its old and its new
// version (a zero hash where there is none). A file moved without an edit is
// left out. Across a rotation of a sealed vault's key every stored name
// changes: the files are then paired by their plaintext paths, so a file the
// rotation only re-encrypted is no change.
func (v *Vault) changedPairs(c *gitlog.Commit, tp string, refs []fileRef) ([]fileRef, error) {
	var parentTree gitlog.Hash
	if len(c.ParentHashes) > 0 {
		var err error
		if parentTree, err = v.repo.RootTree(c.ParentHashes[0]); err != nil {
			return nil, fmt.Errorf("vault: log: %w", err)
		}
	}
	tcs, err := v.changedTrees(parentTree, c.TreeHash, tp)
	if err != nil {
		return nil, fmt.Errorf("vault: log: %w", err)
	}
	renamedTo, isTarget := pairRenames(tcs)
	for i, tc := range tcs {
		if _, moved := renamedTo[i]; moved || isTarget[i] {
			continue
		}
		refs = append(refs, fileRef{tc.Path, tc.From}, fileRef{tc.Path, tc.To})
	}
	return refs, nil
}

// changedTrees is DiffTrees of a and b at or under b's tree path tp, by
// plaintext path (diffOpened) when a and b seal names under different keys.
func (v *Vault) changedTrees(a, b gitlog.Hash, tp string) ([]gitlog.TreeChange, error) {
	if a.IsZero() || !v.seals.seen() { // no key read: a plain vault
		return v.repo.DiffTrees(a, b, tp)
	}
	na, err := v.namesOfRoot(a)
	if err != nil {
		return nil, err
	}
	nb, err := v.namesOfRoot(b)
	if err != nil {
		return nil, err
	}
	if sameKey(na.key(), nb.key()) {
		return v.repo.DiffTrees(a, b, tp)
	}
	p := ""
	if tp != memDir {
		if p, err = nb.memPath(tp); err != nil {
			return nil, err
		}
	}
	return v.diffOpened(a, b, p)
}

// changes tells whether the pairs of old and new texts add or remove the
// pickaxe's text.
func (px pickaxe) changes(texts [][]byte) bool {
	for i := 0; i+1 < len(texts); i += 2 {
		a, b := texts[i], texts[i+1]
		if px.re == nil {
			if bytes.Count(a, []byte(px.text)) != bytes.Count(b, []byte(px.text)) {
				return true
			}
			continue
		}
		if px.quick != nil && !px.quick.Match(a) && !px.quick.Match(b) {
			continue
		}
		la, lb := textdiff.Lines(a), textdiff.Lines(b)
		for _, hk := range textdiff.Diff(la, lb) {
			for _, l := range la[hk.A0:hk.A1] {
				if px.re.MatchString(strings.TrimSuffix(l, "\n")) {
					return true
				}
			}
			for _, l := range lb[hk.B0:hk.B1] {
				if px.re.MatchString(strings.TrimSuffix(l, "\n")) {
					return true
				}
			}
		}
	}
	return false
}
