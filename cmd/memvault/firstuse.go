package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/memvault/memvault/vault"
)

// errReported: a server face could not start, said why on stderr, and told
// each client the same; exitCode prints nothing more.
var errReported = errors.New("memvault could not start (the reason was given)")

// openFace opens the vault of a face (tool, serve, mcp, chat, ui, import). On first
// use, a vault that does not exist yet is created as init would, with the
// identity if there is none, and errOut says so. A vault or an identity that
// exists but cannot be read is an error, never re-created. pass answers a
// protected identity's passphrase.
func (g *globalOptions) openFace(ctx context.Context, errOut io.Writer, pass func(string) ([]byte, error)) (*vault.Vault, error) {
	dir, identity, err := g.paths()
	if err != nil {
		return nil, err
	}
	if err := refuseAfterFailedClone(dir); err != nil {
		return nil, err
	}
	opts := g.options(identity)
	opts.Passphrase = pass
	v, res, err := vault.OpenOrInit(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	if res.VaultCreated {
		fmt.Fprintf(errOut, "memvault: first use: created the vault %s (sealed), as 'memvault init' would\n", dir)
	}
	if res.IdentityCreated {
		fmt.Fprintf(errOut, "memvault: created the identity %s (recipient %s)\n"+
			"memvault: keep it safe and out of any repository: without it the memory cannot be read\n", identity, res.Recipient)
	}
	return v, nil
}

// openServer opens the vault of a server face (serve, mcp, named by what) and
// reads its identity at once, so that a server that cannot work knows it
// before its first request. When it cannot, it says why on errOut and returns
// the answer every request is to get instead, for clients that may never see
// stderr: the reason and the fix. Its error is only ctx's.
func (g *globalOptions) openServer(ctx context.Context, errOut io.Writer, what string) (*vault.Vault, string, error) {
	v, err := g.openFace(ctx, errOut, g.passphrase)
	if err == nil {
		if err = v.Unlock(); err != nil {
			v.Close()
		}
	}
	if err == nil {
		return v, "", nil
	}
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	hint, shown := setupHint(err)
	fmt.Fprintf(errOut, "memvault: %s\n", userMessage(shown))
	if hint != "" {
		fmt.Fprintln(errOut, hint)
	}
	fmt.Fprintf(errOut, "memvault: %s answers every request with this error until it is restarted\n", what)
	reason := "Error: memvault could not start, so no memory command can run. " + userMessage(shown)
	if hint != "" {
		reason += "\n" + hint
	}
	if dir, identity, perr := g.paths(); perr == nil {
		reason += fmt.Sprintf("\n(The vault is %s and the identity %s; restart the server once this is mended.)", dir, identity)
	}
	return nil, reason, nil
}
