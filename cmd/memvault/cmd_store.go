package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memvault/memvault/agent/memstoreapi"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
	"github.com/memvault/memvault/vault/memstore"
)

// storeHelp ends the help of sync, pull and import: a memory store as a remote.
const storeHelp = `A remote may be an Anthropic memory store: memvault remote add team
memory-store:memstore_… (the API key from $ANTHROPIC_API_KEY, the address from
$ANTHROPIC_BASE_URL). sync pulls every version the store recorded since the last
sync as one commit (its actor as the agent, at its time, its version id in a
Memory-Origin trailer), merges on plaintext where both sides changed a file
(conflicts stay in the file, never "the store wins"), then pushes local changes as
creates, updates and deletes that the store takes only if its copy is still the
one synced. The store's limits (100 kB a file, 1,024-byte paths) are checked
before anything is sent.`

// storeRemote returns the memory store a vault's remote names, if it names one.
func storeRemote(v *vault.Vault, name string) (string, bool, error) {
	if name == "" {
		name = vault.DefaultRemote
	}
	remotes, err := v.Remotes()
	if err != nil {
		return "", false, err
	}
	for _, r := range remotes {
		if r.Name == name {
			id, ok := memstore.StoreID(r.URL)
			return id, ok, nil
		}
	}
	return "", false, nil
}

// runStoreSync syncs the vault with a memory store; pull pushes nothing.
func runStoreSync(ctx context.Context, v *vault.Vault, store string, pull bool, timeout time.Duration, progress, out io.Writer) error {
	tctx, cancel := withTimeout(ctx, timeout)
	defer cancel()
	res, err := memstore.Sync(tctx, v, memstoreapi.New(store), memstore.Options{Pull: pull, Progress: progress})
	if errors.Is(tctx.Err(), context.DeadlineExceeded) && err != nil {
		err = fmt.Errorf("gave up after --timeout %s (run it again to go on where it stopped): %w", timeout, err)
	}
	for _, id := range res.Redacted {
		fmt.Fprintf(out, "redacted in the store: %s (its content was not fetched; what this vault pulled before stays in its history)\n", escape.Name(id))
	}
	for _, p := range res.Conflicts {
		fmt.Fprintf(out, "conflict: %s (both versions kept between markers; edit the file to settle it)\n", escape.Name(p))
	}
	for _, s := range res.SetAside {
		fmt.Fprintf(out, "set aside: %s (refused by this vault; later syncs go on past it)\n", escape.Line(s))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "memory store %s: %d versions pulled, %d changes pushed\n", escape.Name(store), res.Pulled, res.Pushed)
	return conflictsLeft(len(res.Conflicts))
}

// runStoreImport brings a memory store's whole history into the vault.
func runStoreImport(ctx context.Context, g *globalOptions, store string, errw, out io.Writer) (err error) {
	if err := memstore.CheckStoreID(store); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	v, err := g.openFace(ctx, errw, g.passphrase)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	return runStoreSync(ctx, v, store, true, defaultTransferTimeout, progressTo(errw), out)
}

// watchStore keeps the vault in sync with a memory store until ctx ends: at
// once, about a second after each write to the vault, and every every, each
// sync bounded by timeout (0: none), one line each on log. A failed sync is
// said and tried again at the next turn; the store's throttling is the SDK's
// to wait out.
func watchStore(ctx context.Context, v *vault.Vault, store string, every, timeout time.Duration, log io.Writer) error {
	changes, err := v.Watch(ctx)
	if err != nil && !errors.Is(err, vault.ErrWatchUnsupported) {
		return err
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		tctx, cancel := withTimeout(ctx, timeout)
		start := time.Now()
		res, err := memstore.Sync(tctx, v, memstoreapi.New(store), memstore.Options{})
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			fmt.Fprintf(log, "memvault: memory store %s: %s\n", escape.Name(store), escape.Line(err.Error()))
		case len(res.SetAside) > 0:
			fmt.Fprintf(log, "memvault: memory store %s: %d versions pulled, %d changes pushed, %d set aside: %s\n",
				escape.Name(store), res.Pulled, res.Pushed, len(res.SetAside), escape.Line(strings.Join(res.SetAside, "; ")))
		case res.Pulled+res.Pushed > 0 || len(res.Conflicts) > 0:
			fmt.Fprintf(log, "memvault: memory store %s: %d versions pulled, %d changes pushed, %d conflicts (%s)\n",
				escape.Name(store), res.Pulled, res.Pushed, len(res.Conflicts), time.Since(start).Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-changes:
			// A burst of writes is one sync: wait for it to settle.
			settle := time.NewTimer(time.Second)
		drain:
			for {
				select {
				case <-changes:
				case <-settle.C:
					break drain
				case <-ctx.Done():
					settle.Stop()
					return nil
				}
			}
		}
	}
}
