// Package durable writes the small files vault keeps outside the repository
// (identities, the memory store's sync state) so that a crash leaves the old
// file or the new one, never a part, and syncs the folders that take a
// rename. It is vault's own: the repository's files go through gitlog.
package durable

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// WriteFile writes data to a file at p with mode perm, so that p holds
// either nothing (or its old content) or all of data, even after a crash: the
// bytes go to a temporary file beside p, which is synced and then put in
// place, and the folder is synced. With replace it swaps p by rename; without,
// it never overwrites, and an existing p gives an error wrapping fs.ErrExist.
func WriteFile(p string, data []byte, perm fs.FileMode, replace bool) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(p), ".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // gone already once linked or renamed, but for the link
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if replace {
		err = os.Rename(tmp, p)
	} else {
		err = os.Link(tmp, p) // fails if p exists, where rename would replace it
	}
	if err != nil {
		return err
	}
	return SyncDir(filepath.Dir(p))
}

// SyncDir flushes a folder's entries, so a rename into it survives a crash.
// Windows cannot flush a folder, and NTFS journals its renames itself.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
