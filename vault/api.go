package vault

// This file is the exported surface of package vault in one place.

import (
	"errors"
	"io/fs"
	"time"

	"github.com/memvault/memvault/gitlog"
)

// Root is the virtual directory every memory path lives under.
const Root = "/memories"

// Errors returned by reads and by Tx mutations. Paths have been validated before any of
// these can occur. Callers branch on them with errors.Is.
var (
	// ErrNotExist: nothing at the path.
	ErrNotExist = fs.ErrNotExist
	// ErrExist: something is already at the path.
	ErrExist = fs.ErrExist
	// ErrIsDir: a file operation on a directory.
	ErrIsDir = errors.New("is a directory")
	// ErrNotDir: an ancestor of the path is a file.
	ErrNotDir = errors.New("not a directory")
	// ErrTooLarge: content over the vault's file-size limit.
	ErrTooLarge = errors.New("over the file size limit")
	// ErrNoIdentity: the identity file is missing or unreadable.
	ErrNoIdentity = errors.New("no usable identity")
	// ErrDecrypt: no identity given can decrypt a memory file.
	ErrDecrypt = errors.New("cannot decrypt")
	// ErrWatchUnsupported: the system cannot watch the vault for changes (Watch).
	ErrWatchUnsupported = gitlog.ErrWatchUnsupported
	// ErrReadOnly: the vault's files cannot be written (a read-only mount, a
	// backup, another user's vault); it can still be read.
	ErrReadOnly = gitlog.ErrReadOnly
)

// Kind tells what is at a memory path.
type Kind int

// The kinds of thing at a path.
const (
	KindNone Kind = iota // nothing
	KindFile
	KindDir
)

// Entry is one child of a memory directory.
type Entry struct {
	Name string // base name
	Dir  bool
	Size int64 // plaintext bytes of a file; 0 for a directory
}

// Limits bound what the vault accepts and what a view prints.
type Limits struct {
	MaxFileSize    int64 // bytes of plaintext in one memory file
	ViewLimit      int   // characters in one view answer
	MaxVaultSize   int64 // bytes of plaintext in all current memory files
	MaxFiles       int   // current memory files
	MaxRequestLine int   // bytes in one `memvault serve` request line
	// SecretPolicy is what a write does with text that looks like a secret:
	// off, warn, redact or reject; "" means the agent's default (warn).
	SecretPolicy string
}

// DefaultLimits are the limits of a vault whose config names none.
var DefaultLimits = Limits{MaxFileSize: 1 << 20, ViewLimit: 16000,
	MaxVaultSize: DefaultMaxVaultSize, MaxFiles: DefaultMaxFiles, MaxRequestLine: DefaultMaxRequestLine}

// Meta describes the command behind a commit. Command is the memory command
// (create, str_replace, insert, delete, rename); the rest go into trailers when set.
// Source is the full hash of the commit an undo (restore, revert, rollback) took
// its content from; the undo methods set it, and Command, themselves.
type Meta struct {
	Command   string
	ToolUseID string
	Agent     string
	Session   string
	Source    string
}

// Record is one commit of the vault's history as memvault reads it.
type Record struct {
	Commit    string    `json:"commit"`
	Parents   []string  `json:"parents"`
	Time      time.Time `json:"time"`
	Author    string    `json:"author"`
	Command   string    `json:"command"`
	Path      string    `json:"path"`
	NewPath   string    `json:"new_path"`
	ToolUseID string    `json:"tool_use_id"`
	Agent     string    `json:"agent"`
	Session   string    `json:"session"`
	Source    string    `json:"source"` // the commit an undo took its content from
	Subject   string    `json:"subject"`
}

// LogOptions select history records.
type LogOptions struct {
	Path    string    // a memory path, or "" for the whole vault; its history follows renames
	Limit   int       // at most this many records; 0 means all
	Skip    int       // leave out this many of the first records that match (a page's offset)
	Since   time.Time // only commits made at or after this time, when set
	Command string    // only commits of this memory command (create, rename, revert, ...), when set
}
