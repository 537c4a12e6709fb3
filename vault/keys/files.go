package keys

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// DefaultIdentityFile is where the identity lives when none is named:
// memvault/identity in the user's configuration folder as os.UserConfigDir
// names it ($XDG_CONFIG_HOME, else ~/.config, on Linux; ~/Library/Application
// Support on macOS; %AppData% on Windows).
func DefaultIdentityFile() (string, error) {
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("vault: default identity: %w", err)
	}
	return filepath.Join(base, "memvault", "identity"), nil
}

// IdentityWarnings says, as a sentence for a person, when the identity file at
// path lets other users read it (any group or other permission bit): they may
// have copied the private key, which reads every file encrypted to it. The key
// is still used (refusing it would not take back what was exposed, and would
// stop a vault from opening that worked before); the warning says how to close
// the file. A file that cannot be examined gives no warning: reading it
// reports that.
func IdentityWarnings(path string) []string {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	return []string{fmt.Sprintf("identity %s has mode %v: other users may read the private key (chmod 600 %s)",
		path, fi.Mode().Perm(), path)}
}

// RetiredIdentities lists the identity files Rekey retired from path, newest
// first: path.old, then path.old.N from the highest N down. The history
// before each rotation is encrypted to them.
func RetiredIdentities(path string) []string {
	old := path + ".old"
	if _, err := os.Lstat(old); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	out := []string{old}
	matches, _ := filepath.Glob(globQuote(old) + ".*")
	var ns []int
	for _, m := range matches {
		if n, err := strconv.Atoi(strings.TrimPrefix(m, old+".")); err == nil && n > 0 {
			ns = append(ns, n)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(ns)))
	for _, n := range ns {
		out = append(out, fmt.Sprintf("%s.%d", old, n))
	}
	return out
}

// globQuote escapes what filepath.Glob would read as a pattern in a path.
func globQuote(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
