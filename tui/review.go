package tui

// The review pane: the agent's changes that wait on the vault's review line,
// listed on the left with the chosen one's diff beside it, as lazygit lists
// files beside their hunks. P opens it; space approves the chosen change and
// a approves them all, d rejects the chosen one and D them all (the two "all"
// keys ask first); tab moves between the list and the diff; esc or P closes
// it. An approval is a commit on main, which z takes back like any other.

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/memvault/memvault/vault"
)

// reviewVault is what the review pane needs of the vault beyond Vault.
// *vault.Vault implements it.
type reviewVault interface {
	Review(ctx context.Context, opts vault.ReviewOptions) ([]vault.PendingChange, error)
	Approve(ctx context.Context, ids []string) (vault.ReviewResult, error)
	Reject(ctx context.Context, ids []string) (vault.ReviewResult, error)
}

// reviewModel is the review pane's list, and the scroll of the diff beside it.
type reviewModel struct {
	*common
	frame
	items  []vault.PendingChange
	marks  [][]string // each item's marks, as Options.Marks words them
	loaded bool
	err    error
	seq    int // the list read asked for last; an older result is dropped

	cursor, offset int
	diffOff        int  // the first row of the diff in sight
	diffFocus      bool // the keys scroll the diff rather than move in the list
	diffH          int  // rows of the diff in sight, for a page
	confirm        string
	busy           bool // an approval or a rejection runs
}

type (
	// reviewListMsg is the list of pending changes read for seq.
	reviewListMsg struct {
		seq   int
		items []vault.PendingChange
		marks [][]string
		err   error
	}
	// reviewDoneMsg is the outcome of an approval or a rejection.
	reviewDoneMsg struct {
		verb string
		ids  []string
		res  vault.ReviewResult
		err  error
	}
)

var _ component = (*reviewModel)(nil)

// openReview opens the pane and reads the list.
func (m *Model) openReview() tea.Cmd {
	if _, ok := m.v.(reviewVault); !ok {
		m.setStatus("this vault has no review line here", true)
		return nil
	}
	m.mode = modeReview
	m.review.common = &m.common
	m.review.cursor, m.review.offset, m.review.diffOff, m.review.diffFocus, m.review.confirm = 0, 0, 0, false, ""
	return m.review.load()
}

// load reads the pending changes, and their marks, beside the interface.
func (r *reviewModel) load() tea.Cmd {
	rv, ok := r.v.(reviewVault)
	if !ok {
		return nil
	}
	r.seq++
	seq, ctx, markOf := r.seq, r.ctx, r.opts.Marks
	return func() tea.Msg {
		items, err := rv.Review(ctx, vault.ReviewOptions{})
		var marks [][]string
		if err == nil && markOf != nil {
			marks = make([][]string, len(items))
			for i, p := range items {
				marks[i] = markOf(p)
			}
		}
		return reviewListMsg{seq: seq, items: items, marks: marks, err: err}
	}
}

// Update implements component: the list's results and keys.
func (r *reviewModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case reviewListMsg:
		if msg.seq != r.seq {
			return nil
		}
		sel := r.selectedID()
		r.items, r.marks, r.err, r.loaded = msg.items, msg.marks, msg.err, true
		r.cursor = clamp(r.cursor, 0, max(len(r.items)-1, 0))
		for i, p := range r.items { // the same change stays chosen
			if p.Commit == sel {
				r.cursor = i
			}
		}
	}
	return nil
}

// selectedID is the chosen change's ID, or "".
func (r *reviewModel) selectedID() string {
	if r.cursor < 0 || r.cursor >= len(r.items) {
		return ""
	}
	return r.items[r.cursor].Commit
}

// reviewKey handles a key while the pane is open.
func (m *Model) reviewKey(msg tea.KeyPressMsg) tea.Cmd {
	r, k := &m.review, &m.keys
	if r.confirm != "" {
		verb := r.confirm
		r.confirm = ""
		if key.Matches(msg, k.Confirm) {
			return m.settleReview(verb, []string{vault.ReviewAll})
		}
		m.setStatus(verb+" of every change cancelled", false)
		return nil
	}
	switch {
	case msg.String() == "ctrl+c":
		return tea.Quit
	case key.Matches(msg, k.Cancel, k.Review, k.Quit):
		m.mode = modeBrowse
		return m.follow(true)
	case key.Matches(msg, k.NextPane, k.PrevPane):
		r.diffFocus = !r.diffFocus
		return nil
	case r.busy && key.Matches(msg, k.Approve, k.ApproveAll, k.Reject, k.RejectAll):
		m.setStatus("the last approval or rejection is still being written", false)
		return nil
	case key.Matches(msg, k.Approve, k.Reject):
		id := r.selectedID()
		if id == "" {
			m.setStatus("nothing waits for review", false)
			return nil
		}
		verb := "approve"
		if key.Matches(msg, k.Reject) {
			verb = "reject"
		}
		return m.settleReview(verb, []string{id})
	case key.Matches(msg, k.ApproveAll, k.RejectAll):
		if len(r.items) == 0 {
			m.setStatus("nothing waits for review", false)
			return nil
		}
		r.confirm = "approve"
		if key.Matches(msg, k.RejectAll) {
			r.confirm = "reject"
		}
		m.setStatus(fmt.Sprintf("%s all %s? enter/y: yes, any other key: no", r.confirm, plural(len(r.items), "change")), false)
		return nil
	}
	nav := DefaultKeyMap() // the panes' moves are off while the pane is open
	if r.diffFocus {
		if d, ok := navDelta(&nav, msg, max(r.diffH, 1)); ok {
			r.diffOff = max(r.diffOff+d, 0)
		}
		return nil
	}
	if d, ok := navDelta(&nav, msg, max(r.height, 1)); ok {
		r.cursor = clamp(r.cursor+d, 0, max(len(r.items)-1, 0))
		r.diffOff = 0
	}
	return nil
}

// settleReview approves or rejects the changes ids name, beside the interface.
func (m *Model) settleReview(verb string, ids []string) tea.Cmd {
	rv, ok := m.v.(reviewVault)
	if !ok {
		return nil
	}
	m.review.busy = true
	m.setStatus(verb+"…", false)
	ctx := m.ctx
	return func() tea.Msg {
		var res vault.ReviewResult
		var err error
		if verb == "approve" {
			res, err = rv.Approve(ctx, ids)
		} else {
			res, err = rv.Reject(ctx, ids)
		}
		return reviewDoneMsg{verb: verb, ids: ids, res: res, err: err}
	}
}

// onReviewDone says what an approval or a rejection did, reads the list
// again, and the head, which an approval moved.
func (m *Model) onReviewDone(msg reviewDoneMsg) tea.Cmd {
	m.review.busy = false
	n := len(msg.res.Settled)
	done := strings.TrimSuffix(msg.verb, "e") + "ed"
	switch {
	case msg.err != nil && n > 0:
		m.setStatus(fmt.Sprintf("%s %s, then: %v", done, plural(n, "change"), msg.err), true)
	case msg.err != nil:
		m.setStatus(fmt.Sprintf("%s: %v", msg.verb, msg.err), true)
	case msg.verb == "approve":
		m.setStatus(fmt.Sprintf("%s %s onto main (z takes the last back)", done, plural(n, "change")), false)
		for i, c := range msg.res.Commits {
			if c != "" {
				m.undo.did(undoEntry{commit: c, what: "approval of " + short(msg.res.Settled[i])})
			}
		}
	default:
		m.setStatus(fmt.Sprintf("%s %s; memvault review --rejected lists it, and approve takes it later", done, plural(n, "change")), false)
	}
	return tea.Batch(m.review.load(), m.readHead(false))
}

// Title implements component.
func (r *reviewModel) Title() string {
	switch {
	case !r.loaded:
		return "Review"
	case len(r.items) == 0:
		return "Review · nothing waits"
	}
	return fmt.Sprintf("Review · %s waiting", plural(len(r.items), "change"))
}

// View implements component: one row a change, its short ID, its subject,
// and a ! when it carries marks.
func (r *reviewModel) View() []string {
	rows := make([]string, 0, r.height)
	switch {
	case r.err != nil:
		rows = append(rows, pad(r.st.ErrorText.Render(sanitize(r.err.Error())), r.width))
	case !r.loaded:
		rows = append(rows, pad(r.st.Faint.Render("loading…"), r.width))
	case len(r.items) == 0:
		rows = append(rows, pad(r.st.Faint.Render("Nothing waits for review."), r.width))
	}
	if len(r.items) > 0 {
		r.offset = keepInView(r.offset, r.cursor, r.height, len(r.items))
		for i := r.offset; i < len(r.items) && len(rows) < r.height; i++ {
			p := r.items[i]
			flag := ""
			if i < len(r.marks) && len(r.marks[i]) > 0 {
				flag = r.st.StatusError.Render("!")
			}
			left := r.st.Hash.Render(short(p.Commit)) + " " + sanitize(p.Subject)
			rows = append(rows, listRow(&r.st, left, flag, r.width, i == r.cursor, r.focused && !r.diffFocus))
		}
	}
	for len(rows) < r.height {
		rows = append(rows, pad("", r.width))
	}
	return rows
}

// diffView draws the chosen change beside the list in w by h: who made it,
// its marks, then its diff, scrolled to diffOff.
func (r *reviewModel) diffView(w, h int) []string {
	r.diffH = h
	var lines []string
	if id := r.selectedID(); id != "" {
		p := r.items[r.cursor]
		lines = append(lines, r.st.Hash.Render("change "+p.Commit[:min(12, len(p.Commit))]), r.st.Command.Render(sanitize(p.Subject)))
		for _, t := range [][2]string{{"agent", p.Agent}, {"session", p.Session}, {"tool use", p.ToolUseID}, {"held", p.Held}} {
			if t[1] != "" {
				lines = append(lines, r.st.Faint.Render(t[0]+": ")+sanitize(t[1]))
			}
		}
		if r.cursor < len(r.marks) {
			for _, mk := range r.marks[r.cursor] {
				lines = append(lines, r.st.StatusError.Render("! "+sanitize(mk)))
			}
		}
		lines = append(lines, "")
		for _, l := range diffLines(p.Files, "It changes no memory file.") {
			lines = append(lines, diffStyle(l, &r.st).Render(sanitize(l)))
		}
	}
	r.diffOff = clamp(r.diffOff, 0, max(len(lines)-h, 0))
	out := make([]string, 0, h)
	for i := r.diffOff; i < len(lines) && len(out) < h; i++ {
		out = append(out, pad(lines[i], w))
	}
	for len(out) < h {
		out = append(out, pad("", w))
	}
	return out
}

// reviewFrame draws the open pane over the panes' room: the list on the left,
// the diff on the right.
func (m *Model) reviewFrame() []string {
	main := m.height - 2
	left := clamp(m.width*2/5, min(24, m.width/2), 64)
	lr, dr := rect{0, 0, left, main}, rect{left, 0, m.width - left, main}
	r := &m.review
	r.SetSize(lr.w-2, lr.h-2)
	r.SetFocused(true)
	keys := "space approve · a all · d reject · D all"
	title := r.Title()
	if lipgloss.Width(title)+lipgloss.Width(keys)+8 < lr.w {
		title += " · " + keys
	}
	return compose(main, map[rect][]string{
		lr: box(lr, title, r.View(), !r.diffFocus, &m.st),
		dr: box(dr, "Diff", r.diffView(dr.w-2, dr.h-2), r.diffFocus, &m.st),
	})
}
