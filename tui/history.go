package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/memvault/memvault/vault"
)

// historyModel is the history pane: the records of the whole vault, or of one
// path, newest first, loaded a page at a time as the cursor nears the end.
type historyModel struct {
	*common
	frame
	checkpoints map[string][]string // checkpoint names by commit
	cpAsked     int                 // the number of the last read of the checkpoints
	cpApplied   int                 // and of the last one applied
	cancelLog   context.CancelFunc  // stops a history load that a newer one replaced
	// took says the pane took the content pane's attention (a jump, or the
	// commit an action made selected), for the root to act on.
	took bool

	scope string // "" for the whole vault, or a memory path
	// recs is a window of the scope's history: base records newer than its
	// first are not loaded. A jump to the oldest commit, or to one named by
	// hash, loads the window around it and nothing above it; moving up then
	// loads the pages before, as moving down loads those after.
	recs    []vault.Record
	base    int
	seen    map[string]bool // the commits in recs
	done    bool            // every record of the scope is loaded
	loading bool
	err     error
	jumping string // the commit a walk is placing in the history, or "the first commit"
	jumpSeq int    // the number of the last jump, which a walk's result names

	filter  string     // as typed
	flt     histFilter // as read
	pickaxe string     // only commits whose change adds or removes this text (log -S)
	view    []int      // indices into recs that pass the filter, in order

	cursor int // index into view
	offset int
	// ahead is how many rows further down the keys asked the cursor to go
	// than was loaded: held pgdn keys move it as far as they ask, once the
	// pages come, rather than piling up at the end of what was loaded.
	ahead int
	grow  int      // how many times a filtered page's size doubled (see moreHistory)
	marks []string // up to two commit hashes, oldest mark first

	selectNext string // a commit to put the cursor on once it is loaded (an undo's)
	newest     string // the newest commit of the scope, as last read

	// The merge graph of the loaded records, and what it was worked out from.
	graphRows  []string
	graphN     int
	graphFirst string

	// What the loaded rows need (see needs), and what it was worked out from.
	needPath, needAgent, needTool int
	wantN, wantCp                 int
	wantFirst                     string
}

// firstCommit is the first loaded record's commit, or "".
func (h *historyModel) firstCommit() string {
	if len(h.recs) == 0 {
		return ""
	}
	return h.recs[0].Commit
}

// selected returns the record under the cursor, or nil.
func (h *historyModel) selected() *vault.Record {
	if h.cursor < 0 || h.cursor >= len(h.view) {
		return nil
	}
	return &h.recs[h.view[h.cursor]]
}

// reset empties the pane for a new scope.
func (h *historyModel) reset(scope string) {
	*h = historyModel{
		common: h.common, frame: h.frame, checkpoints: h.checkpoints, cpAsked: h.cpAsked, cpApplied: h.cpApplied,
		cancelLog: h.cancelLog, took: h.took,
		scope: scope, filter: h.filter, flt: h.flt, pickaxe: h.pickaxe, marks: h.marks,
	}
}

// appendPage adds the next page of records, less those already there: a page
// asked for before the head moved overlaps the newest records merged since.
func (h *historyModel) appendPage(recs []vault.Record, pageSize int) {
	if h.seen == nil {
		h.seen = make(map[string]bool, len(recs))
	}
	for _, r := range recs {
		if !h.seen[r.Commit] {
			h.seen[r.Commit] = true
			h.recs = append(h.recs, r)
		}
	}
	h.done = len(recs) < pageSize
	h.refilter()
}

// prepend merges the newest records after the head moved: it puts those not yet
// known before the first known one, keeping the cursor on the same commit. It
// reports false when none of recs is known, so the caller reloads.
func (h *historyModel) prepend(recs []vault.Record) bool {
	if h.base > 0 {
		// A window away from the newest: the new commits are not shown, but
		// they count in every position below them.
		if len(h.recs) > 0 && h.newest != "" {
			for i, r := range recs {
				if r.Commit == h.newest {
					h.base += i
					break
				}
			}
		}
		if len(recs) > 0 {
			h.newest = recs[0].Commit
		}
		return true
	}
	if len(recs) > 0 {
		h.newest = recs[0].Commit
	}
	if len(h.recs) == 0 {
		h.appendPage(recs, len(recs)+1)
		h.done = false
		return true
	}
	first := h.recs[0].Commit
	n := -1
	for i, r := range recs {
		if r.Commit == first {
			n = i
			break
		}
	}
	if n < 0 {
		return false
	}
	if n == 0 {
		return true
	}
	keep := ""
	if r := h.selected(); r != nil {
		keep = r.Commit
	}
	h.recs = append(append([]vault.Record(nil), recs[:n]...), h.recs...)
	for _, r := range recs[:n] {
		h.seen[r.Commit] = true
	}
	before := len(h.view)
	h.refilter()
	added := len(h.view) - before
	if keep != "" {
		h.cursor = h.indexOf(keep)
		if h.offset > 0 {
			h.offset += added
		}
	}
	return true
}

// setWindow replaces what is loaded with recs, which start base records below
// the newest; done says they reach the oldest. The cursor goes to commit at,
// when the filter lets it show.
func (h *historyModel) setWindow(recs []vault.Record, base int, done bool, at string) bool {
	h.recs, h.base, h.seen = nil, base, nil
	h.offset = 0
	h.appendPage(recs, len(recs)+1)
	h.done = done
	for i, j := range h.view {
		if h.recs[j].Commit == at {
			h.cursor = i
			return true
		}
	}
	return false
}

// prependPage adds the page just above the window, keeping the cursor on the
// same commit.
func (h *historyModel) prependPage(recs []vault.Record) {
	var fresh []vault.Record
	for _, r := range recs {
		if !h.seen[r.Commit] {
			h.seen[r.Commit] = true
			fresh = append(fresh, r)
		}
	}
	before := len(h.view)
	h.recs = append(fresh, h.recs...)
	h.base = max(h.base-len(recs), 0)
	h.refilter()
	added := len(h.view) - before
	h.cursor += added
	h.offset += added
}

// position is the cursor's place in the whole history, from 1, and the number
// of commits there are ("+" when more may follow). With a filter only what is
// loaded is counted.
func (h *historyModel) position() (int, string) {
	if h.filter != "" || h.base == 0 {
		n := fmt.Sprint(len(h.view))
		if !h.done || h.base > 0 {
			n += "+"
		}
		return min(h.cursor+1, len(h.view)), n
	}
	n := fmt.Sprint(h.base + len(h.view))
	if !h.done {
		n += "+"
	}
	return h.base + min(h.cursor+1, len(h.view)), n
}

// indexOf returns the view index of commit c, or 0.
func (h *historyModel) indexOf(c string) int {
	for i, j := range h.view {
		if h.recs[j].Commit == c {
			return i
		}
	}
	return 0
}

// setFilter keeps only the records that pass the filter q (see histFilter),
// and keeps the cursor on the same commit when it passes.
func (h *historyModel) setFilter(q string, now time.Time) {
	keep := ""
	if r := h.selected(); r != nil {
		keep = r.Commit
	}
	h.filter = q
	h.flt = parseFilter(q, now)
	h.grow = 0
	h.refilter()
	h.cursor = 0
	if keep != "" {
		h.cursor = h.indexOf(keep)
	}
	h.offset = 0
}

func (h *historyModel) refilter() {
	h.view = h.view[:0]
	for i := range h.recs {
		if h.flt.empty() || h.flt.match(&h.recs[i]) {
			h.view = append(h.view, i)
		}
	}
	h.cursor = clamp(h.cursor, 0, len(h.view)-1)
}

// toggleMark marks or unmarks commit c; a third mark replaces the oldest.
func (h *historyModel) toggleMark(c string) {
	for i, m := range h.marks {
		if m == c {
			h.marks = append(h.marks[:i:i], h.marks[i+1:]...)
			return
		}
	}
	if len(h.marks) == 2 {
		h.marks = h.marks[1:]
	}
	h.marks = append(h.marks, c)
}

func (h *historyModel) marked(c string) bool {
	for _, m := range h.marks {
		if m == c {
			return true
		}
	}
	return false
}

// needMore tells whether the cursor is near enough the end of what is loaded,
// or the filter leaves too little on screen, to load the next page.
func (h *historyModel) needMore(visible int) bool {
	if h.done || h.loading || h.err != nil || h.jumping != "" {
		return false
	}
	return h.cursor+2*visible >= len(h.view)
}

func (h *historyModel) move(delta int) {
	h.cursor = clamp(h.cursor+delta, 0, len(h.view)-1)
}

// Update implements component: the keys that move in the history, a click
// or the wheel, and the pages and checkpoints it asked for.
func (h *historyModel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k := &h.keys
		switch {
		case key.Matches(msg, k.Top) && h.base > 0:
			// The newest commits are not loaded: start again from them.
			h.reset(h.scope)
			h.took = true
			return h.loadHistory(false)
		case key.Matches(msg, k.Bottom) && !h.done:
			return h.jumpHistory("")
		}
		if d, ok := navDelta(k, msg, h.height); ok {
			if last := len(h.view) - 1; d > 0 && h.cursor+d > last && !h.done && !key.Matches(msg, k.Bottom) {
				h.ahead += h.cursor + d - last // on top of what earlier keys still owe
			} else {
				h.ahead = 0
			}
			h.move(d)
			return tea.Batch(h.moreHistory(), h.earlierHistory())
		}
	case clickMsg:
		if msg.row >= 0 && h.offset+msg.row < len(h.view) {
			h.cursor = h.offset + msg.row
			return tea.Batch(h.moreHistory(), h.earlierHistory())
		}
	case scrollMsg:
		h.move(msg.delta)
		return tea.Batch(h.moreHistory(), h.earlierHistory())
	case logMsg:
		return h.onLog(msg)
	case checkpointsMsg:
		if msg.seq < h.cpApplied {
			return nil
		}
		h.cpApplied = msg.seq
		if msg.err != nil {
			h.setStatus(fmt.Sprintf("read the checkpoints: %v", msg.err), true)
			return nil
		}
		h.checkpoints = make(map[string][]string, len(msg.list))
		for _, c := range msg.list {
			h.checkpoints[c.Commit] = append(h.checkpoints[c.Commit], sanitize(c.Name))
		}
	}
	return nil
}

// readCheckpoints reads every checkpoint, for the ⚑ marks.
func (h *historyModel) readCheckpoints() tea.Cmd {
	h.cpAsked++
	return checkpointsCmd(h.ctx, h.v, h.cpAsked)
}

// loadHistory asks for the first page of the history's scope, or with fresh
// for the newest records to merge in.
func (h *historyModel) loadHistory(fresh bool) tea.Cmd {
	h.loading = true
	req := logReq{scope: h.scope, pickaxe: h.pickaxe, limit: h.opts.PageSize, fresh: fresh}
	if fresh {
		return logCmd(h.ctx, h.v, req) // never cancelled: it brings new commits
	}
	return logCmd(h.pageContext(), h.v, req)
}

// moreHistory asks for the page after what is loaded when it will soon be needed.
func (h *historyModel) moreHistory() tea.Cmd {
	if !h.needMore(h.height) {
		return nil
	}
	h.loading = true
	limit := h.opts.PageSize
	if h.filter != "" {
		// A filter passes few records: fetch more at once, and more again
		// while pages bring too few to fill the pane, since each page
		// walks the history from the newest commit to where it starts.
		limit *= 5 << h.grow
	}
	return logCmd(h.pageContext(), h.v, logReq{scope: h.scope, pickaxe: h.pickaxe, skip: h.base + len(h.recs), limit: limit})
}

// earlierHistory asks for the page above a window that does not start at the
// newest commit, when the cursor nears its top.
func (h *historyModel) earlierHistory() tea.Cmd {
	if h.base == 0 || h.loading || h.err != nil || h.jumping != "" || h.cursor > h.height {
		return nil
	}
	h.loading = true
	n := min(h.opts.PageSize, h.base)
	return logCmd(h.pageContext(), h.v, logReq{scope: h.scope, pickaxe: h.pickaxe, skip: h.base - n, limit: n, before: true})
}

// jumpHistory loads the window around a revision, or with rev "" the oldest
// records, and puts the cursor on that commit.
func (h *historyModel) jumpHistory(rev string) tea.Cmd {
	h.loading = true
	h.jumpSeq++
	req := logReq{scope: h.scope, pickaxe: h.pickaxe, limit: h.opts.PageSize, jump: rev, oldest: rev == "", seq: h.jumpSeq}
	if rev == "" {
		h.jumping = "the first commit"
		h.setStatus("going to the first commit… (esc stops)", false)
	} else {
		h.jumping = rev
		h.setStatus("placing "+short(rev)+" in the history: reading it from the newest commit… (esc stops)", false)
	}
	return jumpCmd(h.pageContext(), h.v, req)
}

// pageContext returns the context of a new history load, cancelling the one
// before it: a walk of a long history for a scope the user has left stops.
func (h *historyModel) pageContext() context.Context {
	if h.cancelLog != nil {
		h.cancelLog()
	}
	ctx, cancel := context.WithCancel(h.ctx)
	h.cancelLog = cancel
	return ctx
}

// onLog takes the records a load brought.
func (h *historyModel) onLog(msg logMsg) tea.Cmd {
	req := msg.req
	if req.scope != h.scope || req.pickaxe != h.pickaxe ||
		!req.fresh && !req.before && req.jump == "" && !req.oldest && req.skip > h.base+len(h.recs) ||
		req.before && req.skip+req.limit != h.base {
		return nil // a page of another scope, or of one since reset
	}
	jump := req.jump != "" || req.oldest
	if h.jumping == "" || jump {
		h.loading = false // a page that arrives while a jump walks leaves it be
	}
	if jump {
		if h.jumping == "" || req.seq != h.jumpSeq {
			return nil // stopped, or another jump since
		}
		h.jumping = ""
	}
	if errors.Is(msg.err, context.Canceled) {
		return nil
	}
	if msg.err != nil && (req.jump != "" || req.oldest) {
		h.setStatus(fmt.Sprintf("go to %s: %v", sanitize(req.jump), msg.err), true)
		return nil
	}
	if msg.err != nil {
		h.err = msg.err
		h.setStatus(fmt.Sprintf("read the history: %v (any key tries again)", msg.err), true)
		return nil
	}
	switch {
	case req.jump != "" || req.oldest:
		h.status = ""
		if !h.setWindow(msg.recs, msg.base, msg.done, msg.at) && msg.at != "" {
			h.setStatus(fmt.Sprintf("%s is hidden by the filter", short(msg.at)), false)
		}
		h.took = true
	case req.before:
		h.prependPage(msg.recs)
	case !msg.req.fresh:
		if req.skip == 0 && len(msg.recs) > 0 {
			h.newest = msg.recs[0].Commit
		}
		before := len(h.view)
		h.appendPage(msg.recs, msg.req.limit)
		if h.filter != "" && len(h.view)-before < h.height && h.grow < 6 {
			h.grow++
		}
		if h.ahead > 0 {
			n := min(h.ahead, len(h.view)-1-h.cursor)
			h.cursor += n
			h.ahead -= n
			if h.done {
				h.ahead = 0
			}
		}
	case !h.prepend(msg.recs):
		// More new commits than a page: start again from the newest.
		h.reset(h.scope)
		h.appendPage(msg.recs, msg.req.limit)
	}
	if c := h.selectNext; c != "" && h.seen[c] {
		h.selectNext, h.cursor, h.took = "", h.indexOf(c), true
	}
	return h.moreHistory()
}

// Title implements component.
func (h *historyModel) Title() string {
	t := "History · all"
	if h.scope != "" {
		t = "History · " + sanitize(strings.TrimPrefix(h.scope, vault.Root+"/"))
	}
	if h.filter != "" {
		t += " · /" + sanitize(h.filter)
	}
	if h.pickaxe != "" {
		t += " · -S " + sanitize(h.pickaxe)
	}
	return t
}

// The widths of a history row's parts: the cursor mark, the mark and hash,
// the relative time, the absolute time and the command, each with its space;
// and the most the agent and tool-use id columns take.
const (
	histFixed = 1 + 9 + 8 + 12
	histAbs   = 17
	maxAgentW = 20
	maxToolW  = 24
)

// histColumns chooses the columns of history rows w cells wide whose paths
// (checkpoints included) need pathW. The path gets up to minPath cells, then
// the agent and the tool-use id each show whole if they fit, then the path
// takes what it needs, and the absolute time shows only when the path is
// whole (the commit's details show both times and ids in any case). A path
// longer than its room is cut at its end.
func histColumns(w, pathW, aw, tw int) (abs, agent, tool bool) {
	const minPath = 30
	need := histFixed + min(pathW, minPath)
	if aw > 0 && need+1+aw <= w {
		agent, need = true, need+1+aw
	}
	if tw > 0 && need+1+tw <= w {
		tool, need = true, need+1+tw
	}
	need += pathW - min(pathW, minPath)
	return need+histAbs <= w, agent, tool
}

// histPath is a record's path as the history shows it, with its checkpoints.
func (h *historyModel) histPath(r *vault.Record) string {
	p := strings.TrimPrefix(sanitize(r.Path), vault.Root+"/")
	if r.NewPath != "" {
		p += " → " + strings.TrimPrefix(sanitize(r.NewPath), vault.Root+"/")
	}
	for _, name := range h.checkpoints[r.Commit] {
		p = "⚑" + name + " " + p
	}
	return p
}

// needs measures the loaded rows, not the visible ones, so that the columns
// stay put while the cursor moves: the width that nineteen paths in twenty
// fit in (a rare long one, such as a rename's, is cut rather than pushing
// the agent out), and the widest agent and tool-use id, up to maxAgentW and
// maxToolW.
func (h *historyModel) needs() (pw, aw, tw int) {
	if h.wantN == len(h.view) && h.wantFirst == h.firstCommit() && h.wantCp == len(h.checkpoints) {
		return h.needPath, h.needAgent, h.needTool
	}
	widths := make([]int, 0, len(h.view))
	for _, i := range h.view {
		r := &h.recs[i]
		widths = append(widths, lipgloss.Width(h.histPath(r)))
		aw = max(aw, min(lipgloss.Width(sanitize(r.Agent)), maxAgentW))
		tw = max(tw, min(lipgloss.Width(sanitize(r.ToolUseID)), maxToolW))
	}
	if len(widths) > 0 {
		slices.Sort(widths)
		pw = widths[len(widths)-1-len(widths)/20]
	}
	h.needPath, h.needAgent, h.needTool = pw, aw, tw
	h.wantN, h.wantFirst, h.wantCp = len(h.view), h.firstCommit(), len(h.checkpoints)
	return pw, aw, tw
}

// histWant is the width the history pane needs to show every column and the
// paths of its loaded rows (see needs), border included.
func (h *historyModel) histWant() int {
	pw, aw, tw := h.needs()
	gw := 0
	if l := h.lanes(); len(l) > 0 {
		gw = len([]rune(l[0])) + 1
	}
	return 2 + histFixed + gw + histAbs + pw + 1 + aw + 1 + tw
}

// lanes is the merge graph of the loaded records (see graph), one string a
// record, or nil: it shows for the whole vault's history, unfiltered, where
// a record's neighbours are its neighbours in the history.
func (h *historyModel) lanes() []string {
	if h.scope != "" || h.filter != "" || h.pickaxe != "" {
		return nil
	}
	if h.graphN != len(h.recs) || h.graphFirst != h.firstCommit() {
		h.graphRows, h.graphN, h.graphFirst = graph(h.recs), len(h.recs), h.firstCommit()
	}
	return h.graphRows
}

// View implements component: the visible commits, with as many columns as fit.
func (h *historyModel) View() []string {
	w, rows := h.width, h.height
	now := h.opts.Now()
	out := make([]string, 0, rows)
	pw, aw, tw := h.needs()
	lanes := h.lanes()
	gw := 0
	if len(lanes) > 0 {
		gw = len([]rune(lanes[0])) + 1
	}
	wide, wider, widest := histColumns(w-gw, pw, aw, tw)
	for i := h.offset; i < len(h.view) && len(out) < rows; i++ {
		r := &h.recs[h.view[i]]
		var b strings.Builder
		mark := " "
		if h.marked(r.Commit) {
			mark = h.st.Marked.Render("●")
		}
		b.WriteString(mark + h.st.Hash.Render(short(r.Commit)) + " ")
		if gw > 0 {
			b.WriteString(h.st.Graph.Render(lanes[h.view[i]]) + " ")
		}
		b.WriteString(h.st.Time.Render(fmt.Sprintf("%-7s", relTime(r.Time, now))) + " ")
		if wide {
			b.WriteString(h.st.Time.Render(absTime(r.Time, now)) + " ")
		}
		cmd := sanitize(r.Command)
		if u := h.undone[r.Commit]; u != "" {
			cmd = u
		}
		b.WriteString(h.st.Command.Render(fmt.Sprintf("%-11s", cmd)) + " ")
		p := strings.TrimPrefix(sanitize(r.Path), vault.Root+"/")
		if r.NewPath != "" {
			p += " → " + strings.TrimPrefix(sanitize(r.NewPath), vault.Root+"/")
		}
		var right []string
		if wider {
			right = append(right, h.st.Agent.Render(pad(sanitize(r.Agent), aw)))
		}
		if widest {
			right = append(right, h.st.ToolUse.Render(pad(sanitize(r.ToolUseID), tw)))
		}
		for _, name := range h.checkpoints[r.Commit] {
			b.WriteString(h.st.Checkpoint.Render("⚑"+name) + " ")
		}
		// No writer's signature: never shown as the agent's own, whatever its
		// trailers say (a vault from before writers, or a clone's own repair).
		if r.Signer == "" {
			b.WriteString(h.st.StatusError.Render("unsigned") + " ")
		}
		b.WriteString(h.st.Path.Render(p))
		out = append(out, listRow(&h.st, b.String(), strings.Join(right, " "), w, i == h.cursor, h.focused))
	}
	if len(out) < rows {
		switch {
		case h.err != nil:
			out = append(out, pad(h.st.StatusError.Render(" cannot read the history (any key tries again): "+sanitize(h.err.Error())), w))
		case h.loading && h.filter != "":
			// A filter that passes few commits reads far: say how far.
			out = append(out, pad(h.st.Faint.Render(fmt.Sprintf(" reading the history for the filter: %d commits read, %d match · esc clears it",
				h.base+len(h.recs), len(h.view))), w))
		case h.loading:
			out = append(out, pad(h.st.Faint.Render(" loading…"), w))
		case len(h.view) == 0 && h.filter != "":
			out = append(out, pad(h.st.Faint.Render(" no commit matches"), w))
		}
	}
	return out
}
