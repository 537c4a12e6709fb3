package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// Credentials from git's credential helpers (credential.helper in git's config:
// a keychain, libsecret, the store or cache helper, a forge's manager) are the
// last source of https credentials, after Options, the environment and the URL.
//
// They are asked for lazily, as git itself does: only when the server answered
// 401 to a request made without credentials, and then the transfer runs once
// more with them. Most remotes memvault talks to (local paths, ssh, public or
// token-authenticated https) then never start the git binary, no helper pops up
// a dialog for a remote that wants nothing, and no credential is sent to a
// server that did not ask for it. The cost is one refused request, and one run
// of git credential fill and approve, for every Fetch and Push (a sync does
// both): nothing is cached between them.

// credentialTimeout bounds each run of git credential. A helper that waits for a
// person (a keychain's dialog) is cut off then, and the transfer fails with
// ErrAuth as if the helper had nothing.
const credentialTimeout = 10 * time.Second

// credential is what `git credential fill` answered. Its lines are given back
// unchanged to approve or reject, so a helper finds the entry it gave (with any
// attribute it added, such as an expiry). It holds a password: it is never formatted into an error or
// a log line, and String hides it should anyone try.
type credential struct {
	lines    []string // key=value, as fill printed them
	username string
	password string
}

func (c *credential) String() string { return "credential for " + c.username }

// GoString keeps %#v from printing the password too.
func (c *credential) GoString() string { return c.String() }

// withCredentialHelper runs transfer and, when it failed because the server
// demanded credentials that none of the other sources gave (*auth is nil), asks
// git's credential helpers (configured globally, system-wide or in the config of
// the repository at dir) for rawURL's, sets *auth to them and runs transfer once more. The
// helpers then learn the outcome, as with git: approve when the server took the
// credentials, reject when it refused them (401).
// a.Username, else the URL's user is passed to the helpers as the username
// wanted. Without the git binary, or when no helper
// answers, the first error is returned as it was.
//
// Fetch and Push wrap their transfer in it; retrying the whole call is safe
// because go-git meets a 401 before any object or ref has moved.
func withCredentialHelper(ctx context.Context, dir, rawURL string, a Options, auth *gittransport.AuthMethod, transfer func() error) error {
	err := transfer()
	if *auth != nil || !errors.Is(err, gittransport.ErrAuthenticationRequired) {
		return err
	}
	c := fillCredential(ctx, dir, rawURL, helperUser(rawURL, a))
	if c == nil {
		return err
	}
	*auth = &githttp.BasicAuth{Username: c.username, Password: c.password}
	err = transfer()
	var noRef git.NoMatchingRefSpecError
	switch {
	case errors.Is(err, gittransport.ErrAuthenticationRequired):
		c.tell(ctx, dir, "reject")
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate), errors.Is(err, gittransport.ErrEmptyRemoteRepository),
		errors.As(err, &noRef), errors.Is(err, git.ErrForceNeeded):
		// The server answered with its refs, so it took the credentials. Any
		// other error (a 403, a cut connection) says nothing either way.
		c.tell(ctx, dir, "approve")
	}
	return err
}

// helperUser is the username to ask the helpers about: the one given in a or in
// the URL, or "" to take whichever they hold.
func helperUser(rawURL string, a Options) string {
	if a.Username != "" {
		return a.Username
	}
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		return u.User.Username()
	}
	return ""
}

// credentialRequest is what git credential reads on stdin for rawURL: protocol,
// host (with its port), path and, when known, username. ok is false for a URL
// that is not http(s) or holds something the format cannot carry (a newline or
// NUL). git itself drops the path again unless credential.useHttpPath is set.
func credentialRequest(rawURL, user string) (req string, ok bool) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	var b strings.Builder
	for _, kv := range [][2]string{
		{"protocol", u.Scheme},
		{"host", u.Host},
		{"path", strings.TrimPrefix(u.Path, "/")},
		{"username", user},
	} {
		if kv[1] == "" {
			continue
		}
		if strings.ContainsAny(kv[1], "\n\x00") {
			return "", false
		}
		b.WriteString(kv[0] + "=" + kv[1] + "\n")
	}
	b.WriteString("\n")
	return b.String(), true
}

// fillCredential asks git's credential helpers for rawURL's username and
// password, and returns nil when there is no git binary, no helper answers, or
// git fails or takes longer than credentialTimeout.
func fillCredential(ctx context.Context, dir, rawURL, user string) *credential {
	req, ok := credentialRequest(rawURL, user)
	if !ok {
		return nil
	}
	out, err := runCredential(ctx, dir, "fill", req)
	if err != nil {
		return nil
	}
	c := &credential{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch k {
		case "username":
			c.username = v
		case "password":
			c.password = v
		}
		c.lines = append(c.lines, line)
	}
	if c.password == "" {
		return nil
	}
	if c.username == "" {
		c.username = "x-access-token" // as authMethod does for a token alone
	}
	return c
}

// tell passes the outcome of a transfer made with c (action "approve" or
// "reject") to the helpers, so they keep or forget it. It is best effort, as in
// git: a helper that fails only means it will be asked again next time.
func (c *credential) tell(ctx context.Context, dir, action string) {
	req := strings.Join(c.lines, "\n") + "\n\n"
	runCredential(ctx, dir, action, req)
}

// runCredential runs `git credential action` with req on stdin and returns its
// stdout. The password, if any, only ever travels through stdin and stdout;
// git's stderr, which can quote the request, is dropped.
//
// git runs in the repository dir, named by GIT_DIR: it reads that config (a
// helper may be set for one vault), the global and the system one, and never
// the config of whatever repository the process happens to run in, which
// could otherwise name a helper that runs anything and is handed the password
// on approve.
//
// A vault folder is data: one that belongs to another user (a checkout, a
// backup, a folder others can write) has its config read by no git memvault
// starts, since a helper it names would run as this user and be handed the
// password, as git's safe.directory rule has it. git then runs in an empty
// folder of its own, with only the global and system config.
//
// git must never prompt: GIT_TERMINAL_PROMPT=0 keeps it off the terminal, and an
// empty GIT_ASKPASS keeps it from starting core.askPass or $SSH_ASKPASS (git
// takes a set but empty GIT_ASKPASS as "no askpass program").
func runCredential(ctx context.Context, dir, action, req string) ([]byte, error) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, credentialTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "credential", action)
	env := []string{"GIT_DIR=.", "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS="}
	cmd.Dir = dir
	if !ownedByUser(dir) {
		empty, err := os.MkdirTemp("", "memvault-credential-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(empty)
		cmd.Dir = empty
		env = []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(empty), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS="}
	}
	cmd.Env = append(withoutGitRepoEnv(os.Environ()), env...)
	cmd.Stdin = strings.NewReader(req)
	cmd.Stderr = io.Discard
	// A helper's own children (a cache daemon) may keep stdout open: stop
	// waiting for them soon after git itself is done or killed.
	cmd.WaitDelay = time.Second
	return cmd.Output()
}

// withoutGitRepoEnv drops the variables that would point git at a repository
// other than the one runCredential names.
func withoutGitRepoEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES":
			continue
		}
		out = append(out, kv)
	}
	return out
}
