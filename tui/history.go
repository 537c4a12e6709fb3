package tui

import (
	"fmt"
	"time"

	"github.com/memvault/memvault/vault"
)

// historyModel is the history pane: the records of the whole vault, or of one
// path, newest first, loaded a page at a time as the cursor nears the end.
type historyModel struct {
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

	filter  string     // as typed
	flt     histFilter // as read
	pickaxe string     // only commits whose change adds or removes this text (log -S)
	view    []int      // indices into recs that pass the filter, in order

	cursor int // index into view
	offset int
	marks  []string // up to two commit hashes, oldest mark first

	selectNext string // a commit to put the cursor on once it is loaded (an undo's)
	newest     string // the newest commit of the scope, as last read

	// The width the loaded rows want, and what it was worked out from.
	want, wantN, wantCp int
	wantFirst           string
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
	*h = historyModel{scope: scope, filter: h.filter, flt: h.flt, pickaxe: h.pickaxe, marks: h.marks}
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
	if h.done || h.loading || h.err != nil {
		return false
	}
	return h.cursor+2*visible >= len(h.view)
}

func (h *historyModel) move(delta int) {
	h.cursor = clamp(h.cursor+delta, 0, len(h.view)-1)
}
