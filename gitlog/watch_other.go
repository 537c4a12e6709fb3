//go:build !linux

package gitlog

import (
	"context"
	"fmt"
)

func (r *Repo) watch(context.Context) (<-chan struct{}, error) {
	return nil, fmt.Errorf("gitlog: watch %s: %w", r.dir, ErrWatchUnsupported)
}
