package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/memvault/memvault/vault"
)

// The plain folder memvault import reads: an SDK's local-filesystem memory
// folder, a folder memvault export wrote, or any folder of text files.

// memoriesFolder is the folder whose files are imported: SOURCE/memories when
// SOURCE is an SDK base folder (or a folder export wrote), else SOURCE.
func memoriesFolder(source string) string {
	m := filepath.Join(source, "memories")
	if fi, err := os.Lstat(m); err == nil && fi.IsDir() {
		return m
	}
	return source
}

// readFolder reads the files under base as files for the memory folder to. What
// cannot be a memory file is returned in skipped, by memory path.
func readFolder(ctx context.Context, base, to string, limits vault.Limits) (files []vault.ImportFile, skipped []vault.ImportSkip, err error) {
	err = filepath.WalkDir(base, func(p string, d fs.DirEntry, werr error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == base {
			return werr
		}
		rel, _ := filepath.Rel(base, p)
		mp := path.Join(to, filepath.ToSlash(rel))
		skip := func(reason string) error {
			skipped = append(skipped, vault.ImportSkip{Path: mp, Reason: reason})
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
		if limits.MaxFiles > 0 && len(files) >= limits.MaxFiles {
			return fmt.Errorf("import: %s holds more than %d files, the vault's limit (memvault.maxFiles in its config); nothing imported", base, limits.MaxFiles)
		}
		data, reason := readImportFile(p, limits.MaxFileSize)
		if reason != "" {
			return skip(reason)
		}
		files = append(files, vault.ImportFile{Path: mp, Data: data})
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("import: %w", err)
	}
	return files, skipped, nil
}

// readImportFile reads the file at p, or says why it is left out. The listing
// is only a hint: the file may have been swapped since for a symbolic link
// (which once imported its target), a FIFO (which blocked the import past
// SIGTERM) or a device, so it is opened without following a link or waiting,
// and what was opened must be a regular file whose size, from the open file,
// is within max before a byte is read. A file holding NUL bytes is no text
// and is dropped as soon as it is read: a sparse file of a megabyte takes a
// few bytes of disk, and thousands of them once held gigabytes in memory.
func readImportFile(p string, max int64) ([]byte, string) {
	f, err := openNoFollow(p)
	if errors.Is(err, syscall.ELOOP) {
		return nil, "a symbolic link"
	}
	if err != nil {
		return nil, "cannot be read: " + err.Error()
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, "cannot be read: " + err.Error()
	case !fi.Mode().IsRegular():
		return nil, "not a regular file"
	case fi.Size() > max:
		return nil, fmt.Sprintf("%d bytes, over the file size limit of %d", fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	switch {
	case err != nil:
		return nil, "cannot be read: " + err.Error()
	case int64(len(data)) > max:
		return nil, fmt.Sprintf("over the file size limit of %d", max)
	case bytes.IndexByte(data, 0) >= 0:
		return nil, "not text (it holds NUL bytes)"
	}
	return data, ""
}
