package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// wantContent decides what the content pane should show for the selection of
// the list it follows, with the pane's title and the lines drawn at once (a
// directory's summary, or a commit's details above its diff).
func (m *Model) wantContent() (contentReq, string, []string) {
	if m.source == paneHistory {
		return m.wantHistoryContent()
	}
	n := m.tree.selected()
	switch {
	case n == nil:
		return contentReq{show: showNone}, "", []string{"Nothing matches the filter."}
	case !n.dir:
		if m.snap == nil {
			return contentReq{show: showNone}, n.path, nil
		}
		return contentReq{show: showFile, path: n.path, rev: m.snap.Commit()}, n.path, nil
	}
	req := contentReq{show: showDir, path: n.path}
	if !n.listed {
		return req, n.path, []string{"Press enter or → to open this directory."}
	}
	files, dirs := n.counts()
	if n == m.tree.root && files+dirs == 0 {
		lines := []string{"No memories yet."}
		if d, ok := m.v.(interface{ Dir() string }); ok {
			lines[0] = "No memories yet in " + sanitize(d.Dir()) + "."
		}
		if m.justMade() {
			// A mistyped --vault or MEMVAULT_DIR makes a new vault: say so
			// here, not only once the interface is left.
			return req, n.path, append(lines, "",
				"This vault was made just now. If you meant another, quit (q) and name it with --vault DIR or MEMVAULT_DIR.")
		}
		return req, n.path, append(lines, "", "When an agent writes one, it shows up here as it happens.")
	}
	return req, n.path, []string{fmt.Sprintf("%s, %s", plural(files, "file"), plural(dirs, "directory"))}
}

// justMade tells whether the vault's only commit is the one that made it, a
// minute ago or less.
func (m *Model) justMade() bool {
	h := &m.hist
	return h.done && len(h.recs) == 1 && h.recs[0].Command == "init" && m.opts.Now().Sub(h.recs[0].Time) < time.Minute
}

func (m *Model) wantHistoryContent() (contentReq, string, []string) {
	r := m.hist.selected()
	if r == nil {
		return contentReq{show: showNone}, "history", []string{"No commit selected."}
	}
	if m.diffMarks && len(m.hist.marks) == 2 {
		from, to := m.hist.orderMarks()
		return contentReq{show: showBetween, rev: to, from: from},
			fmt.Sprintf("diff %s..%s", short(from), short(to)), nil
	}
	if m.asOf {
		p := m.selectedRecordFile()
		if p == "" {
			return contentReq{show: showNone}, "as it was", []string{"Select a file in the tree to see it as it was at this commit."}
		}
		p = m.fileThen(p) // its name then, before a rename since
		return contentReq{show: showAsOf, path: p, rev: r.Commit},
			fmt.Sprintf("%s as it was at %s", strings.TrimPrefix(p, vault.Root+"/"), short(r.Commit)), nil
	}
	return contentReq{show: showCommit, rev: r.Commit}, "commit " + short(r.Commit), m.hist.commitDetails(r)
}

// orderMarks returns the two marked commits, older first, by their place in
// the history.
func (h *historyModel) orderMarks() (from, to string) {
	a, b := h.marks[0], h.marks[1]
	ia, ib := -1, -1
	for i := range h.recs {
		switch h.recs[i].Commit {
		case a:
			ia = i
		case b:
			ib = i
		}
	}
	if ia < ib { // newer records come first
		return b, a
	}
	return a, b
}

// commitDetails are the lines above a commit's diff: everything its record
// says but the hash, which is in the title, in three lines so the diff keeps
// the room.
func (h *historyModel) commitDetails(r *vault.Record) []string {
	now := h.opts.Now()
	lines := []string{
		fmt.Sprintf("%s · %s · %s", sanitize(r.Command), absTime(r.Time, now), relTime(r.Time, now)),
	}
	if p := sanitize(r.Path); r.NewPath != "" {
		lines = append(lines, p+" -> "+sanitize(r.NewPath))
	} else if p != "" {
		lines = append(lines, p)
	}
	who := sanitize(r.Agent)
	if who == "" {
		who = sanitize(r.Author)
	}
	for _, s := range []string{r.Session, r.ToolUseID} {
		if s != "" {
			who += " · " + sanitize(s)
		}
	}
	lines = append(lines, who)
	if names := h.checkpoints[r.Commit]; len(names) > 0 {
		lines = append(lines, "checkpoint "+strings.Join(names, ", "))
	}
	return append(lines, "")
}

// contentCmd starts the read or diff req asks for. One read runs at a time:
// while one runs, the newest request waits in its place, and the running one,
// for a selection already left, is cancelled. Keys held down (j, pgdn) thus
// never pile up reads, each decrypting and diffing, that would keep the
// processors from the keys; the screen follows the key, not the backlog.
func (m *Model) contentCmd(req contentReq) tea.Cmd {
	c := &m.content
	if c.reading {
		c.queued = &req
		c.cancelRead()
		return nil
	}
	ctx, cancel := context.WithCancel(m.ctx)
	c.reading, c.cancelRead = true, cancel
	var cmd tea.Cmd
	switch req.show {
	case showFile:
		cmd = fileCmd(ctx, m.snap, req)
	case showAsOf:
		cmd = asOfCmd(ctx, m.v, req)
	case showCommit:
		cmd = showCmd(ctx, m.v, req, m.content.header)
	case showBetween:
		cmd = betweenCmd(ctx, m.v, req)
	default:
		c.reading = false
		cancel()
		return nil
	}
	return func() tea.Msg {
		defer cancel()
		return cmd()
	}
}

// onContent takes the result of a read and starts the one that waited, if
// it is still wanted.
func (m *Model) onContent(msg contentMsg) tea.Cmd {
	c := &m.content
	c.reading = false
	if errors.Is(msg.err, context.Canceled) {
		msg.req = contentReq{show: -1} // cancelled as stale: never shown
	}
	cmd := c.Update(msg)
	if q := c.queued; q != nil {
		c.queued = nil
		if *q == c.want {
			return tea.Batch(cmd, m.contentCmd(*q))
		}
	}
	return cmd
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "y") {
		return fmt.Sprintf("%d %sies", n, what[:len(what)-1])
	}
	return fmt.Sprintf("%d %ss", n, what)
}
