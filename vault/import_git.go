package vault

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/memvault/memvault/gitlog"
	gitsource "github.com/memvault/memvault/gitlog/source"
)

// maxSourceCommits bounds the history ImportHistory replays.
const maxSourceCommits = 100_000

// HistoryImport says what ImportHistory did.
type HistoryImport struct {
	ImportResult     // over all the commits replayed; Commit is the last one made
	Commits      int // first-parent commits in the source
	Replayed     int // of them, those that changed the vault
}

// HistoryOptions say how ImportHistory replays a source history.
type HistoryOptions struct {
	To        string                // the memory folder the source's files go to
	Overwrite bool                  // as for ImportOptions, for every commit replayed
	Progress  func(done, total int) // called before each source commit and at the end, when set
	// Screen is ImportOptions.Screen, for the files of every commit replayed.
	Screen func(ImportFile) (f ImportFile, skip, warn string)
}

// ImportHistory replays each first-parent commit of the git repository at source
// (a working tree or a bare repository), oldest first, as one Import into the
// memory folder opts.To, with the commit's author and time. A file deleted by a source
// commit is deleted in the vault too; symbolic links, submodules and files over
// the file size limit are skipped and listed. Commits an earlier run brought in
// (by their Import-Commit trailer) are passed over, so a re-run brings in only
// what is new. Without opts.Overwrite, the import touches only what it wrote: a
// file is replaced or deleted only while it holds what the source commit before
// had there (so a file of the vault's own, or one changed since, is kept and
// listed); with it, files are replaced and deleted as the source says. Files
// are read when they are judged and again when they are written, a few at a
// time; the run writes at most as many bytes of files as one Import may, over
// all its commits, and stops before the commit that would pass that, with an
// error wrapping ErrVaultFull (the commits before it stay).
func (v *Vault) ImportHistory(ctx context.Context, source string, opts HistoryOptions) (HistoryImport, error) {
	var total HistoryImport
	src, err := gitsource.Open(source)
	if err != nil {
		return total, fmt.Errorf("vault: import: %w", err)
	}
	commits, err := src.History(ctx, maxSourceCommits)
	if err != nil {
		return total, fmt.Errorf("vault: import: %w", err)
	}
	total.Commits = len(commits)
	done, err := v.importedCommits(ctx)
	if err != nil {
		return total, err
	}
	skipped := map[string]bool{}
	var prev []ImportFile
	var written int64 // bytes of files this run has written, bounded by maxImport
	progress := opts.Progress
	if progress == nil {
		progress = func(int, int) {}
	}
	for i, c := range commits {
		progress(i, len(commits))
		files, skips, err := v.sourceFiles(ctx, src, c.TreeHash, opts.To)
		if err != nil {
			return total, fmt.Errorf("vault: import: source commit %.12s: %w", c.Hash, err)
		}
		gone := deletedSince(prev, files)
		replay := make(map[string]gitlog.Hash, len(prev))
		for _, f := range prev {
			replay[f.Path] = f.source
		}
		prev = files
		if done[c.Hash.String()] {
			continue
		}
		// Without Overwrite, a commit replaces and deletes only what the
		// commit before it wrote and nothing changed since.
		res, err := v.Import(ctx, files, ImportOptions{
			Overwrite: opts.Overwrite, Delete: gone, replay: replay,
			Author: c.Author.Name, When: c.Author.When, SourceCommit: c.Hash.String(),
			Screen: opts.Screen, written: &written,
		})
		if err != nil {
			return total, fmt.Errorf("vault: import: source commit %.12s (%d of %d replayed before it): %w", c.Hash, total.Replayed, total.Commits, err)
		}
		if res.Changed() {
			total.Replayed++
		}
		total.Added = append(total.Added, res.Added...)
		total.Replaced = append(total.Replaced, res.Replaced...)
		total.Deleted = append(total.Deleted, res.Deleted...)
		total.Kept = append(total.Kept, res.Kept...)
		total.Unchanged = res.Unchanged
		for _, s := range append(skips, res.Skipped...) {
			if key := s.Path + "\x00" + s.Reason; !skipped[key] {
				skipped[key] = true
				total.Skipped = append(total.Skipped, s)
			}
		}
		for _, s := range res.Warnings {
			if key := s.Path + "\x00" + s.Reason; !skipped[key] {
				skipped[key] = true
				total.Warnings = append(total.Warnings, s)
			}
		}
		if res.Commit != "" {
			total.Commit = res.Commit
		}
	}
	progress(len(commits), len(commits))
	return total, nil
}

// deletedSince lists the paths of prev that files no longer holds.
func deletedSince(prev, files []ImportFile) []string {
	names := make(map[string]bool, len(files))
	for _, f := range files {
		names[f.Path] = true
	}
	var gone []string
	for _, f := range prev {
		if !names[f.Path] {
			gone = append(gone, f.Path)
		}
	}
	return gone
}

// sourceFiles reads the files of a source tree as files for the memory folder to.
func (v *Vault) sourceFiles(ctx context.Context, src *gitsource.Repo, tree gitlog.Hash, to string) (files []ImportFile, skipped []ImportSkip, err error) {
	limits := v.Limits()
	max := limits.MaxFiles
	if max <= 0 {
		max = DefaultMaxFiles
	}
	entries, err := src.Files(ctx, tree, max)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		// The source's names are anyone's: a tree entry ".." (or one holding a
		// slash) once joined onto --to wrote, and then deleted, a file outside
		// it. Each segment must be a name git itself writes.
		var bad string
		for _, seg := range strings.Split(e.Path, "/") {
			if bad = badGitName(seg); bad != "" {
				break
			}
		}
		mp := path.Join(to, e.Path)
		if bad != "" || !strings.HasPrefix(mp, strings.TrimSuffix(to, "/")+"/") {
			skipped = append(skipped, ImportSkip{Path: strings.TrimSuffix(to, "/") + "/" + e.Path, Reason: "not a name git writes in a tree (" + bad + ")"})
			continue
		}
		skip := func(reason string) { skipped = append(skipped, ImportSkip{Path: mp, Reason: reason}) }
		switch {
		case e.Mode == modeSymlink:
			skip("a symbolic link")
			continue
		case e.Mode == modeSubmodule:
			skip("a submodule")
			continue
		case e.Size > limits.MaxFileSize:
			skip(fmt.Sprintf("%d bytes, over the file size limit of %d", e.Size, limits.MaxFileSize))
			continue
		}
		read := func() ([]byte, error) { return src.ReadFile(e, limits.MaxFileSize) }
		files = append(files, ImportFile{Path: mp, read: read, source: e.Hash})
	}
	return files, skipped, nil
}
