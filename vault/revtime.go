package vault

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/memvault/memvault/gitlog"
)

// splitAt separates "base@{date}rest" into base, the date and the rest; ok is
// false when rev has no "@{". A rev with "@{" but no closing "}" gives a
// date of "" and bad true.
func splitAt(rev string) (base, date, rest string, ok, bad bool) {
	i := strings.Index(rev, "@{")
	if i < 0 {
		return rev, "", "", false, false
	}
	j := strings.IndexByte(rev[i:], '}')
	if j < 0 {
		return "", "", "", true, true
	}
	return rev[:i], rev[i+2 : i+j], rev[i+j+1:], true, false
}

// maxAge bounds a relative age, so that it cannot overflow a time.Duration.
const maxAge = 200 * 365 * 24 * time.Hour

// parseRevTime reads the DATE of REV@{DATE}: an RFC 3339 time
// ("2026-11-24T10:00:00Z"), an RFC 3339 date ("2026-11-24", midnight UTC), or
// a relative age ("90s", "30m", "3h", "2d", "1w", optionally followed by
// " ago") counted back from now.
func parseRevTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "ago"))
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if len(s) >= 2 {
		if unit, ok := units[s[len(s)-1]]; ok {
			n, err := strconv.Atoi(strings.TrimSpace(s[:len(s)-1]))
			if err == nil && n >= 0 && n <= int(maxAge/unit) {
				return now.Add(-time.Duration(n) * unit), nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time (give 2026-11-24, 2026-11-24T10:00:00Z, or an age such as 90s, 30m, 3h, 2d, 1w)", s)
}

// atOrBefore walks first parents from h to the first commit whose commit time
// is at or before t, or says there is none.
func (v *Vault) atOrBefore(h gitlog.Hash, t time.Time) (gitlog.Hash, string, error) {
	for {
		c, err := v.repo.ReadCommit(h)
		if err != nil {
			return h, "", err
		}
		if !c.Committer.When.After(t) {
			return h, "", nil
		}
		if len(c.ParentHashes) == 0 {
			return h, fmt.Sprintf("no commit at or before %s (the first is at %s)",
				t.UTC().Format(time.RFC3339), c.Committer.When.UTC().Format(time.RFC3339)), nil
		}
		h = c.ParentHashes[0]
	}
}
