// Package mount shows a vault as a folder, through FUSE, so that programs that
// keep memory in files (Claude Code's auto memory, the SDKs' local-filesystem
// memory tools, editors, scripts) keep it in the vault.
//
// The folder is /memories. Every file closed after a write, every rename and
// every delete is one commit, authored by the program that made it where the
// system says which (on Linux, the name the process was run by, from
// /proc/PID/cmdline: not the name of the thread that wrote). Plaintext lives only in this
// process and in the kernel: files are opened with direct I/O, so the kernel
// keeps no page cache of them, and nothing is written to a disk. Editors'
// scratch files (see [Scratch]) live in memory and are never committed; a
// scratch file renamed over a memory file is one commit of that file. Names go
// through the memory tool's path rules ([vault.CleanPath]); a name they refuse
// cannot be created. A sealed vault stores names of at most 143 bytes (see
// [vault.Snapshot.MaxName]; statfs says so too): a longer one fails at
// create, mkdir and rename with ENAMETOOLONG. The vault's secret policy judges what is committed, as it
// judges what an agent writes through the memory tool (Options.Screen).
// Directories made with mkdir live in memory until a file
// is written under them, since the vault keeps no empty directory. Changes made
// by other processes (sync, the UI, an agent) appear in the folder at once.
//
// Mounting needs FUSE: on Linux, /dev/fuse, and either root (which mounts
// directly) or the fusermount3 helper (the fuse3 package). Elsewhere Start
// returns an error wrapping [ErrUnsupported].
package mount

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/memvault/memvault/vault"
)

// Store is what a mount needs of a vault. *vault.Vault implements it, and so
// does the *vault.AgentStore an agent's face works on, which puts the writes
// on the review line in review mode and holds a mass deletion for a person.
type Store interface {
	Snapshot(ctx context.Context) (*vault.Snapshot, error)
	Update(ctx context.Context, meta vault.Meta, fn func(*vault.Tx) error) error
	Limits() vault.Limits
	Watch(ctx context.Context) (<-chan struct{}, error)
}

// ErrUnsupported: this system cannot mount a vault.
var ErrUnsupported = errors.New("mounting a vault is not supported on this system")

// Options shape a mount.
type Options struct {
	// Agent is the author of commits whose program cannot be known; "" means
	// "mount".
	Agent string
	// DeleteDelay is how long a file renamed to a scratch name (an editor's
	// backup) waits for a new file at its name before its deletion is committed;
	// 0 means one second. A new file written there meanwhile is one commit of
	// the new content, not a delete and a create.
	DeleteDelay time.Duration
	// Screen, when set, judges each file before the folder commits it, as
	// `memvault import` judges a file (agent.ImportScreen gives the vault's
	// secret policy): a refusal fails the close, fsync or rename with EACCES
	// and commits nothing; the file it returns is what is committed (with
	// its secrets redacted, say); a warning goes to Log. A rename's target is
	// judged by its name.
	Screen func(vault.ImportFile) (file vault.ImportFile, refused, warning string)
	// Log receives what the mount has to say while it runs; nil: nothing.
	Log io.Writer
	// ReadOnly mounts the folder read-only: every write fails with EROFS.
	ReadOnly bool
}

// Scratch reports whether a file of this base name is an editor's or an atomic
// writer's scratch file, which the mount keeps in memory and never commits:
//
//   - vim's swap files (.NAME.swp, .swo … .swa, .swx) and its probe file 4913;
//   - backups ending in ~ (vim, emacs, many others);
//   - emacs's auto-save files #NAME# and lock files .#NAME;
//   - LibreOffice's lock files .~lock.NAME#;
//   - macOS's .DS_Store and ._NAME;
//   - names with a ".tmp" part (NAME.tmp, NAME.tmp.PID.TIME, .NAME.tmp123),
//     as atomic writers name the file they rename over their target, and
//     NAME.tmp followed by six or eight letters, digits or _ (Python's
//     tempfile given the prefix NAME.tmp, mkstemp's NAME.tmpXXXXXX);
//   - Python's tempfile names: tmp and eight letters, digits or _;
//   - hidden names ending in six or more digits: .NAME and a random number,
//     as Go's os.CreateTemp, ioutil.TempFile and renameio name the file they
//     rename over NAME;
//   - hidden names of two dots or more whose last part looks random (six or
//     more letters and digits with a digit in them, or both cases):
//     .NAME.XXXXXX, as rsync and mkstemp-based writers name theirs;
//   - names of two dots or more whose last part is eight or more digits:
//     NAME.1234567890, as Node's write-file-atomic names its.
//
// The folder also keeps in memory a new file whose name is that of a file
// beside it followed by a random part (NAME.x7Kq2p, .NAME8q2x9z1m,
// NAMEa1b2c3d4): a temporary file to be renamed over it.
//
// A memory file of such a name is not lost: it lives in the folder until the
// mount ends, and a rename to another name commits it.
func Scratch(name string) bool {
	n := len(name)
	switch {
	case n == 0:
		return false
	case name == "4913", name == ".DS_Store":
		return true
	case strings.HasSuffix(name, "~"):
		return true
	case n > 2 && name[0] == '#' && name[n-1] == '#':
		return true
	case strings.HasPrefix(name, ".#"), strings.HasPrefix(name, "._"):
		return true
	case strings.HasPrefix(name, ".~lock.") && strings.HasSuffix(name, "#"):
		return true
	case name[0] == '.' && vimSwap(name):
		return true
	case hasTmpPart(name), pythonTemp(name):
		return true
	case name[0] == '.' && trailingDigits(name) >= 6:
		return true
	}
	if last := strings.LastIndexByte(name, '.'); last > 0 && strings.Count(name, ".") >= 2 {
		tail := name[last+1:]
		switch {
		case name[0] == '.' && randomTail(tail):
			return true
		case len(tail) >= 8 && trailingDigits(tail) == len(tail):
			return true
		}
	}
	return false
}

// trailingDigits counts the decimal digits s ends with.
func trailingDigits(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] >= '0' && s[len(s)-1-n] <= '9' {
		n++
	}
	return n
}

// randomTail reports whether s looks like the random part temporary files
// are given: six or more letters, digits and _, with a digit among them, or
// letters of both cases. A word ("backup", "notes") does not.
func randomTail(s string) bool {
	if len(s) < 6 {
		return false
	}
	var digit, upper, lower bool
	for _, c := range []byte(s) {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c == '_':
		default:
			return false
		}
	}
	return digit || upper && lower
}

// pythonTail reports whether s is the random part Python's tempfile adds:
// eight lowercase letters, digits or _ (a word, too, so it is taken as one
// only glued to the name of the file it would replace).
func pythonTail(s string) bool {
	return len(s) == 8 && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

// tempFor reports whether name, new in the folder, is an atomic writer's
// temporary file for a file beside it: that file's name, perhaps after a
// dot, then perhaps a dot, a dash or an underscore, then a random part
// (randomTail). isFile tells whether a name is a file beside it.
func tempFor(name string, isFile func(string) bool) bool {
	s := strings.TrimPrefix(name, ".")
	for i := len(s) - 6; i > 0; i-- {
		tail := s[i:]
		if c := tail[0]; c == '.' || c == '-' || c == '_' {
			continue // the separator goes with the tail, below
		}
		base, glued := s[:i], true
		if c := base[len(base)-1]; c == '.' || c == '-' || c == '_' {
			base, glued = base[:len(base)-1], false
		}
		// Atomic writers add to the whole name of their target, which for a
		// memory file has an extension; a name without one is not judged so.
		// Eight lowercase letters glued to an extension are no word, nor are
		// they after a hidden copy of the name (Python's mkstemp with the
		// prefix .NAME. draws letters alone one time in seventeen).
		python := glued || strings.HasPrefix(name, ".")
		if strings.Contains(base, ".") && (randomTail(tail) || python && pythonTail(tail)) && isFile(base) {
			return true
		}
	}
	return false
}

// vimSwap reports whether name ends as vim's swap files do: .swp, then .swo
// down to .swa as more sessions open the file, and .swx for its probe.
func vimSwap(name string) bool {
	i := strings.LastIndexByte(name, '.')
	if i < 1 || len(name)-i != 4 || name[i+1:i+3] != "sw" {
		return false
	}
	c := name[i+3]
	return c >= 'a' && c <= 'p' || c == 'x'
}

// hasTmpPart reports whether name holds ".tmp" followed by its end, a dot, a
// dash, an underscore or a digit, or by six or eight letters, digits and _
// up to its end or a dot.
func hasTmpPart(name string) bool {
	for i := 0; ; {
		j := strings.Index(name[i:], ".tmp")
		if j < 0 {
			return false
		}
		k := i + j + len(".tmp")
		if k == len(name) {
			return true
		}
		if c := name[k]; c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' {
			return true
		}
		// A random part: Python's tempfile adds eight characters, mkstemp six.
		rest, _, _ := strings.Cut(name[k:], ".")
		if (len(rest) == 6 || len(rest) == 8) && strings.Trim(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == "" {
			return true
		}
		i = k
	}
}

// pythonTemp reports whether name is one Python's tempfile makes: "tmp", eight
// of [a-z0-9_], then perhaps a suffix starting with a dot.
func pythonTemp(name string) bool {
	if !strings.HasPrefix(name, "tmp") || len(name) < 11 {
		return false
	}
	for _, c := range []byte(name[3:11]) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return len(name) == 11 || name[11] == '.'
}
