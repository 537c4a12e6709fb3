package vault

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// Resolve returns the full hash of the commit rev names. A revision is
//
//   - a commit hash, in full or abbreviated to at least 4 hex digits that no
//     other commit starts with;
//   - "main" or "HEAD": the current state;
//   - a checkpoint name (a checkpoint wins over an abbreviated hash it looks like);
//   - "main@{DATE}" (or "HEAD@{DATE}", or "@{DATE}"): what main held at DATE
//     in this clone, from its own record of when main moved (as git reads
//     @{DATE} from its reflog), never from commit dates, which whoever made
//     a commit wrote. DATE is an RFC 3339 time or date (midnight UTC) or an
//     age such as "2d", "3h", "30m", "1w";
//   - any of these followed by "~N" (N commits back along first parents; "~" is
//     "~1") or "^" (one back), repeated as in "main~2^"; or "~N" alone, from main.
//
// The error wraps ErrUnknownRevision when rev names nothing, more than one
// commit, or a commit before the first.
func (v *Vault) Resolve(ctx context.Context, rev string) (string, error) {
	h, err := v.resolve(rev)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// SnapshotAt returns the memory tree at revision rev (see Resolve, whose errors
// it returns).
func (v *Vault) SnapshotAt(ctx context.Context, rev string) (*Snapshot, error) {
	h, err := v.resolve(rev)
	if err != nil {
		return nil, err
	}
	return v.snapshotAt(h)
}

// revisionRoot resolves rev, the head when it is empty, to its commit and
// that commit's root tree: where blame and grep start. The error wraps
// ErrUnknownRevision for a revision that names no commit, as resolve's does.
func (v *Vault) revisionRoot(rev string) (commit, root gitlog.Hash, err error) {
	if rev == "" {
		rev = "HEAD"
	}
	if commit, err = v.resolve(rev); err != nil {
		return commit, root, err
	}
	if root, err = v.repo.RootTree(commit); err != nil {
		return commit, root, fmt.Errorf("vault: revision %s: %w", rev, err)
	}
	return commit, root, nil
}

func (v *Vault) resolve(rev string) (gitlog.Hash, error) {
	unknown := func(why string) error {
		return fmt.Errorf("vault: %w %q: %s", ErrUnknownRevision, rev, why)
	}
	atBase, date, rest, hasAt, bad := splitAt(rev)
	if bad {
		return gitlog.ZeroHash, unknown("no closing } after @{")
	}
	plain := rev
	if hasAt {
		if atBase == "" {
			atBase = "HEAD"
		}
		plain = atBase + "~0" + rest
	}
	base, steps, ok := splitRevision(plain)
	if !ok {
		return gitlog.ZeroHash, unknown("not a revision")
	}
	h, why, err := v.resolveBase(base)
	if err != nil {
		return gitlog.ZeroHash, err
	}
	if why == "" && hasAt {
		t, terr := parseRevTime(date, v.opts.Now())
		switch {
		case terr != nil:
			return gitlog.ZeroHash, unknown(terr.Error())
		case atBase != "HEAD" && atBase != "main":
			return gitlog.ZeroHash, unknown("only main has a record of when it moved: give main@{DATE} or @{DATE}")
		}
		if h, why, err = v.mainAt(t); err != nil {
			return gitlog.ZeroHash, fmt.Errorf("vault: revision %q: %w", rev, err)
		}
	}
	if why != "" {
		return gitlog.ZeroHash, unknown(why)
	}
	for i := range steps {
		c, err := v.repo.ReadCommit(h)
		if err != nil {
			return gitlog.ZeroHash, fmt.Errorf("vault: revision %q: %w", rev, err)
		}
		if len(c.ParentHashes) == 0 {
			first := base
			if i > 0 {
				first = fmt.Sprintf("%s~%d", base, i)
			}
			return gitlog.ZeroHash, unknown(fmt.Sprintf("it goes back past the first commit, %.7s, which is %s", c.Hash, first))
		}
		h = c.ParentHashes[0]
	}
	return h, nil
}

// splitRevision separates "base~2^" into the base and the number of first
// parents to go back.
func splitRevision(rev string) (base string, steps int, ok bool) {
	i := strings.IndexAny(rev, "~^")
	if i < 0 {
		return rev, 0, rev != ""
	}
	base, rest := rev[:i], rev[i:]
	if base == "" {
		base = "HEAD"
	}
	for rest != "" {
		op := rest[0]
		rest = rest[1:]
		if op != '~' && op != '^' {
			return "", 0, false
		}
		n := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
		count := 1
		if n > 0 {
			v, err := strconv.Atoi(rest[:n])
			if err != nil || v > 1<<20 || op == '^' && v != 1 {
				return "", 0, false
			}
			count, rest = v, rest[n:]
		}
		steps += count
	}
	return base, steps, true
}

// resolveBase names the commit of a revision without its "~N" part, or says
// why it names none.
func (v *Vault) resolveBase(base string) (h gitlog.Hash, unknown string, err error) {
	none := "no commit or checkpoint of that name"
	switch {
	case base == "HEAD" || base == "main" || base == "@":
		h, err = v.repo.Head()
		return h, "", err
	case len(base) == 40 && isHex(base):
		h, _ = gitlog.ParseHash(base) // 40 hex digits always parse
		if _, err := v.repo.ReadCommit(h); err != nil {
			return h, "no such commit", nil
		}
		return h, "", nil
	}
	k, keyErr := v.currentKey()
	if keyErr == nil && k != nil {
		if ref, err := sealedTagName(k, base); err == nil {
			if t, err := v.repo.LookupTag(ref); err == nil {
				return t.Target, "", nil
			}
		}
		// A checkpoint made before the key rotated (a recipient removed, a
		// rekey) is sealed under the key of its commit's tree, as
		// Checkpoints opens it.
		if h, ok := v.checkpointOpened(k, base); ok {
			return h, "", nil
		}
	} else if unreadable(keyErr) {
		// Keys a rotation retired read the history before it, its
		// checkpoints included, though not the current tree.
		if h, ok := v.checkpointOpened(nil, base); ok {
			return h, "", nil
		}
	}
	t, err := v.repo.LookupTag(base)
	if err == nil {
		return t.Target, "", nil
	}
	if !errors.Is(err, gitlog.ErrNotFound) {
		return h, "", fmt.Errorf("vault: checkpoint %q: %w", base, err)
	}
	// A sealed vault's checkpoint names open under its key: an identity
	// that cannot open it is told so, not that no such checkpoint exists.
	err = nil
	if unreadable(keyErr) {
		none = ""
		err = fmt.Errorf("vault: checkpoint %q: %w", base, keyErr)
	}
	if len(base) < 4 || !isHex(base) {
		return h, none, err
	}
	hs, cerr := v.repo.CommitsWithPrefix(base)
	switch {
	case cerr != nil:
		return h, "", fmt.Errorf("vault: revision %q: %w", base, cerr)
	case len(hs) == 0:
		return h, none, err
	case len(hs) > 1:
		return h, fmt.Sprintf("%d commits start with it; give more digits", len(hs)), nil
	}
	return hs[0], "", nil
}

// checkpointOpened finds the sealed checkpoint that opens, under k (nil:
// none) or the key of its commit's tree, to name.
func (v *Vault) checkpointOpened(k *seal.Key, name string) (gitlog.Hash, bool) {
	tags, err := v.repo.Tags()
	if err != nil {
		return gitlog.Hash{}, false
	}
	for _, t := range tags {
		c := checkpointOf(t)
		if k != nil {
			v.openCheckpoint(&c, k, t.Target)
		} else if ns, err := v.namesAt(t.Target); err == nil && ns.key() != nil {
			if p, err := ns.key().OpenPath(tagsDir, c.Name); err == nil {
				c.Name = strings.TrimPrefix(p, tagsDir+"/")
			}
		}
		if c.Name != t.Name && c.Name == name {
			return t.Target, true
		}
	}
	return gitlog.Hash{}, false
}

func isHex(s string) bool {
	return s != "" && strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
}

// shortHash abbreviates a commit hash for messages.
func shortHash(h gitlog.Hash) string { return h.String()[:12] }
