//go:build linux

package mount

import (
	"errors"
	"fmt"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

// errRefused is a write the mount's screen (Options.Screen) refused: close(2),
// fsync(2) or rename(2) fails with EACCES and nothing is committed. The file
// stays in the folder as written, uncommitted, so that it can be put right and
// saved again.
var errRefused = errors.New("mount: refused by the vault's policy")

// screen judges data as the content of memory file p before it is committed,
// and returns what to commit in its place (the same, or with its secrets
// redacted). A warning goes to Options.Log.
func (f *FS) screen(p string, data []byte) ([]byte, error) {
	if f.opts.Screen == nil {
		return data, nil
	}
	// A name that looks like a secret is not written to the log either.
	shown := escape.Name(p)
	if _, refused, warning := f.opts.Screen(vault.ImportFile{Path: p}); refused != "" || warning != "" {
		shown = "a file whose name looks like a secret"
	}
	out, refused, warning := f.opts.Screen(vault.ImportFile{Path: p, Data: data})
	if refused != "" {
		f.say(shown, "not written: "+refused)
		return nil, errRefused
	}
	if warning != "" {
		f.say(shown, warning)
	}
	return out.Data, nil
}

// screenName judges p as a name alone: the target of a rename, whose content
// was judged when it was written.
func (f *FS) screenName(p string) error {
	_, err := f.screen(p, nil)
	return err
}

// say tells the mount's log what happened to a file, shown as given.
func (f *FS) say(shown, what string) {
	if f.opts.Log != nil {
		fmt.Fprintf(f.opts.Log, "memvault: mount: %s: %s\n", shown, what)
	}
}
