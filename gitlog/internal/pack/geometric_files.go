package pack

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// File is one pack of the repository and how many objects it holds.
type File struct {
	Base    string // path without ".pack"
	Objects uint32
}

// List lists the repository's packs that may be merged: a pack with a
// .keep file is left alone, as git does.
func List(dir string) ([]File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "pack-*.pack"))
	if err != nil {
		return nil, err
	}
	var packs []File
	for _, name := range names {
		base := strings.TrimSuffix(name, ".pack")
		if _, err := os.Stat(base + ".keep"); err == nil {
			continue
		}
		n, err := packCount(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // merged away meanwhile by git gc
		}
		if err != nil {
			return nil, fmt.Errorf("gitlog: pack: %w", err)
		}
		packs = append(packs, File{Base: base, Objects: n})
	}
	return packs, nil
}

// packCount reads how many objects a pack holds from its header.
func packCount(name string) (uint32, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var head [12]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return 0, fmt.Errorf("read %s: %w", name, err)
	}
	if string(head[:4]) != "PACK" {
		return 0, fmt.Errorf("%s is not a pack", name)
	}
	return binary.BigEndian.Uint32(head[8:]), nil
}
