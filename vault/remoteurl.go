package vault

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/memvault/memvault/gitlog"
)

// remoteSchemes are the transports sync speaks.
var remoteSchemes = []string{"https", "http", "ssh", "git", "file"}

// checkRemoteURL checks a remote's URL when it is given, so that a typo is
// named then and not at the next sync, where it reads as some other failure
// (git's scp-like form takes "htp:/x" for host "htp" over ssh, and the sync
// then blames the ssh agent). It accepts scheme://host/path for the schemes
// sync speaks (file:///path needs no host), user@host:path and host:path, and
// plain paths; the error wraps ErrBadRemoteURL. A host:path whose host is a
// scheme, or one letter away from one, with a path starting "/", is taken for
// a mistyped URL: such a host name is unlikely, and user@host:path still names it.
func checkRemoteURL(raw string) error {
	shown := gitlog.Redact(raw)
	if strings.TrimSpace(raw) == "" {
		return fmt.Errorf("vault: remote URL is empty: %w", ErrBadRemoteURL)
	}
	if scheme, _, ok := strings.Cut(raw, "://"); ok && !strings.ContainsAny(scheme, "/@:") {
		u, err := url.Parse(raw)
		if err != nil {
			// url.Parse's reason can quote the password (as a bad port): not shown.
			return fmt.Errorf("vault: remote URL %s does not parse (percent-encode a /, ? or # in a user name or password): %w", shown, ErrBadRemoteURL)
		}
		known := false
		for _, s := range remoteSchemes {
			known = known || strings.EqualFold(u.Scheme, s)
		}
		switch {
		case !known:
			return fmt.Errorf("vault: remote URL %s: unknown scheme %q (https, ssh, git or file): %w", shown, u.Scheme, ErrBadRemoteURL)
		case u.Host == "" && !strings.EqualFold(u.Scheme, "file"):
			return fmt.Errorf("vault: remote URL %s names no host: %w", shown, ErrBadRemoteURL)
		}
		return nil
	}
	host, rest, ok := strings.Cut(raw, ":")
	if !ok || strings.ContainsAny(host, "/\\@") || len(host) < 2 {
		return nil // a path, a user@host:path, or a drive letter
	}
	for _, s := range remoteSchemes {
		if near(strings.ToLower(host), s) && strings.HasPrefix(rest, "/") {
			return fmt.Errorf("vault: remote URL %s looks like a URL with its scheme mistyped or a slash lost "+
				"(%s://host/path?): %w", shown, s, ErrBadRemoteURL)
		}
	}
	return nil
}

// near reports whether a is b, or one letter added, dropped or changed away.
func near(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > 1 {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	if len(a) == len(b) {
		return a[i+1:] == b[i+1:]
	}
	return a[i:] == b[i+1:]
}
