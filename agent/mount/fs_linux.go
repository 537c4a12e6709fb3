//go:build linux

package mount

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memvault/memvault/vault"
)

// FS is a vault mounted as a folder.
type FS struct {
	v     Store
	opts  Options
	dir   string
	srv   *fuse.Server
	stop  context.CancelFunc
	done  chan struct{} // closed when the watcher and the reaper are gone
	start time.Time
	uid   uint32
	gid   uint32

	// mu guards everything below, and runs commits one at a time, so that what
	// the kernel is told always matches the state a commit left.
	mu    sync.Mutex
	snap  *vault.Snapshot
	lists map[string]map[string]vault.Entry // listings of snap, by directory
	files map[string]*memFile               // files held in memory, by memory path
	dirs  map[string]bool                   // empty directories, in memory only
	gone  map[string]tombstone              // files renamed to a scratch name
}

// memFile is a file held in memory: a scratch file, or a file open for writing,
// whose content is committed when it is closed.
type memFile struct {
	path    string
	data    []byte
	dirty   bool   // changed since the last commit
	wrote   bool   // written to (write(2)) since the last commit
	scratch bool   // never committed
	opener  string // the program that created or last opened it for writing
	refused bool   // its content was refused by the screen, and not written to since
	opens   int
	removed bool // unlinked or replaced while open
	mtime   time.Time
}

// tombstone is a vault file renamed to a scratch name (an editor's backup). It
// looks deleted; its deletion is committed after Options.DeleteDelay, unless a
// new file is written at its path first, which is then one commit.
type tombstone struct {
	at    time.Time
	agent string
}

// Start mounts v on dir, an existing empty folder, and serves it until Close,
// an unmount (Unmount, fusermount3 -u, umount) or the end of ctx. Wait waits
// for the end. Only the user who mounts it can enter the folder.
//
// With Options.ReadOnly the kernel refuses every write with EROFS. When v
// holds a change for a person (a *vault.HeldError: a deletion of many files),
// the call fails with EACCES and Options.Log says how to approve it.
func Start(ctx context.Context, v Store, dir string, opts Options) (*FS, error) {
	if opts.Agent == "" {
		opts.Agent = "mount"
	}
	if opts.DeleteDelay <= 0 {
		opts.DeleteDelay = time.Second
	}
	f := &FS{v: v, opts: opts, dir: dir, start: time.Now(), done: make(chan struct{}),
		uid: uint32(os.Getuid()), gid: uint32(os.Getgid()),
		files: map[string]*memFile{}, dirs: map[string]bool{}, gone: map[string]tombstone{}}
	if err := f.refresh(ctx); err != nil {
		return nil, err
	}
	// The kernel caches no entry, attribute or page of a file: every stat asks
	// this process, which answers from the vault's newest state, so a change
	// from sync or another process shows at once, and no plaintext sits in the
	// page cache (files are opened with direct I/O below).
	zero := time.Duration(0)
	mopts := &fs.Options{
		EntryTimeout: &zero, AttrTimeout: &zero, NegativeTimeout: &zero,
		UID: f.uid, GID: f.gid,
		MountOptions: fuse.MountOptions{
			FsName: "memvault", Name: "memvault",
			// Root mounts with mount(2) itself; anyone else through fusermount3.
			DirectMount:   true,
			DisableXAttrs: true,
			// No allow_other: the kernel lets only this user in; and it checks
			// the modes (0700, 0600) itself.
			Options: []string{"default_permissions"},
		},
	}
	if opts.ReadOnly {
		mopts.MountOptions.Options = append(mopts.MountOptions.Options, "ro")
	}
	srv, err := fs.Mount(dir, &node{f: f}, mopts)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w%s", dir, err, helperHint(err))
	}
	f.srv = srv
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	f.stop = stop
	go f.background(wctx)
	go func() {
		select {
		case <-ctx.Done():
			_ = f.Close()
		case <-wctx.Done():
		}
	}()
	return f, nil
}

// helperHint says what to install when mounting needed the helper and it is missing.
func helperHint(err error) string {
	if os.Geteuid() == 0 {
		return ""
	}
	if _, lerr := exec.LookPath("fusermount3"); lerr != nil {
		if _, lerr := exec.LookPath("fusermount"); lerr != nil {
			return " (mounting as a user needs fusermount3: install the fuse3 package)"
		}
	}
	return ""
}

// Dir is the folder the vault is mounted on.
func (f *FS) Dir() string { return f.dir }

// Wait waits until the folder is unmounted, then commits the deletions still
// pending (files an editor renamed to a backup name and did not write again).
func (f *FS) Wait() error {
	f.srv.Wait()
	f.stop()
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reap(context.Background(), true)
}

// Close unmounts the folder; Wait then returns.
func (f *FS) Close() error {
	err := f.srv.Unmount()
	if err != nil && !isNotMounted(err) {
		return fmt.Errorf("unmount %s: %w", f.dir, err)
	}
	return nil
}

func isNotMounted(err error) bool {
	return errors.Is(err, syscall.EINVAL) || strings.Contains(err.Error(), "not mounted")
}

// Unmount unmounts the vault mounted on dir by another process, which then
// ends. Root unmounts directly; others through fusermount3 (or fusermount).
func Unmount(dir string) error {
	err := syscall.Unmount(dir, 0)
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.EPERM) {
		for _, helper := range []string{"fusermount3", "fusermount"} {
			if p, lerr := exec.LookPath(helper); lerr == nil {
				out, herr := exec.Command(p, "-u", dir).CombinedOutput()
				if herr != nil {
					return fmt.Errorf("unmount %s: %s: %s", dir, helper, strings.TrimSpace(string(out)))
				}
				return nil
			}
		}
	}
	return fmt.Errorf("unmount %s: %w", dir, err)
}

// background follows the vault's branch, so the folder shows what sync and
// other processes commit, and commits the deletions whose delay ran out.
func (f *FS) background(ctx context.Context) {
	defer close(f.done)
	changed, err := f.v.Watch(ctx)
	if err != nil {
		// No watching here: poll.
		changed = nil
	}
	poll := time.NewTicker(2 * time.Second)
	defer poll.Stop()
	reap := time.NewTicker(f.opts.DeleteDelay / 4)
	defer reap.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-changed:
			if !ok {
				return
			}
			f.mu.Lock()
			_ = f.refresh(ctx)
			f.mu.Unlock()
		case <-poll.C:
			if changed == nil {
				f.mu.Lock()
				_ = f.refresh(ctx)
				f.mu.Unlock()
			}
		case <-reap.C:
			f.mu.Lock()
			_ = f.reap(ctx, false)
			f.mu.Unlock()
		}
	}
}

// refresh takes the vault's newest state. f.mu is held.
func (f *FS) refresh(ctx context.Context) error {
	snap, err := f.v.Snapshot(ctx)
	if err != nil {
		return err
	}
	if f.snap == nil || snap.Commit() != f.snap.Commit() {
		f.snap, f.lists = snap, map[string]map[string]vault.Entry{}
	}
	return nil
}

// reap commits the deletion of each tombstone older than the delay, or of
// all with now. f.mu is held.
func (f *FS) reap(ctx context.Context, now bool) error {
	var first error
	for p, t := range f.gone {
		if !now && time.Since(t.at) < f.opts.DeleteDelay {
			continue
		}
		delete(f.gone, p)
		if mf := f.files[p]; mf != nil && !mf.scratch {
			continue // a new file is being written there: its close commits it
		}
		meta := vault.Meta{Command: "delete", Agent: t.agent}
		err := f.v.Update(ctx, meta, func(tx *vault.Tx) error {
			err := tx.Remove(p)
			if errors.Is(err, vault.ErrNotExist) {
				return nil
			}
			return err
		})
		f.sayHeld(meta, err)
		if err != nil && first == nil {
			first = err
		}
		f.keepParents(ctx, p)
	}
	return first
}

// list returns the vault's entries of directory p, by name. f.mu is held.
func (f *FS) list(ctx context.Context, p string) map[string]vault.Entry {
	if m, ok := f.lists[p]; ok {
		return m
	}
	es, err := f.snap.List(ctx, p)
	if err != nil {
		return nil
	}
	m := make(map[string]vault.Entry, len(es))
	for _, e := range es {
		m[e.Name] = e
	}
	f.lists[p] = m
	return m
}

// inVault tells what the vault holds at p, tombstones aside. f.mu is held.
func (f *FS) inVault(ctx context.Context, p string) (vault.Kind, int64) {
	if p == vault.Root {
		return vault.KindDir, 0
	}
	e, ok := f.list(ctx, path.Dir(p))[path.Base(p)]
	switch {
	case !ok, e.Err != nil:
		return vault.KindNone, 0
	case e.Dir:
		return vault.KindDir, 0
	}
	return vault.KindFile, e.Size
}

// stat tells what the folder shows at p. f.mu is held.
func (f *FS) stat(ctx context.Context, p string) (kind vault.Kind, size int64, mtime time.Time) {
	if mf := f.files[p]; mf != nil {
		return vault.KindFile, int64(len(mf.data)), mf.mtime
	}
	if _, ok := f.gone[p]; ok {
		return vault.KindNone, 0, time.Time{}
	}
	if k, n := f.inVault(ctx, p); k != vault.KindNone {
		return k, n, f.start
	}
	if f.dirs[p] {
		return vault.KindDir, 0, f.start
	}
	return vault.KindNone, 0, time.Time{}
}

// commit runs fn as one commit, then takes the new state. f.mu is held.
func (f *FS) commit(ctx context.Context, meta vault.Meta, fn func(tx *vault.Tx) error) error {
	// A commit, once begun, is finished even if the caller is interrupted.
	ctx = context.WithoutCancel(ctx)
	if f.opts.ReadOnly {
		return vault.ErrReadOnly // the kernel refuses writes first; nothing else may write either
	}
	err := f.v.Update(ctx, meta, fn)
	f.sayHeld(meta, err)
	if rerr := f.refresh(ctx); err == nil {
		err = rerr
	}
	return err
}

// sayHeld tells the log that a change waits for a person, and how to
// approve it, when err says so.
func (f *FS) sayHeld(meta vault.Meta, err error) {
	var held *vault.HeldError
	if !errors.As(err, &held) {
		return
	}
	how := "memvault review"
	if held.ID != "" {
		how = "memvault review approve " + held.ID[:min(12, len(held.ID))]
	}
	f.say(meta.Command, fmt.Sprintf("not made: it would take what was deleted or emptied to %d of %d memory files, over %s; it waits for a person (%s)",
		held.Files, held.Of, held.Limit, how))
}

// writeFile commits data as the content of p, unless p holds it already, and
// returns what it committed: data as the screen let it through. f.mu is held.
func (f *FS) writeFile(ctx context.Context, p string, data []byte, opener string) ([]byte, error) {
	data, err := f.screen(p, data)
	if err != nil {
		return nil, err
	}
	cmd := "write"
	if k, _ := f.inVault(ctx, p); k == vault.KindNone {
		cmd = "create"
	}
	err = f.commit(ctx, vault.Meta{Command: cmd, Agent: f.agent(ctx, opener)}, func(tx *vault.Tx) error {
		if cur, err := tx.ReadFile(ctx, p); err == nil && bytes.Equal(cur, data) {
			return nil
		}
		return tx.WriteFile(ctx, p, data)
	})
	if err != nil {
		return nil, err
	}
	delete(f.gone, p)
	return data, nil
}

// keepParents keeps each directory above p that a commit emptied (the vault
// keeps no empty directory) as an empty directory in memory, as a folder would
// keep it until rmdir. f.mu is held.
func (f *FS) keepParents(ctx context.Context, p string) {
	for d := path.Dir(p); d != vault.Root && d != "/" && d != "."; d = path.Dir(d) {
		if k, _ := f.inVault(ctx, d); k != vault.KindNone {
			return
		}
		f.dirs[d] = true
	}
}

// moveMemory moves what memory holds under the directory from to to. f.mu is held.
func (f *FS) moveMemory(from, to string) {
	re := func(p string) (string, bool) {
		if strings.HasPrefix(p, from+"/") {
			return to + p[len(from):], true
		}
		return "", false
	}
	for p, mf := range f.files {
		if np, ok := re(p); ok {
			delete(f.files, p)
			mf.path = np
			f.files[np] = mf
		}
	}
	for p := range f.dirs {
		if np, ok := re(p); ok {
			delete(f.dirs, p)
			f.dirs[np] = true
		}
	}
	for p, t := range f.gone {
		if np, ok := re(p); ok {
			delete(f.gone, p)
			f.gone[np] = t
		}
	}
	if f.dirs[from] {
		delete(f.dirs, from)
		f.dirs[to] = true
	}
}

// agent names the program behind a request (see program), or, when the
// request names no process (the kernel sends a file's release on its own),
// the one that opened the file, or else Options.Agent.
func (f *FS) agent(ctx context.Context, opener ...string) string {
	if c, ok := ctx.(*fuse.Context); ok && c.Pid != 0 {
		if name := program(c.Pid); name != "" {
			return name
		}
	}
	for _, o := range opener {
		if o != "" {
			return o
		}
	}
	return f.opts.Agent
}

// program names the program that thread pid belongs to. FUSE gives the
// calling thread, and a thread's name (/proc/PID/comm) is often not the
// program's: Claude Code writes from a thread called "Bun Pool 0". So the
// name is the one the process was run by, argv[0] (which a native install of
// Claude Code keeps as "claude" when its executable is a file named for its
// version), else its executable's, else the name of its main thread. It is
// cut to maxProgram bytes of printable text, "" when there is none.
func program(pid uint32) string {
	proc := "/proc/" + strconv.FormatUint(uint64(pid), 10)
	name := ""
	if b, err := os.ReadFile(proc + "/cmdline"); err == nil {
		arg0, _, _ := strings.Cut(string(b), "\x00")
		name = strings.TrimLeft(path.Base(arg0), "-") // a login shell's "-bash"
	}
	if name == "" || name == "." || name == "/" {
		if exe, err := os.Readlink(proc + "/exe"); err == nil {
			name = path.Base(strings.TrimSuffix(exe, " (deleted)"))
		}
	}
	if name == "" || name == "." || name == "/" {
		if b, err := os.ReadFile(proc + "/status"); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if tgid, ok := strings.CutPrefix(line, "Tgid:"); ok {
					if c, err := os.ReadFile("/proc/" + strings.TrimSpace(tgid) + "/comm"); err == nil {
						name = strings.TrimSpace(string(c))
					}
					break
				}
			}
		}
	}
	return printable(name, maxProgram)
}

// maxProgram bounds the length of a program's name in a commit.
const maxProgram = 64

// printable keeps the printable characters of s, at most max bytes of them.
func printable(s string, max int) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "") {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > max {
			break
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// errno maps a vault error to what the system call returns.
func errno(err error) syscall.Errno {
	var pe *vault.PathError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &pe), errors.Is(err, vault.ErrInvalid), errors.Is(err, vault.ErrRoot):
		return syscall.EINVAL
	case errors.Is(err, vault.ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, vault.ErrExist):
		return syscall.EEXIST
	case errors.Is(err, vault.ErrIsDir):
		return syscall.EISDIR
	case errors.Is(err, vault.ErrNotDir):
		return syscall.ENOTDIR
	case errors.Is(err, vault.ErrTooLarge):
		return syscall.EFBIG
	case errors.Is(err, vault.ErrTooManyFiles), errors.Is(err, vault.ErrVaultFull):
		return syscall.ENOSPC
	case errors.Is(err, vault.ErrReadOnly):
		return syscall.EROFS
	case errors.Is(err, vault.ErrNoIdentity), errors.Is(err, vault.ErrDecrypt), errors.Is(err, errRefused), errors.Is(err, vault.ErrHeld):
		return syscall.EACCES
	}
	return syscall.EIO
}

// nameLimit is the longest name a file or folder called name may have: the
// longest the vault's format stores (143 bytes in a sealed vault), so that a
// longer name fails at create, mkdir or rename, as on any file system with
// short names, not at close after the data was written. A scratch name is
// never committed, and keeps the 255 bytes of a Linux file system; "" asks
// for the vault's own limit.
func (f *FS) nameLimit(name string) int {
	if name != "" && Scratch(name) {
		return 255
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snap.MaxName()
}

// validChild returns the memory path of name in directory dir, or the error
// of a name the memory tool's path rules refuse: ENAMETOOLONG for one over
// limit bytes (255, or the vault's limit, see nameLimit), as any Linux file
// system says, else refused, EINVAL (or ENOENT for a lookup: no such name can
// exist).
func validChild(dir, name string, limit int, refused syscall.Errno) (string, syscall.Errno) {
	if len(name) > limit {
		return "", syscall.ENAMETOOLONG
	}
	p := dir + "/" + name
	if c, err := vault.CleanPath(p); err != nil || c != p {
		return "", refused
	}
	return p, 0
}

// tempFor reports whether name, new in the folder dir, is an atomic writer's
// temporary file for a file beside it (see the package function). f.mu is
// held.
func (f *FS) tempFor(ctx context.Context, dir, name string) bool {
	return tempFor(name, func(base string) bool {
		p := dir + "/" + base
		if mf := f.files[p]; mf != nil {
			return true
		}
		e, ok := f.list(ctx, dir)[base]
		return ok && !e.Dir && e.Err == nil
	})
}
