package gitlog

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// HoldsObjects tells whether the repository holds any object, loose or in a
// pack. A repository with objects and no branch is not a new one: its branch
// may have been lost, and a new first commit there would hide its history.
func (r *Repo) HoldsObjects() (bool, error) {
	if packs, err := filepath.Glob(filepath.Join(r.dir, "objects", "pack", "pack-*.pack")); err != nil || len(packs) > 0 {
		return len(packs) > 0, err
	}
	fans, err := os.ReadDir(filepath.Join(r.dir, "objects"))
	if err != nil {
		return false, err
	}
	for _, fan := range fans {
		if !fan.IsDir() || len(fan.Name()) != 2 || !isHex(fan.Name()) {
			continue
		}
		f, err := os.Open(filepath.Join(r.dir, "objects", fan.Name()))
		if err != nil {
			return false, err
		}
		names, err := f.Readdirnames(1)
		f.Close()
		if len(names) > 0 {
			return true, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return false, err
		}
	}
	return false, nil
}
