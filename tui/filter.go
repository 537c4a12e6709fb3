package tui

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/memvault/memvault/vault"
)

// histFilter is the history filter the user typed after /: words that each
// must appear in a commit's subject, path or command, and fields that narrow
// by who and when:
//
//	agent:support-bot session:s-1 path:notes/ tool:toolu_01 cmd:create
//	since:2d until:2026-03-01
//
// Every term must hold; the same field given twice holds when either does.
// Matching ignores case. Commit hashes are never matched: a short filter would
// hit some hash in any long history (: goes to a commit by hash).
type histFilter struct {
	words        []string
	fields       map[string][]string // field name → values, lower case
	since, until time.Time
	bad          []string // terms that cannot be read, such as since:soon
}

// filterFields maps each field name the filter knows, aliases included, to
// its canonical name.
var filterFields = map[string]string{
	"agent": "agent", "session": "session", "path": "path", "tool": "tool",
	"toolu": "tool", "id": "tool", "cmd": "cmd", "command": "cmd",
	"since": "since", "after": "since", "until": "until", "before": "until",
}

// parseFilter reads q; relative dates count back from now.
func parseFilter(q string, now time.Time) histFilter {
	f := histFilter{fields: map[string][]string{}}
	for _, term := range strings.Fields(q) {
		name, val, ok := strings.Cut(term, ":")
		field, known := filterFields[strings.ToLower(name)]
		switch {
		case !ok || !known:
			f.words = append(f.words, strings.ToLower(term))
		case val == "":
			// A field still being typed narrows nothing yet.
		case field == "since" || field == "until":
			t, ok := parseWhen(val, now, field == "until")
			if !ok {
				f.bad = append(f.bad, term)
				continue
			}
			if field == "since" {
				f.since = t
			} else {
				f.until = t
			}
		default:
			f.fields[field] = append(f.fields[field], strings.ToLower(val))
		}
	}
	return f
}

var relWhen = regexp.MustCompile(`^(\d+)([mhdw])$`)

// parseWhen reads an age ("30m", "3h", "2d", "1w"), "today", "yesterday" or
// a date (2026-03-01) or time (RFC 3339). A date as an end means its end.
func parseWhen(s string, now time.Time, end bool) (time.Time, bool) {
	day := func(t time.Time) time.Time {
		y, m, d := t.Date()
		t = time.Date(y, m, d, 0, 0, 0, 0, now.Location())
		if end {
			t = t.AddDate(0, 0, 1)
		}
		return t
	}
	switch strings.ToLower(s) {
	case "today":
		return day(now), true
	case "yesterday":
		return day(now.AddDate(0, 0, -1)), true
	}
	if m := relWhen.FindStringSubmatch(strings.ToLower(s)); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return time.Time{}, false
		}
		unit := map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
		return now.Add(-time.Duration(n) * unit), true
	}
	if t, err := time.ParseInLocation("2006-01-02", s, now.Location()); err == nil {
		return day(t), true
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// empty tells whether the filter lets every commit through.
func (f *histFilter) empty() bool {
	return len(f.words) == 0 && len(f.fields) == 0 && f.since.IsZero() && f.until.IsZero()
}

// treeText is what of the filter applies to the tree's names: its words and
// paths.
func (f *histFilter) treeText() string {
	return strings.Join(append(append([]string(nil), f.words...), f.fields["path"]...), " ")
}

// match tells whether r passes every term.
func (f *histFilter) match(r *vault.Record) bool {
	lower := strings.ToLower
	has := func(s, sub string) bool { return strings.Contains(lower(s), sub) }
	for _, w := range f.words {
		if !has(r.Subject, w) && !has(r.Path, w) && !has(r.NewPath, w) && !has(r.Command, w) {
			return false
		}
	}
	for field, vals := range f.fields {
		ok := false
		for _, v := range vals {
			switch field {
			case "agent":
				ok = ok || has(r.Agent, v) || r.Agent == "" && has(r.Author, v)
			case "session":
				ok = ok || has(r.Session, v)
			case "path":
				ok = ok || has(r.Path, v) || has(r.NewPath, v)
			case "tool":
				ok = ok || has(r.ToolUseID, v)
			case "cmd":
				ok = ok || lower(r.Command) == v
			}
		}
		if !ok {
			return false
		}
	}
	if !f.since.IsZero() && r.Time.Before(f.since) || !f.until.IsZero() && !r.Time.Before(f.until) {
		return false
	}
	return true
}
