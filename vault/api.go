package vault

// The types the store's reads and writes share: paths and entries, limits,
// commit metadata and records, remotes' credentials. The errors are in
// errors.go; each operation's own types sit beside it.

import (
	"fmt"
	"regexp"
	"time"
)

// Root is the virtual directory every memory path lives under.
const Root = "/memories"

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
	// Err is set for an entry memvault does not read, as the vault's tree
	// holds it (see ErrBadEntry); the listing still holds the rest.
	Err error
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
	// MassDeleteFiles and MassDeleteShare bound what an agent's command, or
	// its session's run of commands, may delete or empty before the rest
	// waits for a person (see AgentStore.Update): more than this many files,
	// or more than this percentage of the memory's files (and at least two).
	MassDeleteFiles int
	MassDeleteShare int
	// Review is the vault's own setting that every agent face puts its
	// writes on the review line (see AgentStore).
	Review bool
}

// LimitError is the error of a change that would take a file or the vault over
// one of the vault's limits. It wraps ErrTooLarge (MaxFileSize), ErrTooManyFiles
// (MaxFiles) or ErrVaultFull (MaxVaultSize).
type LimitError struct {
	Path  string // the memory path whose change passes the limit
	Would int64  // the file's size, or the vault's file count or size, after the change
	Limit int64
	Err   error // ErrTooLarge, ErrTooManyFiles or ErrVaultFull
}

// Error says which limit, by how much, and the config key that raises it.
func (e *LimitError) Error() string {
	what, key := "bytes", "maxFileSize"
	switch e.Err {
	case ErrTooManyFiles:
		what, key = "files", "maxFiles"
	case ErrVaultFull:
		key = "maxVaultSize"
	}
	return fmt.Sprintf("vault: write %s: %d %s, %v of %d (memvault.%s in the vault's config)", e.Path, e.Would, what, e.Err, e.Limit, key)
}

// Unwrap returns the limit's sentinel.
func (e *LimitError) Unwrap() error { return e.Err }

// DefaultLimits are the limits of a vault whose config names none.
var DefaultLimits = Limits{MaxFileSize: 1 << 20, ViewLimit: 16000,
	MaxVaultSize: DefaultMaxVaultSize, MaxFiles: DefaultMaxFiles, MaxRequestLine: DefaultMaxRequestLine,
	MassDeleteFiles: DefaultMassDeleteFiles, MassDeleteShare: DefaultMassDeleteShare}

// Meta describes the command behind a commit. Command is the memory command
// (create, str_replace, insert, delete, rename); the rest go into trailers when set.
// Source is the full hash of the commit an undo (restore, revert, rollback) took
// its content from; the undo methods set it, and Command, themselves.
//
// Origin says where a change made elsewhere came from, for a commit that
// replays it (a memory store's version: "memory-store:ID VERSION"); When, when
// set, is the time it was made there, the commit's author time.
type Meta struct {
	Command   string
	ToolUseID string
	Agent     string
	Session   string
	Source    string
	Origin    string
	When      time.Time
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
	// Approved is the change of the review line that the commit approved
	// (see Vault.Approve), when it is one.
	Approved string `json:"approved,omitempty"`
	Origin   string `json:"origin,omitempty"` // where a replayed change was made (Meta.Origin)
	// Signer is the fingerprint of the key that signed the commit, "" when
	// it is unsigned. It is what the signature claims: sync and clone took
	// the commit only when a writer's signature verified (fsck checks again).
	Signer  string `json:"signer"`
	Subject string `json:"subject"`
	// Conflicts are the files a sync merge left holding conflict markers or
	// moved aside (its Memory-Conflict trailers).
	Conflicts []string `json:"conflicts,omitempty"`
	// Deleted are the files a command that deletes many (expire) deleted.
	Deleted []string `json:"deleted,omitempty"`
	// TreeDisagrees is set when the commit's tree did not change what its
	// Path and NewPath trailers name, or changed more: the trailers are what
	// whoever made the commit wrote, and are not to be believed then.
	// TreeChanged is then what the tree changed, against the first parent
	// (the first 20 files).
	TreeDisagrees bool     `json:"tree_disagrees,omitempty"`
	TreeChanged   []string `json:"tree_changed,omitempty"`
}

// LogOptions select history records.
type LogOptions struct {
	Path    string    // a memory path, or "" for the whole vault; its history follows renames
	Limit   int       // at most this many records; 0 means all
	Skip    int       // leave out this many of the first records that match (a page's offset)
	Since   time.Time // only commits made at or after this time, when set
	Command string    // only commits of this memory command (create, rename, revert, ...), when set
	// Pickaxe, when set, keeps the commits whose decrypted change against their
	// first parent changes the number of times this text occurs in a file
	// (git log -S). A file moved without an edit is no change.
	Pickaxe string
	// PickaxeRegexp, when set, keeps the commits whose decrypted change adds or
	// removes a line it matches (git log -G).
	PickaxeRegexp *regexp.Regexp
}
