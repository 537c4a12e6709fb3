package agenttest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault"
)

// Memory is an agent.Store held in memory, for tests of the memory tool that
// are not about storage: the contract's answers, the bridges, the faces. It
// keeps files by path, as git does (a directory is there while a file is in
// it), the limits it was given, and a history of one Record per change.
//
// What it does not do is a vault's: no encryption, no bad entries, no other
// process. The contract runs against a real vault in vault's own tests.
type Memory struct {
	limits vault.Limits
	mu     sync.Mutex // serialises changes, as a vault's lock does
	state  sync.Mutex // guards files and log
	files  map[string][]byte
	log    []vault.Record // newest first
}

// NewMemory returns an empty Memory that keeps limits.
func NewMemory(limits vault.Limits) *Memory {
	return &Memory{limits: limits, files: map[string][]byte{}}
}

// MemoryTarget returns a Target on an empty Memory with vault.DefaultLimits,
// through an agent.Handler: the contract's fresh vault, without a disk.
func MemoryTarget(t testing.TB) Target {
	m := NewMemory(vault.DefaultLimits)
	h := agent.New(m, agent.Options{})
	return Target{
		Do: func(input, toolUseID string) (string, bool) {
			a, err := h.Run(context.Background(), []byte(input), toolUseID)
			if err != nil {
				t.Fatalf("Run(%.200q) error: %v", input, err)
			}
			return a.Content, a.IsError
		},
		Log: m.Log,
	}
}

// Limits returns the limits the Memory keeps.
func (m *Memory) Limits() vault.Limits { return m.limits }

// Log returns one Record per change, newest first, with the meta it was
// made with.
func (m *Memory) Log() ([]vault.Record, error) {
	m.state.Lock()
	defer m.state.Unlock()
	return slices.Clone(m.log), nil
}

// Read returns the memory as it is now; later changes do not show in it.
func (m *Memory) Read(ctx context.Context) (agent.Files, error) {
	m.state.Lock()
	defer m.state.Unlock()
	return files(maps.Clone(m.files)), nil
}

// Change runs fn on a copy of the memory and keeps the copy when fn returns
// nil having staged something.
func (m *Memory) Change(ctx context.Context, meta vault.Meta, fn func(agent.Edit) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state.Lock()
	e := &edit{files: maps.Clone(m.files), limits: m.limits}
	m.state.Unlock()
	if err := fn(e); err != nil || e.staged == 0 {
		return err
	}
	m.state.Lock()
	defer m.state.Unlock()
	m.files = e.files
	m.log = slices.Insert(m.log, 0, vault.Record{
		Commit:    fmt.Sprintf("%040x", len(m.log)+1),
		Command:   meta.Command,
		Path:      e.path,
		NewPath:   e.newPath,
		ToolUseID: meta.ToolUseID,
		Agent:     meta.Agent,
		Session:   meta.Session,
	})
	return nil
}

// files is one state of the memory: content by clean memory path.
type files map[string][]byte

// clean is p as vault.CleanPath makes it, or the error a vault gives.
func clean(p string) (string, error) {
	cp, err := vault.CleanPath(p)
	if err != nil {
		return "", err
	}
	return cp, nil
}

func (f files) Stat(p string) (vault.Kind, error) {
	p, err := clean(p)
	if err != nil {
		return vault.KindNone, err
	}
	if p == vault.Root {
		return vault.KindDir, nil
	}
	if _, ok := f[p]; ok {
		return vault.KindFile, nil
	}
	for q := range f {
		if strings.HasPrefix(q, p+"/") {
			return vault.KindDir, nil
		}
	}
	return vault.KindNone, nil
}

// fileAbove returns the ancestor of p that is a file, or "".
func (f files) fileAbove(p string) string {
	for i := len(vault.Root) + 1; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		if _, ok := f[p[:i]]; ok {
			return p[:i]
		}
	}
	return ""
}

func (f files) ReadFile(ctx context.Context, p string) ([]byte, error) {
	k, err := f.Stat(p)
	switch {
	case err != nil:
		return nil, err
	case k == vault.KindDir:
		return nil, fmt.Errorf("agenttest: read %s: %w", p, vault.ErrIsDir)
	case k == vault.KindNone:
		return nil, fmt.Errorf("agenttest: read %s: %w", p, vault.ErrNotExist)
	}
	cp, _ := clean(p)
	return slices.Clone(f[cp]), nil
}

func (f files) List(ctx context.Context, p string) ([]vault.Entry, error) {
	k, err := f.Stat(p)
	switch {
	case err != nil:
		return nil, err
	case k == vault.KindFile:
		return nil, fmt.Errorf("agenttest: list %s: %w", p, vault.ErrNotDir)
	case k == vault.KindNone:
		return nil, fmt.Errorf("agenttest: list %s: %w", p, vault.ErrNotExist)
	}
	p, _ = clean(p)
	seen := map[string]vault.Entry{}
	for q, data := range f {
		rest, ok := strings.CutPrefix(q, p+"/")
		if !ok {
			continue
		}
		name, _, deeper := strings.Cut(rest, "/")
		if deeper {
			seen[name] = vault.Entry{Name: name, Dir: true}
		} else {
			seen[name] = vault.Entry{Name: name, Size: int64(len(data))}
		}
	}
	out := slices.Collect(maps.Values(seen))
	slices.SortFunc(out, func(a, b vault.Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// edit is the memory inside one Change: a copy of the files, changed in place.
type edit struct {
	files
	limits        vault.Limits
	staged        int
	path, newPath string // what the change's record names: its first change's paths
}

func (e *edit) stage(p, newPath string) {
	if e.staged == 0 {
		e.path, e.newPath = p, newPath
	}
	e.staged++
}

// WriteFile checks what vault.Tx.WriteFile checks, in its order.
func (e *edit) WriteFile(ctx context.Context, p string, data []byte) error {
	p, err := clean(p)
	if err != nil {
		return err
	}
	if n := int64(len(data)); n > e.limits.MaxFileSize {
		return &vault.LimitError{Path: p, Would: n, Limit: e.limits.MaxFileSize, Err: vault.ErrTooLarge}
	}
	switch k, _ := e.Stat(p); {
	case k == vault.KindDir:
		return fmt.Errorf("agenttest: write %s: %w", p, vault.ErrIsDir)
	case e.fileAbove(p) != "":
		return fmt.Errorf("agenttest: write %s: %w", p, vault.ErrNotDir)
	}
	old, had := e.files[p]
	files, size := len(e.files), int64(len(data))
	if !had {
		files++
	}
	for _, d := range e.files {
		size += int64(len(d))
	}
	size -= int64(len(old))
	if l := e.limits.MaxFiles; l > 0 && files > l {
		return &vault.LimitError{Path: p, Would: int64(files), Limit: int64(l), Err: vault.ErrTooManyFiles}
	}
	if l := e.limits.MaxVaultSize; l > 0 && size > l {
		return &vault.LimitError{Path: p, Would: size, Limit: l, Err: vault.ErrVaultFull}
	}
	e.files[p] = slices.Clone(data)
	e.stage(p, "")
	return nil
}

func (e *edit) Remove(p string) error {
	p, err := clean(p)
	if err != nil {
		return err
	}
	if p == vault.Root {
		return fmt.Errorf("agenttest: remove %s: %w", p, vault.ErrRoot)
	}
	k, _ := e.Stat(p)
	if k == vault.KindNone {
		return fmt.Errorf("agenttest: remove %s: %w", p, vault.ErrNotExist)
	}
	for q := range e.files {
		if q == p || strings.HasPrefix(q, p+"/") {
			delete(e.files, q)
		}
	}
	e.stage(p, "")
	return nil
}

func (e *edit) Rename(from, to string) error {
	from, err := clean(from)
	if err != nil {
		return err
	}
	if to, err = clean(to); err != nil {
		return err
	}
	if from == vault.Root || to == vault.Root {
		return fmt.Errorf("agenttest: rename %s: %w", from, vault.ErrRoot)
	}
	if k, _ := e.Stat(from); k == vault.KindNone {
		return fmt.Errorf("agenttest: rename %s: %w", from, vault.ErrNotExist)
	}
	switch k, _ := e.Stat(to); {
	case k != vault.KindNone:
		return fmt.Errorf("agenttest: rename to %s: %w", to, vault.ErrExist)
	case e.fileAbove(to) != "":
		return fmt.Errorf("agenttest: rename to %s: %w", to, vault.ErrNotDir)
	case strings.HasPrefix(to, from+"/"):
		return fmt.Errorf("agenttest: rename %s into itself: %w", from, vault.ErrInvalid)
	}
	for q, data := range maps.Clone(e.files) {
		if q == from || strings.HasPrefix(q, from+"/") {
			delete(e.files, q)
			e.files[to+q[len(from):]] = data
		}
	}
	e.stage(from, to)
	return nil
}
