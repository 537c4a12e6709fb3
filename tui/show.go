package tui

import (
	"fmt"
	"strings"

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
		return req, n.path, []string{
			"No memories yet.",
			"",
			"When an agent writes one, it shows up here as it happens.",
		}
	}
	return req, n.path, []string{fmt.Sprintf("%s, %s", plural(files, "file"), plural(dirs, "directory"))}
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

// contentCmd starts the read or diff req asks for.
func (m *Model) contentCmd(req contentReq) tea.Cmd {
	switch req.show {
	case showFile:
		return fileCmd(m.ctx, m.snap, req)
	case showAsOf:
		return asOfCmd(m.ctx, m.v, req)
	case showCommit:
		return showCmd(m.ctx, m.v, req, m.content.header)
	case showBetween:
		return betweenCmd(m.ctx, m.v, req)
	}
	return nil
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
