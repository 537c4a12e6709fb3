package agent

import (
	"context"

	"github.com/memvault/memvault/agent/internal/contract"
	"github.com/memvault/memvault/vault"
)

// Store is what the memory tool needs: the memory as it is, a way to change
// it one command at a time, and the limits it keeps. Vault makes a Store of a
// vault; agenttest.Memory is one held in memory, for tests that are about the
// tool's answers rather than storage.
type Store interface {
	// Read returns one consistent state of the memory.
	Read(ctx context.Context) (Files, error)
	// Change runs fn on the memory as it is and, when fn returns nil, makes
	// what fn staged one change recorded with meta; when fn staged nothing
	// or failed, nothing changes and fn's error comes back as it is. Changes
	// are serialised, across processes where the store is shared.
	Change(ctx context.Context, meta vault.Meta, fn func(Edit) error) error
	Limits() vault.Limits
}

// Files is one state of the memory, read by clean memory path (vault.CleanPath).
// Errors wrap vault's: ErrNotExist, ErrNotDir, ErrIsDir, ErrBadEntry.
type Files interface {
	// Stat says whether p is a file, a directory or nothing (vault.KindNone).
	Stat(p string) (vault.Kind, error)
	// List returns the entries of directory p.
	List(ctx context.Context, p string) ([]vault.Entry, error)
	// ReadFile returns the content of file p.
	ReadFile(ctx context.Context, p string) ([]byte, error)
}

// Edit is the memory inside one Change. Its errors are vault.Tx's: a
// *vault.LimitError for a write over a limit, a *vault.PathError for a path
// the store cannot hold, ErrExist, ErrNotExist, ErrNotDir, ErrIsDir, ErrRoot.
type Edit interface {
	Files
	// WriteFile stages p's content, creating its parent directories.
	WriteFile(ctx context.Context, p string, data []byte) error
	// Remove stages the removal of the file or directory p.
	Remove(p string) error
	// Rename stages the move of the file or directory from to the unused path to.
	Rename(from, to string) error
}

// VaultStore is a vault as the tool's faces hold it: a *vault.Vault, or the
// *vault.AgentStore of a face in review mode.
type VaultStore interface {
	Snapshot(ctx context.Context) (*vault.Snapshot, error)
	Update(ctx context.Context, meta vault.Meta, fn func(*vault.Tx) error) error
	Limits() vault.Limits
}

// Vault returns the Store of v: a read is a snapshot, a change one Update,
// and a view is noted where v keeps views (memvault expire).
func Vault(v VaultStore) Store { return onVault{v} }

type onVault struct{ v VaultStore }

func (s onVault) Read(ctx context.Context) (Files, error) {
	snap, err := s.v.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return snap, nil
}

func (s onVault) Change(ctx context.Context, meta vault.Meta, fn func(Edit) error) error {
	return s.v.Update(ctx, meta, func(tx *vault.Tx) error { return fn(tx) })
}

func (s onVault) Limits() vault.Limits { return s.v.Limits() }

// RecordView passes a view on to the vault, which keeps it when it keeps views.
func (s onVault) RecordView(p string) error {
	contract.RecordView(s.v, p)
	return nil
}
