package gitlog

// Watching uses inotify directly rather than a portable watcher library: it is one
// system call interface, golang.org/x/sys/unix is here already, and the library
// would add a dependency for what fits in this file.
//
// A branch moves in one of two ways. memvault (and git) write the new value to a
// temporary file and rename it onto refs/heads/NAME, which refs/heads sees as
// IN_MOVED_TO; git pack-refs and a push may rewrite packed-refs instead, seen in
// the repository's directory. memvault itself moves a branch first in its
// journal (memvault/journal), with an append, seen as IN_MODIFY; the branch's
// file follows at the next flush. Watches are not recursive, so the pack files
// a flush writes raise no events.

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memvault/memvault/gitlog/internal/journal"
	"golang.org/x/sys/unix"
)

const watchMask = unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY

func (r *Repo) watch(ctx context.Context) (<-chan struct{}, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("gitlog: watch %s: %w", r.dir, err)
	}
	// Non-blocking, so reads go through the runtime's poller and Close ends them.
	f := os.NewFile(uintptr(fd), "inotify")
	// relevant says, for each watch, which names in its directory are refs.
	relevant := map[int32]func(name string) bool{}
	dirs := []struct {
		path string
		is   func(string) bool
	}{
		{r.dir, func(n string) bool { return n == "packed-refs" || n == "HEAD" }},
		{filepath.Join(r.dir, "refs", "heads"), func(n string) bool { return !strings.HasSuffix(n, ".lock") }},
		{filepath.Join(r.dir, stateDir), func(n string) bool { return n == journal.Name }},
	}
	for _, d := range dirs {
		wd, err := unix.InotifyAddWatch(fd, d.path, watchMask)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("gitlog: watch %s: %w", d.path, err)
		}
		relevant[int32(wd)] = d.is
	}
	ch := make(chan struct{}, 1)
	stop := context.AfterFunc(ctx, func() { f.Close() })
	go func() {
		defer close(ch)
		defer stop()
		buf := make([]byte, 64<<10)
		for {
			n, err := f.Read(buf)
			if err != nil {
				return // closed: ctx is done (or the watch itself failed)
			}
			moved := refsMoved(buf[:n], relevant)
			if moved {
				notify(ch)
			}
			if len(relevant) == 0 {
				return // the directories are gone: nothing will move again
			}
		}
	}()
	return ch, nil
}

// refsMoved reports whether the inotify events in buf touch a ref. It removes
// from relevant the watches that ended (their directory was removed).
func refsMoved(buf []byte, relevant map[int32]func(string) bool) bool {
	moved := false
	for len(buf) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(buf[0:]))
		mask := binary.NativeEndian.Uint32(buf[4:])
		size := unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(buf[12:]))
		if size > len(buf) {
			return true // cannot happen; look rather than miss a move
		}
		name := strings.TrimRight(string(buf[unix.SizeofInotifyEvent:size]), "\x00")
		buf = buf[size:]
		switch is := relevant[wd]; {
		case mask&unix.IN_Q_OVERFLOW != 0:
			moved = true
		case mask&unix.IN_IGNORED != 0:
			delete(relevant, wd)
		case is != nil && name != "" && is(name):
			moved = true
		}
	}
	return moved
}
