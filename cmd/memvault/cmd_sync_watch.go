package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/autosync"
	"github.com/memvault/memvault/vault/escape"
)

// runSyncWatch keeps the vault in sync with a remote until ctx ends (SIGINT,
// SIGTERM), logging one line per sync to log. timeout bounds each sync.
func runSyncWatch(ctx context.Context, g *globalOptions, opts vault.SyncOptions, every, timeout time.Duration, log io.Writer) (err error) {
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	store, isStore, err := storeRemote(v, opts.Remote)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "memvault: syncing %s with %s after each write and every %s; stop with Ctrl-C\n",
		v.Dir(), remoteName(opts.Remote), every)
	if isStore {
		err = watchStore(ctx, v, store, every, timeout, log)
	} else {
		err = autosync.Run(ctx, v, watchOptions(opts, every, timeout, log))
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(log, "memvault: stopped syncing")
	return nil
}

// syncEveryUsage is the help of the --sync-every flag of mcp and serve.
const syncEveryUsage = "keep the vault in sync with remote origin in the background, as sync --watch does, " +
	"syncing after writes and every `DURATION` (0: never)"

// startAutoSync runs autosync.Run on v in the background for a long-lived
// server (mcp, serve) when every is above 0, logging to log; the returned
// function stops it and waits for it.
func startAutoSync(ctx context.Context, v *vault.Vault, every time.Duration, log io.Writer) (stop func()) {
	if every <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if store, ok, err := storeRemote(v, ""); err == nil && ok {
			if err := watchStore(ctx, v, store, every, defaultTransferTimeout, log); err != nil {
				fmt.Fprintf(log, "memvault: sync: %s\n", escape.Line(err.Error()))
			}
			return
		}
		// Credentials from the environment, as sync without flags takes them.
		opts := vault.SyncOptions{Auth: transferCredentials("", "", "", os.Getenv)}
		if err := autosync.Run(ctx, v, watchOptions(opts, every, 0, log)); err != nil {
			fmt.Fprintf(log, "memvault: sync: %s\n", escape.Line(err.Error()))
		}
	}()
	return func() { cancel(); <-done }
}

func remoteName(r string) string {
	if r == "" {
		return vault.DefaultRemote
	}
	return r
}

// watchOptions are the options of a watching sync that logs each outcome in
// one line.
func watchOptions(opts vault.SyncOptions, every, timeout time.Duration, log io.Writer) autosync.Options {
	opts.Progress = nil // one line per sync, not the transfer's progress
	return autosync.Options{Sync: opts, Every: every, Timeout: timeout, Report: func(r autosync.Report) {
		fmt.Fprintln(log, syncLogLine(r))
	}}
}

// syncLogLine says in one line what a sync of a watching loop did.
func syncLogLine(r autosync.Report) string {
	took := r.Took.Round(time.Millisecond)
	if r.Err != nil {
		return fmt.Sprintf("memvault: sync (%s) failed after %s, %d in a row; trying again in %s: %s",
			r.Why, took, r.Failures, r.Retry.Round(100*time.Millisecond), syncFailure(r.Err))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "memvault: sync (%s): %s; head %.12s", r.Why, r.Result.Action, r.Result.Head)
	if r.Result.Pushed {
		b.WriteString("; remote up to date")
	}
	if r.Result.WentBack {
		fmt.Fprintf(&b, "; the remote had gone back: it no longer held %.12s, which this clone pushed or fetched before", r.Result.Seen)
		if r.Result.Pushed {
			b.WriteString(" (pushed again)")
		}
	}
	if n := len(r.Result.Conflicts); n > 0 {
		fmt.Fprintf(&b, "; %d conflicts, kept between markers or moved aside:", n)
		for _, p := range r.Result.Conflicts {
			b.WriteString(" " + escape.Name(p))
		}
	}
	fmt.Fprintf(&b, " (%s)", took)
	return b.String()
}

// syncFailure says why a watching sync failed, in one line, with what a
// person must do where the loop cannot go on by itself.
func syncFailure(err error) string {
	switch {
	case errors.Is(err, vault.ErrRecipientsChanged):
		return "the remote changed the vault's recipients; nothing moved, and nothing will until a person " +
			"checks them ('memvault sync' shows them) and takes them with 'memvault sync --accept-recipients'"
	case errors.Is(err, vault.ErrWritersChanged):
		return "the remote changed who may write the vault; nothing moved, and nothing will until a person " +
			"checks the change ('memvault sync' shows it) and takes it with 'memvault sync --accept-writers'"
	case errors.Is(err, vault.ErrUnsigned):
		return "the remote holds a commit no writer of the vault signed; nothing moved ('memvault sync' names it)"
	case errors.Is(err, vault.ErrRefused):
		return "the remote's history holds entries memvault does not admit; nothing moved " +
			"('memvault sync' lists them and says what the remote's owner must do)"
	}
	msg, _, more := strings.Cut(err.Error(), "\n")
	if more {
		msg += " (…)"
	}
	return escape.Line(msg)
}
