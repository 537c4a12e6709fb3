package agent

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/memvault/memvault/vault"
)

// maxLines is the most lines a file view shows.
const maxLines = 999_999

// view answers a view command from a snapshot, without the writer lock.
func (h *Handler) view(ctx context.Context, c command) (string, error) {
	s, err := h.store.Read(ctx)
	if err != nil {
		return "", err
	}
	// One lookup: reading the path tells a file from a directory or nothing.
	data, err := s.ReadFile(ctx, c.path)
	switch {
	case errors.Is(err, vault.ErrIsDir):
		return listDir(ctx, s, c.path)
	case errors.Is(err, vault.ErrNotExist) || errors.Is(err, vault.ErrNotDir):
	case err != nil:
		return "", err
	default:
		if bytes.Count(data, []byte{'\n'}) >= maxLines {
			return "", fail("File %s exceeds maximum line limit of 999,999 lines.", c.path)
		}
		h.recordView(c.path)
		return renderFile(c.path, string(data), c.viewRange, h.store.Limits().ViewLimit), nil
	}
	return "", fail("The path %s does not exist. Please provide a valid path.", c.path)
}

// listDir renders the listing of directory p, two levels deep. Listings are
// never truncated: the contract cuts only file views.
func listDir(ctx context.Context, s Files, p string) (string, error) {
	var b strings.Builder
	b.WriteString("Here're the files and directories up to 2 levels deep in ")
	b.WriteString(p)
	b.WriteString(", excluding hidden items and node_modules:\n")
	b.WriteString(dirSize + "\t" + p)
	if err := walk(ctx, s, p, 1, &b); err != nil {
		return "", err
	}
	return b.String(), nil
}

// walk appends the entries of dir, at the given depth, and those of its
// subdirectories down to depth 2.
func walk(ctx context.Context, s Files, dir string, depth int, b *strings.Builder) error {
	entries, err := s.List(ctx, dir)
	if err != nil {
		return err
	}
	// The vault sorts already; the contract's order is the agent's to keep.
	slices.SortFunc(entries, func(a, b vault.Entry) int { return strings.Compare(a.Name, b.Name) })
	for _, e := range entries {
		if strings.HasPrefix(e.Name, ".") || e.Name == "node_modules" {
			continue
		}
		p := dir + "/" + e.Name
		if e.Err != nil {
			// A bad entry is listed when its name is a memory path (a view
			// of it says what is wrong); one no path can name is left out.
			if _, err := vault.CleanPath(p); err != nil {
				continue
			}
		}
		if !e.Dir {
			b.WriteString("\n" + formatSize(e.Size) + "\t" + p)
			continue
		}
		b.WriteString("\n" + dirSize + "\t" + p + "/")
		if depth < 2 {
			// A directory the vault cannot read fails alone: the listing
			// shows it, and a view of it says why.
			if err := walk(ctx, s, p, depth+1, b); err != nil && !errors.Is(err, vault.ErrBadEntry) {
				return err
			}
		}
	}
	return nil
}

// stat is Files.Stat where a path under a file is simply not there.
func stat(s Files, p string) (vault.Kind, error) {
	k, err := s.Stat(p)
	if errors.Is(err, vault.ErrNotExist) || errors.Is(err, vault.ErrNotDir) {
		return vault.KindNone, nil
	}
	return k, err
}

// fileAncestor returns the ancestor of p that is a file, or "" if none is.
func fileAncestor(s Files, p string) (string, error) {
	for i := len(vault.Root) + 1; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		switch k, err := stat(s, p[:i]); {
		case err != nil:
			return "", err
		case k == vault.KindFile:
			return p[:i], nil
		case k == vault.KindNone:
			return "", nil // nothing deeper exists either
		}
	}
	return "", nil
}
