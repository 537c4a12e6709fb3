package vault

import (
	"fmt"
	"os"
)

// PermissionWarnings says, as sentences for a person, where the vault's
// directory lets other users in: writable by group or others (they could
// rewrite the history, or add themselves as a recipient of future writes), or
// readable or listable by them (they see memory file names, sizes and
// history, though never contents). Init makes the directory 0700; these
// warnings are for a vault moved, copied or shared since. An unreadable
// directory gives no warning: opening it reports that.
func (v *Vault) PermissionWarnings() []string {
	return dirWarnings(v.Dir())
}

func dirWarnings(dir string) []string {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	perm := fi.Mode().Perm()
	var out []string
	if perm&0o022 != 0 {
		out = append(out, fmt.Sprintf("vault directory %s has mode %v: other users may change its history and recipients (chmod 700 %s)", dir, perm, dir))
	} else if perm&0o055 != 0 {
		out = append(out, fmt.Sprintf("vault directory %s has mode %v: other users may read memory file names and history, though not their contents (chmod 700 %s)", dir, perm, dir))
	}
	return out
}
