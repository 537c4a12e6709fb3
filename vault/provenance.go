package vault

// Provenance answers questions about content from decrypted history held in
// memory only: which commit brought a line (Blame), where text is now (Grep),
// and which commits added or removed text (the pickaxe of LogOptions). Every
// version of a file is decrypted at most once per call (and once per process
// through the plaintext cache), on all cores.

import (
	"context"
	"errors"
	"runtime"
	"sync"

	"github.com/memvault/memvault/gitlog"
)

// readAll decrypts the blobs of refs, in parallel, into out (same order). A
// zero hash reads as nil (no file).
func (v *Vault) readAll(ctx context.Context, refs []fileRef) ([][]byte, error) {
	return v.readAllBut(ctx, refs, nil)
}

// readAllBut is readAll that, given bad (as long as refs), goes on past a
// blob that is no memory file: its *EntryError goes to bad at its index and
// its text stays nil, so one damaged file does not hide the others.
func (v *Vault) readAllBut(ctx context.Context, refs []fileRef, bad []*EntryError) ([][]byte, error) {
	out := make([][]byte, len(refs))
	read := func(i int) error {
		b, err := v.readShared(memPath(refs[i].path), refs[i].hash)
		var ee *EntryError
		if bad != nil && errors.As(err, &ee) {
			bad[i] = ee
			return nil
		}
		out[i] = b
		return err
	}
	workers := min(runtime.GOMAXPROCS(0), len(refs))
	if workers <= 1 {
		for i, r := range refs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if r.hash.IsZero() {
				continue
			}
			if err := read(i); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		next  int
		first error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil || i >= len(refs)
				mu.Unlock()
				if stop {
					return
				}
				err := ctx.Err()
				if err == nil && !refs[i].hash.IsZero() {
					err = read(i)
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}

// readShared is readBlob without the copy: the caller must not modify the
// result, which may be the plaintext cache's own.
func (v *Vault) readShared(p string, h gitlog.Hash) ([]byte, error) {
	if b, ok := v.cache.get(h); ok {
		return b, nil
	}
	b, err := v.readBlob(p, h)
	return b, err
}
