// Package plainexport writes a vault's memory files out as plaintext: to a
// folder, laid out as the SDKs' local-filesystem memory tool keeps its base
// folder, or as a tar stream. What it writes is readable by whoever can read
// the place it goes, so it is made readable by its owner alone (files 0600,
// folders 0700), and only a path the memory tool accepts leaves the vault: a
// tree from a remote may be crafted.
package plainexport

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/memvault/memvault/vault"
)

// Sink receives the files of an export, in byte order of their paths, each
// folder before what it holds.
type Sink interface {
	// Dir makes the folder rel, whose parent is made already.
	Dir(rel string) error
	// File writes the file rel with data.
	File(rel string, data []byte) error
	// Close finishes the export.
	Close() error
}

// Files lists the memory files of snap an export writes, and the entries it
// must leave out because they are no memory file memvault can read. With
// from (a memory folder, /memories/SUB), only those at or under it.
func Files(ctx context.Context, snap *vault.Snapshot, from string) ([]string, []vault.EntryError, error) {
	files, bad, err := snap.ReadableFiles(ctx)
	if err != nil || from == "" {
		return files, bad, err
	}
	outside := func(p string) bool { return p != from && !strings.HasPrefix(p, from+"/") }
	files = slices.DeleteFunc(files, outside)
	bad = slices.DeleteFunc(bad, func(e vault.EntryError) bool { return outside(e.Path) })
	return files, bad, nil
}

// Write decrypts each of files and hands it to sink, creating its folders
// first: /memories/P as memories/P, or with from (a memory folder) from/P as
// P. A file that is no memory file memvault can read is left out and
// returned. It stops with an error at a path the memory tool would refuse,
// and when ctx ends. Write does not close sink.
func Write(ctx context.Context, snap *vault.Snapshot, files []string, from string, sink Sink) ([]vault.EntryError, error) {
	var bad []vault.EntryError
	made := map[string]bool{".": true}
	for _, p := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// A tree from a remote may be crafted: only a path the memory tool accepts leaves.
		if clean, err := vault.CleanPath(p); err != nil || clean != p {
			return nil, fmt.Errorf("export %q: not a valid memory path; stopped there", p)
		}
		rel := strings.TrimPrefix(p, "/")
		if from != "" {
			rel = strings.TrimPrefix(p, from+"/")
		}
		data, err := snap.ReadFile(ctx, p)
		var ee *vault.EntryError
		if errors.As(err, &ee) {
			bad = append(bad, *ee)
			continue
		} else if err != nil {
			return nil, err
		}
		if err := mkdirs(sink, path.Dir(rel), made); err != nil {
			return nil, err
		}
		if err := sink.File(rel, data); err != nil {
			return nil, err
		}
	}
	return bad, nil
}

// mkdirs has sink make the folder d and those above it not made yet, outermost first.
func mkdirs(sink Sink, d string, made map[string]bool) error {
	if made[d] {
		return nil
	}
	if err := mkdirs(sink, path.Dir(d), made); err != nil {
		return err
	}
	made[d] = true
	return sink.Dir(d)
}
