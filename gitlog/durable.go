package gitlog

import (
	"path/filepath"
)

func (r *Repo) loosePath(h Hash) string {
	s := h.String()
	return filepath.Join(r.dir, "objects", s[:2], s[2:])
}

// writeRef points ref's file at h by rename, creating the folders its name
// needs. The caller syncs the ref's folder.
func (r *Repo) writeRef(ref string, h Hash) error {
	if ref != Branch {
		if err := r.disk.MkdirAll(filepath.Dir(r.refPath(ref)), 0o755); err != nil {
			return err
		}
	}
	tmp, err := r.disk.WriteTemp(r.StateDir(), []byte(h.String()+"\n"), 0o644, true)
	if err != nil {
		return err
	}
	if err := r.disk.Rename(tmp, r.refPath(ref)); err != nil {
		r.disk.Remove(tmp)
		return err
	}
	return nil
}

func (r *Repo) refPath(ref string) string {
	return filepath.Join(r.dir, filepath.FromSlash(string(ref)))
}
