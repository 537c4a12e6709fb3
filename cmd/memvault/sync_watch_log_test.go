package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/autosync"
)

// A watching sync's log line carries conflict names and error text that a
// remote can craft: escaped, they stay one line and obey nothing.
func TestSyncLogLineEscapes(t *testing.T) {
	hostile := "/memories/a\x1b[2K\rb\n\u202egnp.md"
	lines := []string{
		syncLogLine(autosync.Report{Why: "write", Result: vault.SyncResult{Action: "merge", Conflicts: []string{hostile}}}),
		syncLogLine(autosync.Report{Why: "interval", Err: errors.New("fetch " + hostile)}),
	}
	for _, l := range lines {
		if strings.ContainsAny(l, "\x1b\r\n\u202e") {
			t.Errorf("syncLogLine = %q: raw control or bidi characters", l)
		}
		if !strings.Contains(l, `\x1b`) {
			t.Errorf("syncLogLine = %q, want the ESC shown as \\x1b", l)
		}
	}
}
