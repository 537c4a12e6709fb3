package main

import (
	"context"
	"fmt"
	"io"
	"path"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault"
)

// maxSourceCommits bounds the history an import --history replays.
const maxSourceCommits = 100_000

// importHistory replays each first-parent commit of the git repository at source,
// oldest first, as one import commit with its author and time. Commits an earlier
// run brought in (by their Import-Commit trailer) are passed over.
func importHistory(ctx context.Context, v *vault.Vault, source string, o importOptions, out, errw io.Writer) error {
	src, err := gitlog.OpenSource(source)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	commits, err := src.History(ctx, maxSourceCommits)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	done, err := v.ImportedCommits(ctx)
	if err != nil {
		return err
	}
	limits := v.Limits()
	var total vault.ImportResult
	skipped := map[string]bool{}
	var prev []string
	replayed := 0
	for i, c := range commits {
		files, skips, err := sourceFiles(ctx, src, c.TreeHash, o.to, limits)
		if err != nil {
			return fmt.Errorf("import: source commit %s: %w", c.Hash.String()[:12], err)
		}
		names := make(map[string]bool, len(files))
		for _, f := range files {
			names[f.Path] = true
		}
		var gone []string
		for _, p := range prev {
			if !names[p] {
				gone = append(gone, p)
			}
		}
		prev = prev[:0]
		for _, f := range files {
			prev = append(prev, f.Path)
		}
		if done[c.Hash.String()] {
			continue
		}
		res, err := v.Import(ctx, files, vault.ImportOptions{
			Overwrite: o.overwrite || i > 0, Delete: gone, DryRun: o.dryRun,
			Author: c.Author.Name, When: c.Author.When, SourceCommit: c.Hash.String(),
		})
		if err != nil {
			return fmt.Errorf("import: source commit %s: %w", c.Hash.String()[:12], err)
		}
		if res.Changed() {
			replayed++
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
		if res.Commit != "" {
			total.Commit = res.Commit
		}
	}
	fmt.Fprintf(out, "%d of %d source commits replayed\n", replayed, len(commits))
	printImport(out, total, o)
	return nil
}

// sourceFiles reads the files of a source tree as files for the memory folder to.
func sourceFiles(ctx context.Context, src *gitlog.SourceRepo, tree gitlog.Hash, to string, limits vault.Limits) (files []vault.ImportFile, skipped []vault.ImportSkip, err error) {
	max := limits.MaxFiles
	if max <= 0 {
		max = vault.DefaultMaxFiles
	}
	entries, err := src.Files(ctx, tree, max)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		mp := path.Join(to, e.Path)
		skip := func(reason string) { skipped = append(skipped, vault.ImportSkip{Path: mp, Reason: reason}) }
		switch {
		case e.Mode == filemode.Symlink:
			skip("a symbolic link")
			continue
		case e.Mode == filemode.Submodule:
			skip("a submodule")
			continue
		case e.Size > limits.MaxFileSize:
			skip(fmt.Sprintf("%d bytes, over the file size limit of %d", e.Size, limits.MaxFileSize))
			continue
		}
		data, err := src.ReadFile(e, limits.MaxFileSize)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, vault.ImportFile{Path: mp, Data: data})
	}
	return files, skipped, nil
}
