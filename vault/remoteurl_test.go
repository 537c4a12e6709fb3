package vault

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckRemoteURL(t *testing.T) {
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"https://github.com/me/memory.git", true},
		{"http://127.0.0.1:8080/memory.git", true},
		{"ssh://git@host:2222/me/memory.git", true},
		{"git@github.com:me/memory.git", true},
		{"backup:/srv/git/memory.git", true}, // an ssh host alias
		{"git://host/memory.git", true},
		{"file:///srv/memory.git", true},
		{"/srv/memory.git", true},
		{"../memory.git", true},
		{"memory.git", true},
		{`C:\memory.git`, true},
		// Typos that git's scp-like form would take for an ssh host, and that a
		// sync would then blame on the ssh agent.
		{"htp:/x", false},
		{"https:/github.com/me/memory.git", false},
		{"htps:/github.com/me/memory.git", false},
		{"sh:/x", false},
		{"fil:/srv/memory.git", false},
		{"htp://host/x", false},
		{"https:///me/memory.git", false},
		{"", false},
		{" ", false},
	} {
		err := checkRemoteURL(c.url)
		if c.ok && err != nil {
			t.Errorf("checkRemoteURL(%q) = %v, want nil", c.url, err)
		}
		if !c.ok && !errors.Is(err, ErrBadRemoteURL) {
			t.Errorf("checkRemoteURL(%q) = %v, want ErrBadRemoteURL", c.url, err)
		}
	}
}

// The error names the URL without its password.
func TestCheckRemoteURLRedacts(t *testing.T) {
	err := checkRemoteURL("htp://me:s3cret@host/x")
	if err == nil || !errors.Is(err, ErrBadRemoteURL) {
		t.Fatalf("checkRemoteURL(htp://me:s3cret@host/x) = %v, want ErrBadRemoteURL", err)
	}
	if msg := err.Error(); strings.Contains(msg, "s3cret") {
		t.Errorf("checkRemoteURL's error %q shows the password", msg)
	}
}
