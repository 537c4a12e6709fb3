package gitlog

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// syncJournaled makes durable every file that the journal of the repository at
// dir put in place since the last checkpoint: syncFS where syncfs(2) is missing.
// A file that is gone was packed since, and packs are synced when made.
func syncJournaled(dir string) error {
	files, dirs, err := journaledFiles(dir)
	if err != nil {
		return err
	}
	for _, p := range files {
		if err := syncPath(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for _, d := range dirs {
		if err := syncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// journaledFiles lists the loose objects and refs the journal of the repository
// at dir names, and the folders that hold them.
func journaledFiles(dir string) (files, dirs []string, err error) {
	data, err := os.ReadFile(filepath.Join(dir, stateDir, journalName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	_, recs := readJournal(data)
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
		if d := filepath.Dir(p); !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	for _, rec := range recs {
		add(filepath.Join(dir, filepath.FromSlash(string(rec.ref))))
		for _, o := range rec.objs {
			s := o.hash.String()
			add(filepath.Join(dir, "objects", s[:2], s[2:]))
		}
	}
	return files, dirs, nil
}
