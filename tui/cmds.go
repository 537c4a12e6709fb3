package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// The messages commands answer with. Each carries what it was asked for, so
// Update can drop one that no longer matches what is shown.
type (
	// headMsg is the vault's state at its head; poll says whether it answers
	// the polling loop, which then goes on.
	headMsg struct {
		snap *vault.Snapshot
		poll bool
		seq  int // the number of the read
		err  error
	}
	// pollMsg is the tick of the polling loop.
	pollMsg struct{}
	// watchingMsg says the vault is being watched through ch.
	watchingMsg struct{ ch <-chan struct{} }
	// changedMsg says the head may have moved, as the watch ch tells.
	changedMsg struct{ ch <-chan struct{} }
	// watchEndedMsg says the watch ended, so polling alone goes on.
	watchEndedMsg struct{}
	// dirsMsg holds the entries of directories at commit.
	dirsMsg struct {
		commit string
		dirs   map[string][]vault.Entry
		err    error
	}
	// walkMsg holds every file at commit, for the tree filter.
	walkMsg struct {
		commit string
		files  []file
		err    error
	}
	// logMsg holds the records asked for by req.
	logMsg struct {
		req  logReq
		recs []vault.Record
		err  error
		// For a jump: how many records are newer than recs, whether recs end
		// with the oldest, and the commit jumped to.
		base int
		done bool
		at   string
	}
	// checkpointsMsg holds every checkpoint.
	checkpointsMsg struct {
		list []vault.Checkpoint
		seq  int // the number of the read
		err  error
	}
	// contentMsg holds what the content pane asked for with req.
	contentMsg struct {
		req    contentReq
		title  string
		kind   bodyKind
		header []string
		lines  []string
		err    error
	}
)

// logReq asks for history: a page after skip records of scope, or with fresh
// the newest page, to merge after the head moved.
type logReq struct {
	scope   string
	pickaxe string
	skip    int
	limit   int
	fresh   bool
	before  bool   // the page above the window: skip..skip+limit ends where it starts
	jump    string // a window of limit records around this revision (a hash or a checkpoint)
	oldest  bool   // a window of the limit oldest records
	seq     int    // the number of a jump, told apart from an earlier one to the same commit
}

func headCmd(ctx context.Context, v Vault, poll bool, seq int) tea.Cmd {
	return func() tea.Msg {
		snap, err := v.Snapshot(ctx)
		return headMsg{snap: snap, poll: poll, seq: seq, err: err}
	}
}

// watcher is what a vault offers when it can tell at once of commits made by
// others; *vault.Vault does (see vault.Vault.Watch).
type watcher interface {
	Watch(ctx context.Context) (<-chan struct{}, error)
}

// watchCmd starts watching v for commits, where v and the system allow it.
func watchCmd(ctx context.Context, v Vault) tea.Cmd {
	w, ok := v.(watcher)
	if !ok {
		return nil
	}
	return func() tea.Msg {
		ch, err := w.Watch(ctx)
		if err != nil {
			return nil // polling alone, as before
		}
		return watchingMsg{ch: ch}
	}
}

// nextChangeCmd waits for the watch ch to say the head may have moved.
func nextChangeCmd(ch <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		if _, ok := <-ch; !ok {
			return watchEndedMsg{}
		}
		return changedMsg{ch: ch}
	}
}

func pollCmd(d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg { return pollMsg{} })
}

// logCmd loads the records req asks for.
func logCmd(ctx context.Context, v Vault, req logReq) tea.Cmd {
	return func() tea.Msg {
		recs, err := v.Log(ctx, vault.LogOptions{Path: req.scope, Pickaxe: req.pickaxe, Skip: req.skip, Limit: req.limit})
		return logMsg{req: req, recs: recs, err: err}
	}
}

// jumpCmd loads the window req asks for: the oldest records of the scope, or
// those around the commit req.jump names. The oldest of the whole-vault
// history come from LogOldest, and the window around a commit of it from
// LogAround, which walk only the history's shape (its parents) and read the
// records of the window alone. In a file's history or a search the position
// of a commit is only known by walking the history down to it, so the walk
// reads every record up to the window; only the window is kept.
func jumpCmd(ctx context.Context, v Vault, req logReq) tea.Cmd {
	return func() tea.Msg {
		msg := logMsg{req: req}
		if req.oldest && req.scope == "" && req.pickaxe == "" {
			recs, total, err := v.LogOldest(ctx, req.limit)
			msg.recs, msg.err, msg.done = recs, err, true
			if len(recs) > 0 {
				msg.base, msg.at = total-len(recs), recs[len(recs)-1].Commit
			}
			return msg
		}
		target := ""
		if req.jump != "" {
			h, err := v.Resolve(ctx, req.jump)
			if err != nil {
				msg.err = err
				return msg
			}
			target = h
		}
		if target != "" && req.scope == "" && req.pickaxe == "" {
			recs, base, total, err := v.LogAround(ctx, target, req.limit)
			msg.recs, msg.err, msg.base = recs, err, base
			msg.done, msg.at = base+len(recs) == total, target
			return msg
		}
		all, err := v.Log(ctx, vault.LogOptions{Path: req.scope, Pickaxe: req.pickaxe})
		if err != nil {
			msg.err = err
			return msg
		}
		at := len(all) - 1
		if target != "" {
			at = -1
			for i := range all {
				if all[i].Commit == target {
					at = i
					break
				}
			}
			if at < 0 {
				msg.err = fmt.Errorf("commit %s is not in this history", short(target))
				return msg
			}
		}
		if at < 0 {
			msg.done = true
			return msg
		}
		start := clamp(at-req.limit/2, 0, max(len(all)-req.limit, 0))
		if req.oldest {
			start = max(len(all)-req.limit, 0)
		}
		end := min(start+req.limit, len(all))
		msg.recs = append([]vault.Record(nil), all[start:end]...)
		msg.base, msg.done, msg.at = start, end == len(all), all[at].Commit
		return msg
	}
}

// fileCmd reads the file req.path of snap, for showFile and showAsOf.
func fileCmd(ctx context.Context, snap *vault.Snapshot, req contentReq) tea.Cmd {
	return func() tea.Msg {
		b, err := snap.ReadFile(ctx, req.path)
		msg := contentMsg{req: req, title: req.path, kind: bodyText, err: err}
		if err == nil {
			msg.lines = splitLines(b)
			if len(msg.lines) == 0 {
				msg.kind, msg.lines = bodyInfo, []string{"(empty file)"}
			}
		}
		if req.show == showAsOf {
			msg.title = fmt.Sprintf("%s as it was at %s", strings.TrimPrefix(req.path, vault.Root+"/"), short(req.rev))
		}
		return msg
	}
}

// asOfCmd reads the file req.path as it was at commit req.rev.
func asOfCmd(ctx context.Context, v Vault, req contentReq) tea.Cmd {
	return func() tea.Msg {
		snap, err := v.SnapshotAt(ctx, req.rev)
		if err != nil {
			return contentMsg{req: req, err: err}
		}
		kind, err := snap.Stat(req.path)
		if err == nil && kind != vault.KindFile {
			what := "nothing"
			if kind == vault.KindDir {
				what = "a directory"
			}
			return contentMsg{req: req, title: fmt.Sprintf("%s at %s", req.path, short(req.rev)), kind: bodyInfo,
				lines: []string{fmt.Sprintf("At commit %s there was %s at %s.", short(req.rev), what, sanitize(req.path))}}
		}
		return fileCmd(ctx, snap, req)()
	}
}

// showCmd reads the commit req.rev with its decrypted diff; header is its
// details, drawn above the diff.
func showCmd(ctx context.Context, v Vault, req contentReq, header []string) tea.Cmd {
	return func() tea.Msg {
		ch, err := v.Show(ctx, req.rev)
		if err != nil {
			return contentMsg{req: req, err: err}
		}
		return contentMsg{req: req, title: "commit " + short(req.rev), kind: bodyDiff, header: header,
			lines: diffLines(ch.Files, "This commit changed no memory file.")}
	}
}

// betweenCmd reads the decrypted changes from req.from to req.rev.
func betweenCmd(ctx context.Context, v Vault, req contentReq) tea.Cmd {
	return func() tea.Msg {
		files, err := v.Diff(ctx, req.from, req.rev, "")
		if err != nil {
			return contentMsg{req: req, err: err}
		}
		header := []string{fmt.Sprintf("from %s to %s: %s", short(req.from), short(req.rev), plural(len(files), "file")), ""}
		return contentMsg{req: req, title: fmt.Sprintf("diff %s..%s", short(req.from), short(req.rev)),
			kind: bodyDiff, header: header, lines: diffLines(files, "No memory file differs.")}
	}
}

// diffLines lays out file changes as sanitized lines: a rename without edits
// gets a line of its own, every other change its unified diff.
func diffLines(files []vault.FileChange, none string) []string {
	if len(files) == 0 {
		return []string{none}
	}
	var out []string
	for i, f := range files {
		if i > 0 {
			out = append(out, "")
		}
		if f.Status == vault.Renamed && f.Diff == "" {
			out = append(out, sanitize(fmt.Sprintf("=== renamed %s -> %s", f.Path, f.NewPath)))
			continue
		}
		if f.NewPath != "" {
			out = append(out, sanitize(fmt.Sprintf("=== renamed %s -> %s", f.Path, f.NewPath)))
		}
		out = append(out, splitLines([]byte(f.Diff))...)
	}
	return out
}

func checkpointsCmd(ctx context.Context, v Vault, seq int) tea.Cmd {
	return func() tea.Msg {
		list, err := v.Checkpoints(ctx)
		return checkpointsMsg{list: list, seq: seq, err: err}
	}
}
