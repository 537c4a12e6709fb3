//go:build !linux

package mount

import (
	"context"
	"fmt"
)

// FS is a vault mounted as a folder; on this system there is none.
type FS struct{ dir string }

// Start returns an error wrapping ErrUnsupported: memvault mounts through
// FUSE on Linux only.
func Start(ctx context.Context, v Store, dir string, opts Options) (*FS, error) {
	return nil, fmt.Errorf("mount %s: %w (memvault mounts through FUSE on Linux only)", dir, ErrUnsupported)
}

// Dir is the folder the vault is mounted on.
func (f *FS) Dir() string { return f.dir }

// Wait returns at once.
func (f *FS) Wait() error { return nil }

// Close does nothing.
func (f *FS) Close() error { return nil }

// Unmount returns an error wrapping ErrUnsupported.
func Unmount(dir string) error {
	return fmt.Errorf("unmount %s: %w", dir, ErrUnsupported)
}
