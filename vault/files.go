package vault

import (
	"context"
	"sort"
)

// Files lists the memory path of every file in the snapshot, in byte order:
// "/memories/a.md", "/memories/notes/b.md". It reads trees only, no file.
func (s *Snapshot) Files(ctx context.Context) ([]string, error) {
	refs, err := s.v.memoryFiles(s.root)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, memPath(r.path))
	}
	sort.Strings(out)
	return out, nil
}
