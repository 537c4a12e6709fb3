// Package disk is the file layer of gitlog: the one way gitlog changes the file
// system. Every create, write, truncate, sync, rename, link and removal of a
// repository's files goes through a Disk. In production a Disk calls the os
// package and nothing more. Tests give it a Hook that sees each operation
// before it happens and may refuse it and every one after: a process stopped
// dead at that point, or, with what was not yet synced forgotten, a machine
// that lost its power (gitlog's crash explorer).
//
// It also holds what gitlog's writers share about files: the file lock
// (TryLock, LockContext), the sync of a file's data (Datasync) and of a folder
// (SyncDir), the writeback of a file being written (StartWriteback), and the
// atomic replacement of a file (WriteFileAtomic: a temporary file, synced,
// renamed over the old one, its folder synced).
package disk

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// A Disk changes files, telling its Hook first.
type Disk struct {
	// Hook, when set, sees each operation before it happens; an error stops
	// the operation and is returned in its place.
	Hook func(op Op) error
}

// OS is the Disk of repositories opened in production: no hook.
var OS = &Disk{}

// Kind is what an Op does.
type Kind int

const (
	Create   Kind = iota + 1 // OpenFile that may create: Path, Flag
	Write                    // F at Off (-1: appended), Data
	Truncate                 // F to Size
	Sync                     // F, data and metadata
	Datasync                 // F, data
	Rename                   // Path to To
	Link                     // Path to To
	Remove                   // Path
	Mkdir                    // Path and its parents
	SyncDir                  // Path, a folder
	Opened                   // not an operation: F was opened at Path, with Flag
)

// Op is one operation, as a hook sees it before it happens.
type Op struct {
	Kind Kind
	Path string
	To   string
	F    *os.File
	Flag int
	Off  int64
	Data []byte
	Size int64
}

func (d *Disk) before(op Op) error {
	if d.Hook == nil {
		return nil
	}
	return d.Hook(op)
}

// OpenFile is os.OpenFile; a flag that may create or write goes through the
// hook.
func (d *Disk) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	if flag&(os.O_CREATE|os.O_WRONLY|os.O_RDWR|os.O_TRUNC) != 0 {
		if err := d.before(Op{Kind: Create, Path: name, Flag: flag}); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(name, flag, perm)
	if err == nil && d.Hook != nil {
		// The hook learns which file the handle is.
		if err := d.Hook(Op{Kind: Opened, Path: name, F: f, Flag: flag}); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, err
}

// CreateTemp makes a new file in dir named prefix and random hex.
func (d *Disk) CreateTemp(dir, prefix string, perm fs.FileMode) (*os.File, error) {
	var rnd [8]byte
	rand.Read(rnd[:])
	return d.OpenFile(filepath.Join(dir, prefix+hex.EncodeToString(rnd[:])), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
}

// Write writes p to f at its offset.
func (d *Disk) Write(f *os.File, p []byte) (int, error) {
	if d.Hook != nil {
		off, _ := f.Seek(0, io.SeekCurrent)
		if err := d.Hook(Op{Kind: Write, F: f, Off: off, Data: p}); err != nil {
			return 0, err
		}
	}
	return f.Write(p)
}

// Truncate cuts f to size bytes.
func (d *Disk) Truncate(f *os.File, size int64) error {
	if err := d.before(Op{Kind: Truncate, F: f, Size: size}); err != nil {
		return err
	}
	return f.Truncate(size)
}

// Sync flushes f's data and metadata to stable storage.
func (d *Disk) Sync(f *os.File) error {
	if err := d.before(Op{Kind: Sync, F: f}); err != nil {
		return err
	}
	return f.Sync()
}

// Datasync flushes f's data (and the size that reads it) to stable storage.
func (d *Disk) Datasync(f *os.File) error {
	if err := d.before(Op{Kind: Datasync, F: f}); err != nil {
		return err
	}
	return fdatasync(f)
}

// Rename is os.Rename.
func (d *Disk) Rename(from, to string) error {
	if err := d.before(Op{Kind: Rename, Path: from, To: to}); err != nil {
		return err
	}
	return os.Rename(from, to)
}

// Link is os.Link.
func (d *Disk) Link(from, to string) error {
	if err := d.before(Op{Kind: Link, Path: from, To: to}); err != nil {
		return err
	}
	return os.Link(from, to)
}

// Remove is os.Remove.
func (d *Disk) Remove(name string) error {
	if err := d.before(Op{Kind: Remove, Path: name}); err != nil {
		return err
	}
	return os.Remove(name)
}

// MkdirAll is os.MkdirAll.
func (d *Disk) MkdirAll(name string, perm fs.FileMode) error {
	if err := d.before(Op{Kind: Mkdir, Path: name}); err != nil {
		return err
	}
	return os.MkdirAll(name, perm)
}

// SyncDir flushes a folder's entries, so a rename into it survives a crash.
// Windows cannot flush a folder, and NTFS journals its renames itself.
func (d *Disk) SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	if err := d.before(Op{Kind: SyncDir, Path: dir}); err != nil {
		return err
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

// TempPrefix starts the name of a temporary file WriteTemp makes; 16 hex
// digits follow.
const TempPrefix = ".tmp-"

// IsTempName tells whether name is one WriteTemp gives.
func IsTempName(name string) bool {
	hexPart, ok := strings.CutPrefix(name, TempPrefix)
	if !ok || len(hexPart) != 16 {
		return false
	}
	for i := 0; i < len(hexPart); i++ {
		if c := hexPart[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// WriteTemp writes data to a new temporary file in dir, synced when durable is
// set, and returns its path.
func (d *Disk) WriteTemp(dir string, data []byte, perm fs.FileMode, durable bool) (string, error) {
	f, err := d.CreateTemp(dir, TempPrefix, perm)
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, err = d.Write(f, data)
	if err == nil && durable {
		err = d.Sync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		d.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// WriteFileAtomicVia writes data to a temporary file in tmpDir and renames it
// over p (tmpDir must be on p's file system), syncing the file and p's folder
// when durable is set. Refs use the state folder: a temporary file under refs/
// is itself a ref to anyone listing them meanwhile (go-git failed with "ref
// file is empty").
func (d *Disk) WriteFileAtomicVia(tmpDir, p string, data []byte, perm fs.FileMode, durable bool) error {
	tmp, err := d.WriteTemp(tmpDir, data, perm, durable)
	if err != nil {
		return err
	}
	if err := d.Rename(tmp, p); err != nil {
		d.Remove(tmp)
		return err
	}
	if durable {
		return d.SyncDir(filepath.Dir(p))
	}
	return nil
}

// WriteFileAtomic is WriteFileAtomicVia with the temporary file beside p.
func (d *Disk) WriteFileAtomic(p string, data []byte, perm fs.FileMode, durable bool) error {
	return d.WriteFileAtomicVia(filepath.Dir(p), p, data, perm, durable)
}

// Writer is f as an io.Writer whose writes go through d.
func (d *Disk) Writer(f *os.File) io.Writer { return diskWriter{d, f} }

type diskWriter struct {
	d *Disk
	f *os.File
}

func (w diskWriter) Write(p []byte) (int, error) { return w.d.Write(w.f, p) }
