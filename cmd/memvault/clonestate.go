package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/memvault/memvault/vault/keys"
)

// A clone or join that fails leaves nothing where the vault was to be. The
// next command there must not take the empty place for a first use and make
// an empty vault of it, as if the clone had never been asked for: that vault
// would go on alone, and a later clone into it is refused. So a failed clone
// is noted, outside the vault, in the user's memvault folder (beside the
// default identity): one line a folder, "DIR<TAB>URL<TAB>REASON", taken away
// by a clone, join or init that succeeds there. A face finds the note before
// it would create a vault, and says what happened instead.

// cloneStateFile is where failed clones are noted.
func cloneStateFile() (string, error) {
	id, err := keys.DefaultIdentityFile()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(id), "failed-clones"), nil
}

// failedClones reads the notes, by folder.
func failedClones() map[string][2]string {
	out := map[string][2]string{}
	p, err := cloneStateFile()
	if err != nil {
		return out
	}
	data, err := os.ReadFile(p)
	if err != nil || len(data) > 1<<20 {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 3)
		if len(f) == 3 {
			out[f[0]] = [2]string{f[1], f[2]}
		}
	}
	return out
}

// writeFailedClones writes the notes back; none removes the file.
func writeFailedClones(m map[string][2]string) {
	p, err := cloneStateFile()
	if err != nil {
		return
	}
	if len(m) == 0 {
		os.Remove(p)
		return
	}
	var b strings.Builder
	for dir, v := range m {
		fmt.Fprintf(&b, "%s\t%s\t%s\n", oneField(dir), oneField(v[0]), oneField(v[1]))
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return
	}
	tmp := p + ".tmp"
	if os.WriteFile(tmp, []byte(b.String()), 0o600) == nil {
		os.Rename(tmp, p)
	}
}

func oneField(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

// markCloneFailed notes that the clone of url into dir failed with err.
func markCloneFailed(dir, url string, err error) {
	abs, aerr := filepath.Abs(dir)
	if aerr != nil {
		return
	}
	if _, serr := os.Stat(abs); !errors.Is(serr, fs.ErrNotExist) {
		return // a vault (or something else) is there: nothing to guard
	}
	m := failedClones()
	m[abs] = [2]string{url, userMessage(err)}
	writeFailedClones(m)
}

// clearCloneFailed takes away the note of dir, once a vault is there.
func clearCloneFailed(dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	m := failedClones()
	if _, ok := m[abs]; ok {
		delete(m, abs)
		writeFailedClones(m)
	}
}

// errCloneFailedHere: a face would have made a vault where a clone failed.
var errCloneFailedHere = errors.New("the last clone into this folder failed")

// refuseAfterFailedClone returns an error when the folder dir holds no vault
// and a clone into it failed: a face must not make an empty vault there.
func refuseAfterFailedClone(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	if _, err := os.Stat(abs); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	v, ok := failedClones()[abs]
	if !ok {
		return nil
	}
	return &hintedError{
		err:  fmt.Errorf("no vault at %s: the last clone of %s into it failed (%s), so no empty vault is made there: %w", dir, v[0], v[1], errCloneFailedHere),
		hint: "Run the clone (or join) again once what stopped it is mended; or 'memvault init' to start an empty vault there instead.",
	}
}
