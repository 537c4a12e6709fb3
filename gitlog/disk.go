package gitlog

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

// disk is the one way gitlog changes the file system: every create, write,
// truncate, sync, rename, link and removal of a repository's files goes
// through it. In production it calls the os package and nothing more. Tests
// give it a hook that sees each operation before it happens and may refuse it
// and every one after: a process stopped dead at that point (see the crash
// explorer in crash_test.go), or, with what was not yet synced forgotten, a
// machine that lost its power.
type disk struct {
	hook func(op diskOp) error
}

// osDisk is the disk of repositories opened by Open and Init.
var osDisk = &disk{}

type diskOpKind int

const (
	opCreate   diskOpKind = iota + 1 // OpenFile that may create: path, flag
	opWrite                          // f at off (-1: appended), data
	opTruncate                       // f to size
	opSync                           // f, data and metadata
	opDatasync                       // f, data
	opRename                         // path to to
	opLink                           // path to to
	opRemove                         // path
	opMkdir                          // path and its parents
	opSyncDir                        // path, a folder
	opOpened                         // not an operation: f was opened at path, with flag
)

// diskOp is one operation, as a hook sees it before it happens.
type diskOp struct {
	kind diskOpKind
	path string
	to   string
	f    *os.File
	flag int
	off  int64
	data []byte
	size int64
}

func (d *disk) before(op diskOp) error {
	if d.hook == nil {
		return nil
	}
	return d.hook(op)
}

func (d *disk) openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	if flag&(os.O_CREATE|os.O_WRONLY|os.O_RDWR|os.O_TRUNC) != 0 {
		if err := d.before(diskOp{kind: opCreate, path: name, flag: flag}); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(name, flag, perm)
	if err == nil && d.hook != nil {
		// The hook learns which file the handle is.
		if err := d.hook(diskOp{kind: opOpened, path: name, f: f, flag: flag}); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, err
}

// createTemp makes a new file in dir named prefix and random hex.
func (d *disk) createTemp(dir, prefix string, perm fs.FileMode) (*os.File, error) {
	var rnd [8]byte
	rand.Read(rnd[:])
	return d.openFile(filepath.Join(dir, prefix+hex.EncodeToString(rnd[:])), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
}

func (d *disk) write(f *os.File, p []byte) (int, error) {
	if d.hook != nil {
		off, _ := f.Seek(0, io.SeekCurrent)
		if err := d.hook(diskOp{kind: opWrite, f: f, off: off, data: p}); err != nil {
			return 0, err
		}
	}
	return f.Write(p)
}

func (d *disk) truncate(f *os.File, size int64) error {
	if err := d.before(diskOp{kind: opTruncate, f: f, size: size}); err != nil {
		return err
	}
	return f.Truncate(size)
}

func (d *disk) sync(f *os.File) error {
	if err := d.before(diskOp{kind: opSync, f: f}); err != nil {
		return err
	}
	return f.Sync()
}

func (d *disk) datasync(f *os.File) error {
	if err := d.before(diskOp{kind: opDatasync, f: f}); err != nil {
		return err
	}
	return fdatasync(f)
}

func (d *disk) rename(from, to string) error {
	if err := d.before(diskOp{kind: opRename, path: from, to: to}); err != nil {
		return err
	}
	return os.Rename(from, to)
}

func (d *disk) link(from, to string) error {
	if err := d.before(diskOp{kind: opLink, path: from, to: to}); err != nil {
		return err
	}
	return os.Link(from, to)
}

func (d *disk) remove(name string) error {
	if err := d.before(diskOp{kind: opRemove, path: name}); err != nil {
		return err
	}
	return os.Remove(name)
}

func (d *disk) mkdirAll(name string, perm fs.FileMode) error {
	if err := d.before(diskOp{kind: opMkdir, path: name}); err != nil {
		return err
	}
	return os.MkdirAll(name, perm)
}

// syncDir flushes a folder's entries, so a rename into it survives a crash.
// Windows cannot flush a folder, and NTFS journals its renames itself.
func (d *disk) syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	if err := d.before(diskOp{kind: opSyncDir, path: dir}); err != nil {
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

// tempPrefix starts the name of a temporary file writeTemp makes; 16 hex
// digits follow.
const tempPrefix = ".tmp-"

// isTempName tells whether name is one writeTemp gives.
func isTempName(name string) bool {
	hexPart, ok := strings.CutPrefix(name, tempPrefix)
	return ok && len(hexPart) == 16 && isHex(hexPart)
}

// writeTemp writes data to a new temporary file in dir, synced when durable is
// set, and returns its path.
func (d *disk) writeTemp(dir string, data []byte, perm fs.FileMode, durable bool) (string, error) {
	f, err := d.createTemp(dir, tempPrefix, perm)
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, err = d.write(f, data)
	if err == nil && durable {
		err = d.sync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		d.remove(tmp)
		return "", err
	}
	return tmp, nil
}

// writeFileAtomicVia writes data to a temporary file in tmpDir and renames it
// over p (tmpDir must be on p's file system), syncing the file and p's folder
// when durable is set. Refs use the state folder: a temporary file under refs/
// is itself a ref to anyone listing them meanwhile (go-git failed with "ref
// file is empty").
func (d *disk) writeFileAtomicVia(tmpDir, p string, data []byte, perm fs.FileMode, durable bool) error {
	tmp, err := d.writeTemp(tmpDir, data, perm, durable)
	if err != nil {
		return err
	}
	if err := d.rename(tmp, p); err != nil {
		d.remove(tmp)
		return err
	}
	if durable {
		return d.syncDir(filepath.Dir(p))
	}
	return nil
}

// writeFileAtomic is writeFileAtomicVia with the temporary file beside p.
func (d *disk) writeFileAtomic(p string, data []byte, perm fs.FileMode, durable bool) error {
	return d.writeFileAtomicVia(filepath.Dir(p), p, data, perm, durable)
}

// writer is f as an io.Writer whose writes go through d.
func (d *disk) writer(f *os.File) io.Writer { return diskWriter{d, f} }

type diskWriter struct {
	d *disk
	f *os.File
}

func (w diskWriter) Write(p []byte) (int, error) { return w.d.write(w.f, p) }
