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

// mainAt is what main held at t, by this clone's record of when main moved
// (gitlog's reflog), never by commit dates: those are whoever made the commit
// to write, and a collaborator's commit dated 2001 would be what main "was"
// at any time since. why says why there is no answer: main did not exist
// here then, or the record does not reach back that far.
func (v *Vault) mainAt(t time.Time) (h gitlog.Hash, why string, err error) {
	moves, err := v.repo.RefLog()
	if err != nil {
		return gitlog.ZeroHash, "", err
	}
	// From the newest back, as git reads its reflog: a clock set back makes
	// the record's times go back too, and the latest move at or before t is
	// what main held.
	i := len(moves)
	for i > 0 && moves[i-1].When.After(t) {
		i--
	}
	switch {
	case len(moves) == 0:
		return gitlog.ZeroHash, "this vault has no record of when main moved (it was made before memvault kept one)", nil
	case i == 0 && moves[0].Old.IsZero():
		return gitlog.ZeroHash, fmt.Sprintf("main did not exist here before %s", moves[0].When.UTC().Format(time.RFC3339)), nil
	case i == 0:
		return gitlog.ZeroHash, fmt.Sprintf("this vault's record of when main moved starts at %s", moves[0].When.UTC().Format(time.RFC3339)), nil
	}
	return moves[i-1].New, "", nil
}
