package vault

import (
	"bufio"
	"context"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/memvault/memvault/gitlog"
)

// Log returns the vault's history, newest first: every commit, or with opts.Path
// those that changed what is at that path (a file, or anything under a
// directory). It compares the path's entry from commit to parent, never a whole
// tree diff.
func (v *Vault) Log(ctx context.Context, opts LogOptions) ([]Record, error) {
	tp := ""
	if opts.Path != "" {
		var err error
		if tp, err = treePath(opts.Path); err != nil {
			return nil, err
		}
	}
	head, err := v.repo.Head()
	if err != nil {
		return nil, err
	}
	var out []Record
	err = v.repo.Walk(head, func(c *object.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if tp != "" {
			changed, err := v.changedAt(c, tp)
			if err != nil || !changed {
				return err
			}
		}
		out = append(out, record(c))
		if opts.Limit > 0 && len(out) >= opts.Limit {
			return gitlog.ErrStop
		}
		return nil
	})
	return out, err
}

// changedAt tells whether commit c changed the entry at tree path tp against its
// first parent.
func (v *Vault) changedAt(c *object.Commit, tp string) (bool, error) {
	at := func(tree gitlog.Hash) gitlog.Hash {
		e, err := v.repo.Lookup(tree, tp)
		if err != nil {
			return gitlog.ZeroHash
		}
		return e.Hash
	}
	var parentTree gitlog.Hash
	if len(c.ParentHashes) > 0 {
		var err error
		if parentTree, err = v.repo.RootTree(c.ParentHashes[0]); err != nil {
			return false, err
		}
	}
	return at(c.TreeHash) != at(parentTree), nil
}

func record(c *object.Commit) Record {
	r := Record{
		Commit:  c.Hash.String(),
		Parents: make([]string, len(c.ParentHashes)),
		Time:    c.Author.When,
		Author:  c.Author.Name,
	}
	for i, p := range c.ParentHashes {
		r.Parents[i] = p.String()
	}
	sc := bufio.NewScanner(strings.NewReader(c.Message))
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			r.Subject, first = line, false
			continue
		}
		k, val, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch k {
		case trCommand:
			r.Command = val
		case trPath:
			r.Path = val
		case trNewPath:
			r.NewPath = val
		case trToolUseID:
			r.ToolUseID = val
		case trAgent:
			r.Agent = val
		case trSession:
			r.Session = val
		}
	}
	return r
}
