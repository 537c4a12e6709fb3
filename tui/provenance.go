package tui

// Provenance in the interface: b on a file shows its blame in the content pane
// (short hash, age and agent beside each line; enter opens that commit's
// diff); s searches the content of every file (enter jumps to the file at the
// line); S filters the history by text, as log -S does.

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/memvault/memvault/vault"
)

// provenanceVault is what blame and search need; *vault.Vault has it. A Vault
// without it offers neither.
type provenanceVault interface {
	Blame(ctx context.Context, path, rev string) (*vault.Blame, error)
	Grep(ctx context.Context, re *regexp.Regexp, opts vault.GrepOptions) (*vault.GrepResult, error)
}

// The content pane's provenance lists: one selectable row a line.
const (
	showBlame  show = 100 + iota // a file's blame at the head
	showSearch                   // the lines that match a search
)

const (
	bodyBlame  bodyKind = 100 + iota // rows of a blame, with a cursor
	bodySearch                       // rows of matches, with a cursor
)

// provRef is what a row of a provenance list leads to.
type provRef struct {
	commit string        // blame: the commit that brought the line
	rec    *vault.Record // blame: its record
	path   string        // search: the file
	line   int           // search: the 1-based line
}

type provMsg struct {
	req   contentReq
	title string
	kind  bodyKind
	lines []string
	refs  []provRef
	err   error
}

// maxSearchLines bounds what a search lists.
const maxSearchLines = 2000

// isProvList tells whether the content pane shows a provenance list.
func (c *contentModel) isProvList() bool { return c.kind == bodyBlame || c.kind == bodySearch }

// startBlame shows the blame of the selected file.
func (m *Model) startBlame() tea.Cmd {
	pv, ok := m.v.(provenanceVault)
	p := m.selectedRecordFile()
	if p == "" {
		m.noFile("blame")
		return nil
	}
	if !ok || m.snap == nil {
		return nil
	}
	req := contentReq{show: showBlame, path: p, rev: m.snap.Commit()}
	m.content.set(req, "blame "+p, bodyLoading, nil, []string{"loading…"})
	m.focus = paneContent
	now := m.opts.Now()
	ctx := m.ctx
	return func() tea.Msg {
		bl, err := pv.Blame(ctx, req.path, req.rev)
		msg := provMsg{req: req, title: "blame " + strings.TrimPrefix(req.path, vault.Root+"/"), kind: bodyBlame, err: err}
		if err != nil {
			return msg
		}
		agentW, origins := 0, false
		for _, l := range bl.Lines {
			agentW = max(agentW, min(len(sanitize(who(bl.Commits[l.Commit]))), 12))
			origins = origins || l.Origin != ""
		}
		for _, l := range bl.Lines {
			r := bl.Commits[l.Commit]
			hash := short(l.Commit)
			if l.Origin != "" {
				hash += "<" + short(l.Origin)
			} else if origins {
				hash += strings.Repeat(" ", 1+len(short(l.Commit)))
			}
			msg.lines = append(msg.lines, fmt.Sprintf("%s %6s %-*s │ %s", hash, relTime(r.Time, now), agentW,
				cut(sanitize(who(r)), agentW), sanitize(l.Text)))
			msg.refs = append(msg.refs, provRef{commit: l.Commit, rec: &r})
		}
		if len(msg.lines) == 0 {
			msg.kind, msg.lines = bodyInfo, []string{"(empty file)"}
		}
		return msg
	}
}

func who(r vault.Record) string {
	if r.Agent != "" {
		return r.Agent
	}
	return r.Author
}

func cut(s string, w int) string {
	if r := []rune(s); len(r) > w {
		return string(r[:w])
	}
	return s
}

// startAsk opens the prompt of a search (s) or of the history's text filter (S).
func (m *Model) startAsk(md mode, prompt, value string) tea.Cmd {
	m.mode = md
	m.input.Prompt = prompt
	m.input.Placeholder = ""
	m.input.SetValue(value)
	m.input.CursorEnd()
	return m.input.Focus()
}

// askKey edits a search or text filter; enter runs it, esc leaves it.
func (m *Model) askKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Submit):
		text := m.input.Value()
		md := m.mode
		m.mode = modeBrowse
		m.input.Blur()
		switch md {
		case modePickaxe:
			return m.setPickaxe(text)
		case modeJump:
			return m.jump(text)
		}
		return m.search(text)
	case key.Matches(msg, m.keys.Cancel):
		m.mode = modeBrowse
		m.input.Blur()
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

// search lists the lines of every file at the head that pattern matches.
func (m *Model) search(pattern string) tea.Cmd {
	pv, ok := m.v.(provenanceVault)
	if !ok || pattern == "" || m.snap == nil {
		return nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		m.setStatus(fmt.Sprintf("search: %v", err), true)
		return nil
	}
	req := contentReq{show: showSearch, path: pattern, rev: m.snap.Commit()}
	m.content.set(req, "search "+pattern, bodyLoading, nil, []string{"searching…"})
	m.focus = paneContent
	ctx := m.ctx
	return func() tea.Msg {
		res, err := pv.Grep(ctx, re, vault.GrepOptions{Rev: req.rev, MaxLines: maxSearchLines})
		msg := provMsg{req: req, title: "search " + sanitize(pattern), kind: bodySearch, err: err}
		if err != nil {
			return msg
		}
		n := 0
		for _, f := range res.Files {
			n += f.Matches
			for _, l := range f.Lines {
				msg.lines = append(msg.lines, fmt.Sprintf("%s:%d: %s", sanitize(strings.TrimPrefix(f.Path, vault.Root+"/")), l.Number, sanitize(l.Text)))
				msg.refs = append(msg.refs, provRef{path: f.Path, line: l.Number})
			}
		}
		msg.title = fmt.Sprintf("search %s · %s in %s", sanitize(pattern), plural(n, "line"), plural(len(res.Files), "file"))
		if res.Truncated {
			msg.title += " (first " + fmt.Sprint(maxSearchLines) + ")"
		}
		if len(msg.lines) == 0 {
			msg.kind, msg.lines = bodyInfo, []string{"No line matches " + sanitize(pattern) + "."}
		}
		if len(res.BadEntries) > 0 {
			// A search of some files must not look like a search of all.
			msg.title += " · incomplete"
			msg.lines = append(msg.lines, "", fmt.Sprintf("Not searched, as no memory file memvault can read (%d):", len(res.BadEntries)))
			for _, e := range res.BadEntries {
				msg.lines = append(msg.lines, "  "+sanitize(e.Path)+"  "+sanitize(e.Reason))
			}
		}
		return msg
	}
}

// openProv opens the selected row: a blame line's commit, or a match's file at
// its line.
func (m *Model) openProv() tea.Cmd {
	i := m.content.cursor
	if i < 0 || i >= len(m.content.prov) {
		return nil
	}
	ref := m.content.prov[i]
	if ref.commit != "" {
		req := contentReq{show: showCommit, rev: ref.commit}
		header := m.hist.commitDetails(ref.rec)
		m.content.set(req, "commit "+short(ref.commit), bodyLoading, header, []string{"loading…"})
		return m.contentCmd(req)
	}
	req := contentReq{show: showFile, path: ref.path, rev: m.snap.Commit()}
	m.content.set(req, ref.path, bodyLoading, nil, []string{"loading…"})
	m.content.jumpLine = ref.line
	return fileCmd(m.ctx, m.snap, req)
}

// setPickaxe keeps in the history only the commits whose change adds or
// removes text; "" shows every commit again.
func (m *Model) setPickaxe(text string) tea.Cmd {
	if text == m.hist.pickaxe {
		return nil
	}
	m.hist.pickaxe = text
	m.hist.reset(m.hist.scope)
	if m.snap == nil {
		return nil
	}
	return m.hist.loadHistory(false)
}
