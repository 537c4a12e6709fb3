package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// maxPlanFiles is how many files a confirmation names before it counts the rest.
const maxPlanFiles = 8

// planCmd works out exactly what act would change, for its confirmation. A plan
// without lines means nothing would change; its title says so.
func (m *Model) planCmd(act action) tea.Cmd {
	ctx, v := m.ctx, m.v
	head := ""
	if m.snap != nil {
		head = m.snap.Commit()
	}
	var rec vault.Record
	if r := m.hist.selected(); r != nil {
		rec = *r
	}
	what := sanitize(strings.TrimPrefix(rec.Path, vault.Root+"/"))
	if rec.NewPath != "" {
		what += " → " + sanitize(strings.TrimPrefix(rec.NewPath, vault.Root+"/"))
	}
	when := fmt.Sprintf("%s (%s %s, %s)", short(act.rev), sanitize(rec.Command), what, absTime(rec.Time, m.opts.Now()))
	return func() tea.Msg {
		msg := planMsg{act: act}
		switch act.kind {
		case actRestore:
			msg.err = planRestore(ctx, v, head, when, &msg)
		case actRevert:
			msg.err = planRevert(ctx, v, when, &msg)
		case actRollback:
			msg.err = planRollback(ctx, v, head, when, &msg)
		}
		return msg
	}
}

func planRestore(ctx context.Context, v Vault, head, when string, msg *planMsg) error {
	p := msg.act.path
	if p == "" {
		return errors.New("restore: select a file in the tree first")
	}
	then, err := v.SnapshotAt(ctx, msg.act.rev)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if from := msg.act.from; from != "" && from != p {
		return planRestoreRenamed(ctx, v, then, head, when, msg)
	}
	if k, err := then.Stat(p); err != nil || k != vault.KindFile {
		return fmt.Errorf("restore: there was no file %s at %s", sanitize(p), short(msg.act.rev))
	}
	files, err := v.Diff(ctx, head, msg.act.rev, p)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if len(files) == 0 {
		msg.title = fmt.Sprintf("%s is already as it was at %s: nothing to restore", sanitize(p), short(msg.act.rev))
		return nil
	}
	msg.title = "Restore " + sanitize(p)
	msg.lines = []string{
		"Make " + sanitize(p) + " what it was at " + when + ":",
		describe(files[0]) + ".",
		"",
		"This is a new commit; the current version stays in the history.",
	}
	return nil
}

// planRestoreRenamed plans the restore of a file to what it was at a commit
// from before it was renamed: its text then, under its name then, becomes
// its text now.
func planRestoreRenamed(ctx context.Context, v Vault, then *vault.Snapshot, head, when string, msg *planMsg) error {
	p, from := msg.act.path, msg.act.from
	old, err := then.ReadFile(ctx, from)
	if errors.Is(err, vault.ErrNotExist) || errors.Is(err, vault.ErrIsDir) {
		return fmt.Errorf("restore: there was no file %s at %s", sanitize(from), short(msg.act.rev))
	}
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	now, err := v.SnapshotAt(ctx, head)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	cur, err := now.ReadFile(ctx, p)
	if err != nil && !errors.Is(err, vault.ErrNotExist) {
		return fmt.Errorf("restore: %w", err)
	}
	if string(cur) == string(old) {
		msg.title = fmt.Sprintf("%s is already as %s was at %s: nothing to restore", sanitize(p), sanitize(from), short(msg.act.rev))
		return nil
	}
	add, del := lineCounts(string(cur), string(old))
	msg.title = "Restore " + sanitize(p)
	msg.lines = []string{
		"Make " + sanitize(p) + " what it was at " + when + ",",
		"when it was " + sanitize(from) + fmt.Sprintf(": change %s (+%d −%d lines).", sanitize(p), add, del),
		"",
		"This is a new commit; the current version stays in the history.",
	}
	return nil
}

// lineCounts counts the lines to add to a and to delete from it to make b,
// line for line as a multiset: a diff's counts, short of moved lines.
func lineCounts(a, b string) (add, del int) {
	n := map[string]int{}
	for _, l := range splitLines([]byte(a)) {
		n[l]++
	}
	for _, l := range splitLines([]byte(b)) {
		if n[l] > 0 {
			n[l]--
		} else {
			add++
		}
	}
	for _, k := range n {
		del += k
	}
	return add, del
}

func planRevert(ctx context.Context, v Vault, when string, msg *planMsg) error {
	ch, err := v.Show(ctx, msg.act.rev)
	if err != nil {
		return fmt.Errorf("revert: %w", err)
	}
	if len(ch.Files) == 0 {
		msg.title = fmt.Sprintf("%s changed no memory file: nothing to revert", short(msg.act.rev))
		return nil
	}
	msg.title = "Revert commit " + short(msg.act.rev)
	msg.lines = append([]string{"Undo what " + when + " did to " + plural(len(ch.Files), "file") + ":"},
		fileLines(ch.Files, true)...)
	msg.lines = append(msg.lines, "",
		"Later edits elsewhere in these files are kept; if one touches the",
		"same lines, nothing is changed. This is a new commit.")
	return nil
}

func planRollback(ctx context.Context, v Vault, head, when string, msg *planMsg) error {
	files, err := v.Diff(ctx, head, msg.act.rev, "")
	if err != nil {
		return fmt.Errorf("roll back: %w", err)
	}
	if len(files) == 0 {
		msg.title = fmt.Sprintf("/memories is already as it was at %s: nothing to roll back", short(msg.act.rev))
		return nil
	}
	msg.title = "Roll back the whole vault to " + short(msg.act.rev)
	msg.lines = append([]string{"Make all of /memories what it was at " + when + ";",
		plural(len(files), "file") + " change:"}, fileLines(files, false)...)
	msg.lines = append(msg.lines, "",
		"This is a new commit: the commits since stay in the history,",
		"and this one can be undone like any other.")
	return nil
}

// fileLines lists what happens to each file, up to maxPlanFiles. With undo the
// files are a commit's changes, which the action reverses.
func fileLines(files []vault.FileChange, undo bool) []string {
	var out []string
	for i, f := range files {
		if i == maxPlanFiles {
			out = append(out, fmt.Sprintf("  …and %d more", len(files)-i))
			break
		}
		if undo {
			f = reverse(f)
		}
		out = append(out, "  "+describe(f))
	}
	if len(files) > maxPlanFiles {
		// The list is cut: say what happens to all of them, so a rollback
		// that deletes thousands of files does not hide it behind a few.
		out = append(out, "  in all: "+tally(files, undo))
	}
	return out
}

// tally counts what happens to files, by kind: "3 deleted, 5190 changed".
func tally(files []vault.FileChange, undo bool) string {
	n := map[vault.FileStatus]int{}
	for _, f := range files {
		if undo {
			f = reverse(f)
		}
		n[f.Status]++
	}
	var parts []string
	for _, k := range []struct {
		st   vault.FileStatus
		word string
	}{{vault.Deleted, "deleted"}, {vault.Modified, "changed"}, {vault.Added, "re-created"}, {vault.Renamed, "moved back"}} {
		if n[k.st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[k.st], k.word))
		}
	}
	return strings.Join(parts, ", ")
}

// reverse turns a commit's change of a file into the change that undoes it.
func reverse(f vault.FileChange) vault.FileChange {
	switch f.Status {
	case vault.Added:
		f.Status = vault.Deleted
	case vault.Deleted:
		f.Status = vault.Added
	case vault.Renamed:
		f.Path, f.NewPath = f.NewPath, f.Path
	}
	var b strings.Builder
	for _, l := range strings.Split(f.Diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			l = "-" + l[1:]
		case strings.HasPrefix(l, "-"):
			l = "+" + l[1:]
		}
		b.WriteString(l + "\n")
	}
	f.Diff = b.String()
	return f
}

// describe says in words what a change does to its file. Every change it
// describes takes a file back to what it was, so a rename's file goes back
// from where it is (Path) to where it was (NewPath).
func describe(f vault.FileChange) string {
	p := sanitize(f.Path)
	add, del := diffCounts(f.Diff)
	switch f.Status {
	case vault.Added:
		return fmt.Sprintf("re-create %s (%s)", p, plural(add, "line"))
	case vault.Deleted:
		return fmt.Sprintf("delete %s (%s)", p, plural(del, "line"))
	case vault.Renamed:
		s := fmt.Sprintf("move %s back to %s", p, sanitize(f.NewPath))
		if add+del > 0 {
			s += fmt.Sprintf(" (+%d −%d lines)", add, del)
		}
		return s
	}
	return fmt.Sprintf("change %s (+%d −%d lines)", p, add, del)
}

// diffCounts counts the added and deleted lines of a unified diff.
func diffCounts(diff string) (add, del int) {
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return add, del
}

// actionCmd carries out act, a confirmed undo or a new checkpoint, as the
// running write.
func (m *Model) actionCmd(act action) tea.Cmd {
	v := m.v
	meta := vault.Meta{Agent: m.opts.Agent}
	var what string
	switch act.kind {
	case actRestore:
		what = fmt.Sprintf("restore %s to %s", act.path, short(act.rev))
	case actRevert:
		what = "revert " + short(act.rev)
	case actRollback:
		what = "roll back to " + short(act.rev)
	case actUndo:
		what = "undo the " + act.what
	case actRedo:
		what = "redo the " + act.what
	case actCheckpoint:
		what = fmt.Sprintf("checkpoint %q at %s", act.name, short(act.rev))
	case actDelete:
		return m.startWrite("delete "+sanitize(act.path), changeRun(v, meta, act))
	case actMove:
		return m.startWrite("move "+sanitize(act.path), changeRun(v, meta, act))
	}
	return m.startWrite(sanitize(what), func(ctx context.Context, locked func()) tea.Msg {
		var res *vault.UndoResult
		err := waitLock(ctx, v, locked)
		if err == nil {
			switch act.kind {
			case actRestore:
				if act.from != "" && act.from != act.path {
					res, err = restoreRenamed(ctx, v, meta, act)
					break
				}
				res, err = v.Restore(ctx, meta, act.path, act.rev)
			case actRevert, actUndo, actRedo:
				res, err = v.Revert(ctx, meta, act.rev)
			case actRollback:
				res, err = v.Rollback(ctx, meta, act.rev)
			case actCheckpoint:
				_, err = v.Checkpoint(ctx, act.name, act.rev, "")
				if err == nil {
					return actionMsg{act: act, done: what + " made"}
				}
			}
		}
		var conflict *vault.ConflictError
		switch {
		case errors.Is(err, context.Canceled):
			return actionMsg{act: act, done: what + ": cancelled, nothing changed"}
		case errors.As(err, &conflict):
			return actionMsg{act: act, done: what, err: fmt.Errorf("later changes touch the same lines of %s; nothing changed",
				strings.Join(conflict.Paths, ", "))}
		case err != nil:
			return actionMsg{act: act, done: what, err: err}
		case res.Commit == "":
			return actionMsg{act: act, done: what + ": already so, nothing changed"}
		}
		done := fmt.Sprintf("%s: done as commit %s", what, short(res.Commit))
		if act.kind == actUndo {
			done += " · ctrl+z redoes"
		}
		return actionMsg{act: act, done: done, commit: res.Commit}
	})
}

// restoreRenamed makes file act.path what it was at act.rev under its name
// then, act.from, as one commit that says it restores from that commit. The
// vault's Restore takes a file back only under the name it has, so this is a
// write of the text then.
func restoreRenamed(ctx context.Context, v Vault, meta vault.Meta, act action) (*vault.UndoResult, error) {
	ev, ok := v.(editVault)
	if !ok {
		return nil, errors.New("this vault cannot be written here")
	}
	then, err := v.SnapshotAt(ctx, act.rev)
	if err != nil {
		return nil, err
	}
	old, err := then.ReadFile(ctx, act.from)
	if err != nil {
		return nil, err
	}
	defer clear(old)
	meta.Command, meta.Source = "restore", act.rev
	c, err := ev.UpdateCommit(ctx, meta, func(tx *vault.Tx) error {
		cur, err := tx.ReadFile(ctx, act.path)
		if err == nil && string(cur) == string(old) {
			return nil
		}
		return tx.WriteFile(ctx, act.path, old)
	})
	if err != nil {
		return nil, err
	}
	return &vault.UndoResult{Commit: c, Source: act.rev}, nil
}
