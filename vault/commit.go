package vault

import (
	"context"
	"fmt"
	"strings"
	"time"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

type ageRecipient = age.Recipient

// commit writes changes on top of parent with the message and trailers of the
// design: subject "<command> <path>" ("rename <old> -> <new>"), then trailers,
// under the writer lock w.
func (v *Vault) commit(w *gitlog.Writer, parent gitlog.Hash, path, newPath string, changes []gitlog.Change, meta Meta) error {
	return v.commitMessage(w, parent, path, newPath, changes, meta, nil)
}

// commitMessage is commit, with msg (when not nil) shaping the message.
func (v *Vault) commitMessage(w *gitlog.Writer, parent gitlog.Hash, path, newPath string, changes []gitlog.Change, meta Meta, msg messageFunc) error {
	return v.commitStaged(w, parent, path, newPath, changes, len(changes), meta, msg)
}

// commitStaged is commitMessage for changes that make ops operations: the
// subject counts operations, not the tree edits each took (a sealed folder's
// move is one operation, and a deletion and a link per file).
func (v *Vault) commitStaged(w *gitlog.Writer, parent gitlog.Hash, path, newPath string, changes []gitlog.Change, ops int, meta Meta, msg messageFunc) error {
	_, err := v.commitStagedTo(w, onMain, parent, path, newPath, changes, ops, meta, msg)
	return err
}

// commitStagedTo is commitStaged for a commit that moves to's ref; it returns
// the commit.
func (v *Vault) commitStagedTo(w *gitlog.Writer, to target, parent gitlog.Hash, path, newPath string, changes []gitlog.Change, ops int, meta Meta, msg messageFunc) (gitlog.Hash, error) {
	subject := meta.Command
	if path != "" {
		subject += " " + path
	}
	if newPath != "" {
		subject += " -> " + newPath
	}
	if ops > 1 && path != "" {
		subject += fmt.Sprintf(" (+%d more)", ops-1)
	}
	trailers := metaTrailers(meta, path, newPath)
	if msg != nil {
		msg(&subject, &trailers)
	}
	return v.writeCommitTo(w, to, parent, subject, trailers, changes, meta.Agent, "agent", meta.When)
}

// writeCommit commits changes on top of parent with the subject and the
// trailers that have a value, authored by agent (orElse when there is none),
// under the writer lock w.
func (v *Vault) writeCommit(w *gitlog.Writer, parent gitlog.Hash, subject string, trailers []trailer, changes []gitlog.Change, agent, orElse string) (gitlog.Hash, error) {
	return v.writeCommitAt(w, parent, subject, trailers, changes, agent, orElse, time.Time{})
}

// writeCommitAt is writeCommit with the author's time made (when not zero): a
// change replayed from elsewhere keeps the time it was made there.
func (v *Vault) writeCommitAt(w *gitlog.Writer, parent gitlog.Hash, subject string, trailers []trailer, changes []gitlog.Change, agent, orElse string, made time.Time) (gitlog.Hash, error) {
	return v.writeCommitTo(w, onMain, parent, subject, trailers, changes, agent, orElse, made)
}

// target says which ref a commit moves: main (onMain, the zero value), or
// the review line (see review.go) from the value it holds, with a second
// parent when the commit merges one.
type target struct {
	ref   string
	from  gitlog.Hash
	merge gitlog.Hash
}

var onMain = target{}

// writeCommitTo is writeCommitAt for a commit that moves to's ref.
func (v *Vault) writeCommitTo(w *gitlog.Writer, to target, parent gitlog.Hash, subject string, trailers []trailer, changes []gitlog.Change, agent, orElse string, made time.Time) (gitlog.Hash, error) {
	now := v.opts.Now()
	authored := now
	if !made.IsZero() {
		authored = made
	}
	if agent == "" {
		agent = orElse
	}
	sign, err := v.signerFor(parent, to.merge)
	if err != nil {
		return gitlog.ZeroHash, err
	}
	message := formatMessage(subject, trailers)
	author := gitlog.Signature{Name: signatureName(agent), Email: "agent@memvault", When: authored}
	// A sealed vault's host sees one constant subject and author; the real
	// ones travel sealed in the message's one trailer.
	k, err := v.commitKey(parent, changes)
	if err != nil {
		return gitlog.ZeroHash, err
	} else if k != nil {
		if message, err = k.SealMessage(seal.Message{Text: message, AuthorName: author.Name, AuthorEmail: author.Email}); err != nil {
			return gitlog.ZeroHash, fmt.Errorf("vault: commit: %w", err)
		}
		author.Name, author.Email = seal.Author, seal.AuthorEmail
	}
	info := gitlog.CommitInfo{
		Message:   message,
		Author:    author,
		Committer: gitlog.Signature{Name: "memvault", Email: "memvault@localhost", When: now},
		Sign:      sign,
		Ref:       to.ref,
		From:      to.from,
	}
	if !to.merge.IsZero() {
		info.Parents = []gitlog.Hash{parent, to.merge}
	}
	h, err := w.Commit(context.Background(), parent, changes, info)
	if err != nil {
		return h, fmt.Errorf("vault: commit %s: %w", subject, err)
	}
	v.inheritSealKey(h, k, changes)
	return h, nil
}

// signatureName keeps a caller's name from forging the author line: git ends the
// name at '<', so "x <a@b> 1 +0000" would set the email and time.
func signatureName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '<' || r == '>' {
			return -1
		}
		return r
	}, oneLine(s))
}
