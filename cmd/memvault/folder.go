package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/memvault/memvault/vault"
)

// The plain folder memvault import reads: an SDK's local-filesystem memory
// folder, a folder memvault export wrote, or any folder of text files.

// readFolder reads the files under SOURCE/memories, when SOURCE is an SDK
// base folder (or a folder export wrote), or else SOURCE, as files for the
// memory folder to. What cannot be a
// memory file is returned in skipped, by memory path. Where the system can
// (see walkFolder), every folder and file under SOURCE is opened relative to
// the folder that holds it, never following a symbolic link, so that a
// folder swapped for a link during the walk is not followed out of SOURCE.
func readFolder(ctx context.Context, source, to string, limits vault.Limits) (files []vault.ImportFile, skipped []vault.ImportSkip, err error) {
	w := &walker{ctx: ctx, limits: limits}
	base, err := w.walk(source, to)
	if err != nil {
		return nil, nil, fmt.Errorf("import: %w", err)
	}
	if limits.MaxFiles > 0 && len(w.files) > limits.MaxFiles {
		return nil, nil, fmt.Errorf("import: %s holds more than %d files, the vault's limit (memvault.maxFiles in its config); nothing imported", base, limits.MaxFiles)
	}
	return w.files, w.skipped, nil
}

// walker gathers the files of a walk, and what it leaves out.
type walker struct {
	ctx     context.Context
	limits  vault.Limits
	files   []vault.ImportFile
	skipped []vault.ImportSkip
}

func (w *walker) skip(mp, reason string) {
	w.skipped = append(w.skipped, vault.ImportSkip{Path: mp, Reason: reason})
}

// full tells whether the walk holds more files than the vault may: it stops
// there, and readFolder says so.
func (w *walker) full() bool {
	return w.limits.MaxFiles > 0 && len(w.files) > w.limits.MaxFiles
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
	return readOpened(f, max)
}

// readOpened reads f, which it closes, as readImportFile does.
func readOpened(f *os.File, max int64) ([]byte, string) {
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
