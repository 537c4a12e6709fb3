package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

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
		fi, err := d.Info()
		if err != nil {
			return skip("cannot be read: " + err.Error())
		}
		if fi.Size() > limits.MaxFileSize {
			return skip(fmt.Sprintf("%d bytes, over the file size limit of %d", fi.Size(), limits.MaxFileSize))
		}
		data, err := readLimited(p, limits.MaxFileSize)
		if err != nil {
			return skip("cannot be read: " + err.Error())
		}
		files = append(files, vault.ImportFile{Path: mp, Data: data})
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("import: %w", err)
	}
	return files, skipped, nil
}

// readLimited reads the file at p, refusing one that grew past max meanwhile.
func readLimited(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("over the file size limit of %d", max)
	}
	return data, err
}
