package transport

import (
	"fmt"
	"strings"
	"testing"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

func TestCredentialRequest(t *testing.T) {
	tests := []struct {
		url, user string
		want      string // "" means not ok
	}{
		{"https://git.example.com/me/memory.git", "", "protocol=https\nhost=git.example.com\npath=me/memory.git\n\n"},
		{"http://127.0.0.1:8080/vault.git", "bob", "protocol=http\nhost=127.0.0.1:8080\npath=vault.git\nusername=bob\n\n"},
		{"https://alice@git.example.com", "alice", "protocol=https\nhost=git.example.com\nusername=alice\n\n"},
		{"https://git.example.com/x.git", "a\nb", ""},
		{"ssh://git@git.example.com/x.git", "", ""},
		{"git@git.example.com:x.git", "", ""},
		{"file:///tmp/x.git", "", ""},
		{"/tmp/x.git", "", ""},
	}
	for _, tt := range tests {
		got, ok := credentialRequest(tt.url, tt.user)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("credentialRequest(%q, %q) = %q, %t; want %q", tt.url, tt.user, got, ok, tt.want)
		}
	}
}

func TestCredentialHides(t *testing.T) {
	c := &credential{username: "u", password: "hunter2", lines: []string{"password=hunter2"}}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(f, c); strings.Contains(s, "hunter2") {
			t.Errorf("Sprintf(%q, credential) = %q, shows the password", f, s)
		}
	}
}

// TestAuthMethodOrder: https credentials come from Auth, then the URL, with
// x-access-token as the user of a token alone; none gives no auth at all. The
// environment plays no part: the command line reads it.
func TestAuthMethodOrder(t *testing.T) {
	const url = "https://urluser:urlpass@git.example/v.git"
	tests := []struct {
		name               string
		auth               Options
		rawURL             string
		wantUser, wantPass string
		wantNone           bool
	}{
		{name: "Auth wins", auth: Options{Username: "u", Password: "p"}, rawURL: url, wantUser: "u", wantPass: "p"},
		{name: "a token alone", auth: Options{Password: "et"}, rawURL: "https://git.example/v.git", wantUser: "x-access-token", wantPass: "et"},
		{name: "the URL last", rawURL: url, wantUser: "urluser", wantPass: "urlpass"},
		{name: "a user alone is no password", auth: Options{Username: "u"}, rawURL: "https://git.example/v.git", wantNone: true},
		{name: "none", rawURL: "https://git.example/v.git", wantNone: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"MEMVAULT_GIT_USERNAME", "MEMVAULT_GIT_PASSWORD", "MEMVAULT_GIT_TOKEN"} {
				t.Setenv(k, "from-the-environment")
			}
			am, err := authMethod(tt.rawURL, tt.auth)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantNone {
				if am != nil {
					t.Errorf("authMethod = %v, want none", am)
				}
				return
			}
			ba, ok := am.(*githttp.BasicAuth)
			if !ok || ba.Username != tt.wantUser || ba.Password != tt.wantPass {
				t.Errorf("authMethod = %#v, want basic auth %s:%s", am, tt.wantUser, tt.wantPass)
			}
		})
	}
}
