//go:build unix

package main

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/memvault/memvault/vault"
)

// walk reads the files under SOURCE/memories, or else SOURCE, and returns
// the folder it read. SOURCE is opened as the user named it; from there on
// every folder and file is opened relative to the descriptor of the folder
// that holds it, with O_NOFOLLOW, and no path is looked up twice: a folder
// swapped for a symbolic link during the walk (filepath.WalkDir read a
// subfolder by its path, and once imported a file outside SOURCE) is opened
// as the link it is now, and left out.
func (w *walker) walk(source, to string) (string, error) {
	root, err := os.Open(source)
	if err != nil {
		return source, err
	}
	if fi, err := root.Stat(); err != nil || !fi.IsDir() {
		root.Close()
		if err == nil {
			err = &fs.PathError{Op: "open", Path: source, Err: unix.ENOTDIR}
		}
		return source, err
	}
	base := source
	if fd, err := unix.Openat(int(root.Fd()), "memories", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
		root.Close()
		base = filepath.Join(source, "memories")
		root = os.NewFile(uintptr(fd), base)
	}
	return base, w.dir(root, to)
}

// maxWalkPath bounds the memory paths a walk goes down to, and so how many
// folders it holds open at once: no memory path is longer.
const maxWalkPath = 4096

// dir reads the folder d, which it closes, as the memory folder mp.
func (w *walker) dir(d *os.File, mp string) error {
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		w.skip(mp, "cannot be read: "+err.Error())
		return nil
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	dfd := int(d.Fd())
	for _, e := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		p := path.Join(mp, name)
		t := e.Type()
		switch {
		case name == ".git":
			w.skip(p, "git metadata, not memory (--history imports a repository's commits)")
			continue
		case t&fs.ModeSymlink != 0:
			w.skip(p, "a symbolic link")
			continue
		case t&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice|fs.ModeIrregular) != 0:
			w.skip(p, "not a regular file")
			continue
		case len(p) > maxWalkPath:
			w.skip(p, "path over 4096 bytes")
			continue
		}
		// What the listing said is only a hint: what is opened is judged. A
		// FIFO or a device put here since is not waited on (O_NONBLOCK).
		fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		switch {
		case errors.Is(err, unix.ELOOP):
			w.skip(p, "a symbolic link")
			continue
		case err != nil:
			w.skip(p, "cannot be read: "+err.Error())
			continue
		}
		f := os.NewFile(uintptr(fd), name)
		fi, err := f.Stat()
		if err == nil && fi.IsDir() {
			if err := w.dir(f, p); err != nil {
				return err
			}
			if w.full() {
				return nil
			}
			continue
		}
		data, reason := readOpened(f, w.limits.MaxFileSize)
		if reason != "" {
			w.skip(p, reason)
			continue
		}
		w.files = append(w.files, vault.ImportFile{Path: p, Data: data})
		if w.full() {
			return nil
		}
	}
	return nil
}
