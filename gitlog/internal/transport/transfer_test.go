package transport

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/memvault/memvault/gitlog/internal/pack"
)

// pushRecorder is a repository whose push into a local path only records
// what it was asked and answers err.
type pushRecorder struct {
	noRepo
	dir       string
	known, h  Hash
	err       error
	hadMeter  bool
	pushCalls int
}

func (p *pushRecorder) PushLocal(_ context.Context, dir string, known, h Hash, m pack.Meter) error {
	p.pushCalls++
	p.dir, p.known, p.h, p.hadMeter = dir, known, h, m != nil
	return p.err
}

// TestPushLocalIsTheRepositorysWrite: a push to a local path is handed to
// the repository whole (the path, where the last fetch found the branch, the
// commit), and its refusal comes back as any push's: ErrRejected, naming
// the remote.
func TestPushLocalIsTheRepositorysWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dst.git")
	known, h := Hash{1}, Hash{2}
	for _, tt := range []struct {
		name string
		err  error
		want error
	}{
		{"taken", nil, nil},
		{"moved meanwhile", fmt.Errorf("the remote's main moved: %w", git.ErrForceNeeded), ErrRejected},
		{"cancelled", context.Canceled, context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &pushRecorder{err: tt.err}
			err := Push(context.Background(), p, "dst", dir, known, h, Options{})
			if p.pushCalls != 1 || p.dir != dir || p.known != known || p.h != h || !p.hadMeter {
				t.Fatalf("Push to %s called PushLocal %d times with (%q, %s, %s, meter %t), want once with (%q, %s, %s, a meter)",
					dir, p.pushCalls, p.dir, p.known, p.h, p.hadMeter, dir, known, h)
			}
			switch {
			case tt.want == nil && err != nil:
				t.Errorf("Push = %v, want nil", err)
			case tt.want != nil && (!errors.Is(err, tt.want) || !strings.Contains(err.Error(), "push dst")):
				t.Errorf("Push = %v, want an error naming push dst and wrapping %v", err, tt.want)
			}
		})
	}
}

// TestFetchLocalMissing: a fetch from a local path that holds no repository
// reads nothing of the repository and says the remote is unreachable.
func TestFetchLocalMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none.git")
	_, err := Fetch(context.Background(), noRepo{}, "origin", dir, Hash{}, Options{})
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("Fetch from %s (no repository) = %v, want ErrUnreachable", dir, err)
	}
}
