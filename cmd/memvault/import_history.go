package main

import (
	"context"
	"fmt"
	"io"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/vault"
)

// importHistory replays the history of the git repository at source into the
// vault (vault.ImportHistory) and says what it did.
func importHistory(ctx context.Context, v *vault.Vault, source string, o importOptions, out, errw io.Writer) error {
	bar := newProgressBar(errw) // on a terminal only
	bar.label, bar.unit = "replaying", "source commits"
	defer bar.done()
	res, err := v.ImportHistory(ctx, source, vault.HistoryOptions{
		To: o.to, Overwrite: o.overwrite, Progress: bar.update,
		Screen: agent.ImportScreen(v.Limits()),
	})
	bar.done()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d of %d source commits replayed\n", res.Replayed, res.Commits)
	printImport(out, res.ImportResult, o)
	return nil
}
