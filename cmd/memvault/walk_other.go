//go:build !unix

package main

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/memvault/memvault/vault"
)

// walk reads the files under SOURCE/memories, or else SOURCE, and returns
// the folder it read. Where there is no openat, each file is opened by its
// path, without following a link in its last element where the system can,
// and checked for what it is once open.
func (w *walker) walk(source, to string) (string, error) {
	base := memoriesFolder(source)
	return base, filepath.WalkDir(base, func(p string, d fs.DirEntry, werr error) error {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		if p == base {
			return werr
		}
		rel, _ := filepath.Rel(base, p)
		mp := path.Join(to, filepath.ToSlash(rel))
		skip := func(reason string) error {
			w.skip(mp, reason)
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case werr != nil:
			return skip("cannot be read: " + werr.Error())
		case d.Name() == ".git":
			return skip("git metadata, not memory (--history imports a repository's commits)")
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return skip("a symbolic link")
		case !d.Type().IsRegular():
			return skip("not a regular file")
		}
		data, reason := readImportFile(p, w.limits.MaxFileSize)
		if reason != "" {
			return skip(reason)
		}
		w.files = append(w.files, vault.ImportFile{Path: mp, Data: data})
		if w.full() {
			return filepath.SkipAll
		}
		return nil
	})
}

// memoriesFolder is SOURCE/memories when it is a folder, else SOURCE.
func memoriesFolder(source string) string {
	m := filepath.Join(source, "memories")
	if fi, err := os.Lstat(m); err == nil && fi.IsDir() {
		return m
	}
	return source
}
