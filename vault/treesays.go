package vault

import (
	"strings"

	"github.com/memvault/memvault/gitlog"
)

// A commit's trailers (Memory-Command, Memory-Path, Memory-New-Path) are text
// whoever made the commit wrote; its tree is what it did. A collaborator's
// commit that changed secret.md could say "str_replace /memories/notes.md",
// and log and blame repeated it, even under log /memories/secret.md. So every
// record that log, show and blame hand out is checked against the tree: when
// the paths the trailers name are not what the tree changed against the
// commit's first parent, the record says so (Record.TreeDisagrees) and lists
// what the tree changed (Record.TreeChanged); the trailers are still shown,
// as what the commit claims. A merge changes what its parents brought
// together and is not checked; neither is a commit whose trailers name no
// path (a change of recipients, an expiry that lists what it deleted); a
// revert must change what it names, and may change more.

// maxTreeChanged bounds Record.TreeChanged: a commit may change thousands of
// files, and the point is made by the first few.
const maxTreeChanged = 20

// checkTrailers sets r.TreeDisagrees and r.TreeChanged for commit c.
func (v *Vault) checkTrailers(r *Record, c *gitlog.Commit) error {
	if r.Path == "" && r.NewPath == "" || len(c.ParentHashes) > 1 {
		return nil
	}
	var parentT gitlog.Hash
	if len(c.ParentHashes) == 1 {
		var err error
		if parentT, err = v.repo.RootTree(c.ParentHashes[0]); err != nil {
			return err
		}
	}
	d, err := v.repo.DiffTrees(parentT, c.TreeHash, memDir)
	if err != nil {
		return err
	}
	k, err := v.sealKeyAt(c.TreeHash)
	if err != nil {
		return err
	}
	ns := v.codec(k)
	var named []string
	for _, p := range []string{r.Path, r.NewPath} {
		if p == "" {
			continue
		}
		tp, err := ns.treePath(p)
		if err != nil {
			r.TreeDisagrees = true // a trailer that is no memory path names nothing the tree holds
			continue
		}
		named = append(named, tp)
	}
	covered := func(p string) bool {
		for _, q := range named {
			if p == q || strings.HasPrefix(p, q+"/") || q == memDir {
				return true
			}
		}
		return false
	}
	// A revert changes what the commit it reverts changed, which its path
	// trailer names only in part (the first file, or a rename's old name):
	// it must change what it names, and may change more.
	partial := r.Command == "revert" && r.Source != ""
	touched := false
	for _, ch := range d {
		if covered(ch.Path) {
			touched = true
		} else if !partial {
			r.TreeDisagrees = true
		}
	}
	if !touched {
		r.TreeDisagrees = true
	}
	if r.TreeDisagrees {
		r.TreeChanged = []string{}
		for _, ch := range d[:min(len(d), maxTreeChanged)] {
			p, err := ns.memPath(ch.Path)
			if err != nil {
				p = Root + "/?" // a name that does not open under the key
			}
			r.TreeChanged = append(r.TreeChanged, p)
		}
	}
	return nil
}

// checkRecords checks each of recs against its commit's tree.
func (v *Vault) checkRecords(recs []Record) error {
	for i := range recs {
		h, err := gitlog.ParseHash(recs[i].Commit)
		if err != nil {
			return err
		}
		c, err := v.repo.ReadCommit(h)
		if err != nil {
			return err
		}
		if err := v.checkTrailers(&recs[i], c); err != nil {
			return err
		}
	}
	return nil
}
