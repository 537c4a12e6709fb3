package vault

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/internal/keyhook"
	"github.com/memvault/memvault/vault/seal"
)

// reencryption turns the vault's files into ciphertexts for a new set of
// recipients. done maps each old blob to its new ciphertext; progress, when
// set, keeps them in the vault's local state too, so an interrupted run loses
// nothing already done.
type reencryption struct {
	v        *Vault
	fp       [32]byte // the fingerprint of the recipient set
	rs       []age.Recipient
	done     map[gitlog.Hash][]byte
	progress *progressFile
	report   func(done, total int)
	// pad: the files are of the plain format and are being sealed, each
	// plaintext padded (seal.Pad) before it is encrypted.
	pad bool
	// gen is the vault key the files will be sealed under: a generation's
	// recipient is among every file's (format 3); nil for the plain format.
	gen *seal.Key
}

// run re-encrypts the files not done yet, decrypting and encrypting on every
// core. It reports progress from the calling goroutine. On an error or a
// cancelled ctx it stops early and returns the error; what was done stays done.
func (re *reencryption) run(ctx context.Context, files []fileRef) error {
	var todo []fileRef
	queued := map[gitlog.Hash]bool{}
	for _, f := range files {
		if _, ok := re.done[f.hash]; !ok && !queued[f.hash] {
			queued[f.hash] = true
			todo = append(todo, f)
		}
	}
	total, count := len(files), len(files)-len(todo)
	if re.report != nil {
		re.report(count, total)
	}
	if len(todo) == 0 {
		return nil
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var err error
	failAfter := keyhook.FailAfter.Load()
	for r := range re.start(wctx, todo) {
		if err != nil {
			continue // draining after a failure
		}
		if r.err != nil {
			err = r.err
			cancel()
			continue
		}
		re.done[r.hash] = r.ct
		re.progress.add(r.hash, r.ct)
		count++
		if re.report != nil {
			re.report(count, total)
		}
		if failAfter > 0 && int64(len(re.done)) >= failAfter {
			err = keyhook.ErrInjected
			cancel()
		}
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("vault: re-encryption stopped after %d of %d files (run the same command again to go on from there): %w", count, total, err)
	}
	return nil
}

// reencrypted is one file's new ciphertext, or why there is none.
type reencrypted struct {
	hash gitlog.Hash
	ct   []byte
	err  error
}

// start re-encrypts todo on one worker per core and sends the results on the
// returned channel, closed when all are done or ctx is.
func (re *reencryption) start(ctx context.Context, todo []fileRef) <-chan reencrypted {
	type job struct {
		fileRef
		ct  []byte
		err error
	}
	workers := min(runtime.GOMAXPROCS(0), len(todo))
	jobs := make(chan job, 2*workers)
	results := make(chan reencrypted, 2*workers)
	go func() {
		// One goroutine reads the blobs: gitlog serialises reads of packed
		// objects (its storage fills its pack index lazily), so more readers
		// would only wait; the workers decrypt and encrypt in parallel.
		defer close(jobs)
		for _, f := range todo {
			ct, err := re.v.repo.ReadBlob(f.hash)
			if err != nil {
				err = fmt.Errorf("vault: read %s: %w", f.path, err)
			}
			select {
			case jobs <- job{f, ct, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				ct, err := j.ct, j.err
				if err == nil {
					ct, err = re.one(j.path, ct)
				}
				select {
				case results <- reencrypted{j.hash, ct, err}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()
	return results
}

// one decrypts the ciphertext of the file at tree path tp and encrypts its
// plaintext to the new recipients. The plaintext lives only in memory, and is
// cleared before returning. A blob of the sealed format gives the age file of
// its padded plaintext, padded as it was: its size header, sealed with the
// key the commit's tree holds, is put in front when the commit is made
// (resealed).
func (re *reencryption) one(tp string, ct []byte) ([]byte, error) {
	p := memPath(tp)
	ct, _ = unsealBlob(ct)
	plain, err := re.v.keys.decrypt(p, ct)
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	if re.pad {
		frame := seal.Pad(plain)
		defer clear(frame)
		return encrypt(frame, fileRecipients(re.rs, re.gen))
	}
	return encrypt(plain, fileRecipients(re.rs, re.gen))
}

// pendingGeneration returns the new generation of the vault key this
// re-encryption seals the files under: the one an interrupted run of the same
// change made, which the progress file keeps encrypted to the recipients (the
// ciphertexts done are for it alone), or a new one, recorded there first.
func (re *reencryption) pendingGeneration() (*seal.Key, error) {
	if ct, ok := re.done[gitlog.ZeroHash]; ok {
		delete(re.done, gitlog.ZeroHash)
		if plain, err := re.v.keys.decrypt(keyPath, ct); err == nil {
			k, err := seal.ParseKey(plain)
			clear(plain)
			if err == nil && k.Generation() {
				return k, nil
			}
		}
		// One that does not open is of no use: the files start over.
		clear(re.done)
	}
	k, err := newGeneration(re.rs)
	if err != nil {
		return nil, err
	}
	ct, err := encrypt(k.Marshal(), re.rs)
	if err != nil {
		return nil, err
	}
	re.progress.add(gitlog.ZeroHash, ct)
	return k, nil
}
