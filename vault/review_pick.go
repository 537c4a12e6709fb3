package vault

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/internal/textdiff"
)

// undoerOn is an undoer that stages changes on snap's tree, with content
// taken from the root tree src (linked as it is when src has snap's
// recipients and key).
func (v *Vault) undoerOn(snap *Snapshot, src gitlog.Hash) (*undoer, error) {
	u := &undoer{v: v, headRoot: snap.root, names: snap.names, srcRoot: src}
	var err error
	if u.srcNames, err = v.namesOfRoot(src); err != nil {
		return nil, err
	}
	if err := u.recipients(snap); err != nil {
		return nil, err
	}
	u.reuse = u.reuse && sameKey(u.names.key(), u.srcNames.key())
	return u, nil
}

// pick stages on u's tree what changed from root tree a to root tree b,
// file by file by plaintext path, merged by lines with what u's tree holds
// now, as git's cherry-pick does (a revert is a pick from a commit's tree to
// its parent's). u's content source must be b. Labels name u's tree (Ours),
// a (Base) and b (Theirs) in conflict markers.
//
// It returns the files where the two conflict, and for each what is in the
// way (as Revert's ConflictError says it). With markers, a conflict is
// staged as a sync's merge stages one: both versions of the lines between
// conflict markers; a file deleted on one side and changed on the other
// takes b's side. Without, nothing of a conflicting file is staged.
func (u *undoer) pick(ctx context.Context, a, b gitlog.Hash, labels textdiff.Labels, markers bool) (paths, where []string, err error) {
	tcs, err := u.v.diffOpened(a, b, "")
	if err != nil {
		return nil, nil, fmt.Errorf("vault: review: %w", err)
	}
	// Deletions first, so that a file replaced by a folder of the same name
	// is out of the way when the folder's files come.
	slices.SortStableFunc(tcs, func(x, y gitlog.TreeChange) int {
		return cmp.Compare(boolInt(!x.To.IsZero()), boolInt(!y.To.IsZero()))
	})
	for _, tc := range tcs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		p := memPath(tc.Path)
		w, err := u.pickFile(p, tc, labels, markers)
		if err != nil {
			return nil, nil, err
		}
		if w != "" {
			paths, where = append(paths, p), append(where, w)
		}
	}
	return paths, where, nil
}

// pickFile stages the change tc (From in a, To in b) of the memory file p on
// u's tree, and returns what is in the way ("" when nothing is).
func (u *undoer) pickFile(p string, tc gitlog.TreeChange, labels textdiff.Labels, markers bool) (string, error) {
	tp, err := u.names.treePath(p)
	if unsealable(err) {
		return "a name the sealed format cannot store", nil
	} else if err != nil {
		return "", err
	}
	now, blocked := u.fileAt(tp)
	if blocked && u.freedAbove(tp) {
		blocked = false
	}
	if blocked {
		return inTheWay, nil
	}
	take := func() error {
		f := tc
		f.Path = tp
		return u.takeTo(f)
	}
	switch {
	case now == tc.To:
		return "", nil // the same already
	case now == tc.From && u.reuse:
		return "", take()
	}
	base, ours, theirs, err := u.texts(p, tc.From, now, tc.To)
	if err != nil {
		return "", err
	}
	switch {
	case now.IsZero() && tc.To.IsZero():
		return "", nil // deleted on both sides
	case !now.IsZero() && !tc.To.IsZero() && bytes.Equal(ours, theirs):
		return "", nil
	case now.IsZero() && tc.From.IsZero(), !now.IsZero() && !tc.From.IsZero() && bytes.Equal(ours, base):
		return "", take()
	case now.IsZero():
		return "deleted since", u.ifMarkers(markers, take)
	case tc.To.IsZero():
		return "changed since", u.ifMarkers(markers, take)
	}
	merged, n := textdiff.Merge(base, ours, theirs, labels)
	if n > 0 {
		w := conflictLines(merged)
		if tc.From.IsZero() {
			w = "created since"
		}
		return w, u.ifMarkers(markers, func() error { return u.put(tp, merged) })
	}
	if bytes.Equal(merged, ours) {
		return "", nil
	}
	return "", u.put(tp, merged)
}

// ifMarkers runs stage when a conflict is to be staged.
func (u *undoer) ifMarkers(markers bool, stage func() error) error {
	if !markers {
		return nil
	}
	return stage()
}

// takeTo stages f's To side at f.Path: nothing there for none, its blob
// linked as it is when the source may be, or its plaintext encrypted anew.
func (u *undoer) takeTo(f gitlog.TreeChange) error { return u.setFile(f.Path, f.To) }

// freedAbove tells whether a file above tree path tp is deleted by what u
// staged, so that tp is free once the changes apply.
func (u *undoer) freedAbove(tp string) bool {
	for _, c := range u.changes {
		if c.Op == gitlog.Delete && strings.HasPrefix(tp, c.Path+"/") {
			if e, err := u.v.repo.Lookup(u.headRoot, c.Path); err == nil && !e.IsDir() {
				return true
			}
		}
	}
	return false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
