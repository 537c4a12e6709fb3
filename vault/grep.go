package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/memvault/memvault/gitlog"
)

// GrepOptions select what Grep searches and how much it returns.
type GrepOptions struct {
	Rev     string   // the revision searched (see Resolve); "" is main
	Paths   []string // memory files or directories to search; none: all of /memories
	Context int      // lines shown before and after each matching line
	// MaxLines, when above 0, stops the search once this many lines (matches
	// and context) have been gathered; Truncated then says so.
	MaxLines int
}

// grepLine is one line of a file that Grep returns: a match, or context.
type grepLine struct {
	Number int    `json:"line"` // 1-based
	Text   string `json:"text"` // without its "\n"
	Match  bool   `json:"match"`
}

// GrepFile is a file with at least one matching line.
type GrepFile struct {
	Path    string     `json:"path"`
	Matches int        `json:"matches"` // matching lines
	Lines   []grepLine `json:"lines"`   // matches and their context, in order
}

// GrepResult is what Grep found.
type GrepResult struct {
	Commit    string     `json:"commit"` // the revision searched
	Files     []GrepFile `json:"files"`  // in byte order of path
	Truncated bool       `json:"truncated"`
	// BadEntries are the entries searched for that are no memory file
	// memvault reads (see ErrBadEntry), by path as Status names them: the
	// search went on past them, so it is incomplete when there are any.
	BadEntries []EntryError `json:"bad_entries"`
}

// Grep searches the decrypted memory files at opts.Rev for lines that re
// matches, line by line (a line is matched without its "\n"). Files are
// decrypted in memory, in parallel, once per process. A bad entry (see
// ErrBadEntry) fails alone: it is left out and named in the result's
// BadEntries, and the rest is searched. The error is a
// *PathError for an invalid path, wraps ErrUnknownRevision for a bad rev,
// ErrNotExist for a path with nothing there, and ErrNoIdentity or ErrDecrypt
// when a file cannot be decrypted.
func (v *Vault) Grep(ctx context.Context, re *regexp.Regexp, opts GrepOptions) (*GrepResult, error) {
	ps := []string{Root}
	if len(opts.Paths) > 0 {
		ps = ps[:0]
		for _, p := range opts.Paths {
			cp, err := CleanPath(p)
			if err != nil {
				return nil, err
			}
			ps = append(ps, cp)
		}
	}
	h, root, err := v.revisionRoot(opts.Rev)
	if err != nil {
		return nil, err
	}
	ns, err := v.namesOfRoot(root)
	if err != nil {
		return nil, err
	}
	res := &GrepResult{Commit: h.String(), BadEntries: []EntryError{}}
	bad := func(p, reason string) {
		res.BadEntries = append(res.BadEntries, EntryError{Path: p, Reason: reason})
	}
	var refs []fileRef
	seen := map[string]bool{}
	for _, p := range ps {
		tp, err := ns.treePath(p)
		if unsealable(err) {
			return nil, fmt.Errorf("vault: grep %s: %w", p, ErrNotExist)
		} else if err != nil {
			return nil, err
		}
		e, err := v.repo.Lookup(root, tp)
		switch {
		case tp == memDir && errors.Is(err, gitlog.ErrNotFound):
			continue // an empty vault
		case errors.Is(err, gitlog.ErrNotFound) || errors.Is(err, gitlog.ErrNotDir):
			return nil, fmt.Errorf("vault: grep %s: %w", p, ErrNotExist)
		case err != nil:
			return nil, fmt.Errorf("vault: grep %s: %w", p, err)
		}
		var found []fileRef
		switch {
		case e.IsDir():
			if found, err = v.readableFiles(ns, p, e.Hash, bad); err != nil {
				return nil, err
			}
		case p != Root && entryReason(path.Dir(p), e) != "":
			bad(p, entryReason(path.Dir(p), e))
		default:
			found = []fileRef{{path: p[1:], hash: e.Hash}} // its plaintext tree path
		}
		for _, r := range found {
			if !seen[r.path] {
				seen[r.path] = true
				refs = append(refs, r)
			}
		}
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].path < refs[j].path })
	unread := make([]*EntryError, len(refs))
	texts, err := v.readAllBut(ctx, refs, unread)
	if err != nil {
		return nil, err
	}
	for _, ee := range unread {
		if ee != nil {
			bad(ee.Path, ee.Reason)
		}
	}
	slices.SortFunc(res.BadEntries, func(a, b EntryError) int { return strings.Compare(a.Path, b.Path) })
	total := 0
	quick := wholeText(re)
	for i, text := range texts {
		if quick != nil && !quick.Match(text) {
			continue
		}
		f := grepFile(re, text, opts.Context)
		if f.Matches == 0 {
			continue
		}
		f.Path = memPath(refs[i].path)
		if opts.MaxLines > 0 && total+len(f.Lines) > opts.MaxLines {
			f.Lines = f.Lines[:opts.MaxLines-total]
			res.Truncated = true
		}
		total += len(f.Lines)
		if len(f.Lines) > 0 {
			res.Files = append(res.Files, f)
		}
		if res.Truncated {
			break
		}
	}
	return res, nil
}

// grepFile returns the matching lines of text with ctx lines around each.
func grepFile(re *regexp.Regexp, text []byte, ctx int) GrepFile {
	var f GrepFile
	lines := bytes.SplitAfter(text, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	shown := -1 // the last line index added to f.Lines
	for i, l := range lines {
		l = bytes.TrimSuffix(l, []byte("\n"))
		if !re.Match(l) {
			continue
		}
		f.Matches++
		for j := max(shown+1, i-ctx); j < i; j++ {
			f.Lines = append(f.Lines, grepLine{Number: j + 1, Text: strings.TrimSuffix(string(lines[j]), "\n")})
		}
		f.Lines = append(f.Lines, grepLine{Number: i + 1, Text: string(l), Match: true})
		shown = i
		// Context after is added lazily: up to ctx lines, stopping at the next match.
		for j := i + 1; j <= min(i+ctx, len(lines)-1); j++ {
			if re.Match(bytes.TrimSuffix(lines[j], []byte("\n"))) {
				break
			}
			f.Lines = append(f.Lines, grepLine{Number: j + 1, Text: strings.TrimSuffix(string(lines[j]), "\n")})
			shown = j
		}
	}
	return f
}
