package transport

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	gittransport "github.com/go-git/go-git/v5/plumbing/transport"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// ssh as git does it. Without a key file named (Options.SSHKey), the keys the
// ssh agent holds are offered first, then the default key files of
// ~/.ssh that need no passphrase, in the order OpenSSH tries them; the host
// is checked against known_hosts. Each way this fails says what it is: no
// key to offer, every key refused, a host known_hosts does not name, and a
// host key that changed, which may be a man in the middle and is said
// loudly. go-git alone offered only the agent's keys and called every one
// of these "the remote refused authentication".

// defaultKeyFiles are the private keys ssh tries in ~/.ssh, in its order.
// Security-key types (id_ecdsa_sk, id_ed25519_sk) need the key's device,
// which memvault cannot reach, and are left out.
var defaultKeyFiles = []string{"id_rsa", "id_ecdsa", "id_ed25519"}

// sshAuth is go-git's public-key auth with a record of what it offered, so a
// refusal can say which keys the server turned down.
type sshAuth struct {
	*gitssh.PublicKeysCallback
	host        string   // host:port, for messages
	knownHosts  []string // the known_hosts files checked
	named       string   // Options.SSHKey, when given
	fromAgent   int      // keys the agent offered
	agentWhy    string   // why there were none from an agent
	files       []string // key files offered, as ~/.ssh/NAME
	locked      []string // key files skipped for their passphrase
	agentCloser interface{ Close() error }
}

func newSSHAuth(ep *gittransport.Endpoint, user string, a Options) (*sshAuth, error) {
	port := ep.Port
	if port <= 0 {
		port = gitssh.DefaultPort
	}
	s := &sshAuth{host: net.JoinHostPort(ep.Host, strconv.Itoa(port)), named: a.SSHKey}
	cb, files, err := knownHosts(a.KnownHosts)
	if err != nil {
		return nil, err
	}
	s.knownHosts = files
	var signers []ssh.Signer
	if a.SSHKey != "" {
		pk, err := gitssh.NewPublicKeysFromFile(user, a.SSHKey, a.SSHKeyPassphrase)
		if err != nil {
			return nil, fmt.Errorf("gitlog: ssh key %s: %v: %w", a.SSHKey, err, ErrAuth)
		}
		signers = []ssh.Signer{pk.Signer}
	} else {
		signers = s.defaultSigners()
	}
	s.PublicKeysCallback = &gitssh.PublicKeysCallback{
		User:     user,
		Callback: func() ([]ssh.Signer, error) { return signers, nil },
	}
	s.HostKeyCallback = cb
	return s, nil
}

// defaultSigners gathers what ssh would offer with no key named: the agent's
// keys, then the default key files that open without a passphrase.
func (s *sshAuth) defaultSigners() []ssh.Signer {
	var signers []ssh.Signer
	seen := map[string]bool{}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock == "" {
		s.agentWhy = "no ssh agent (SSH_AUTH_SOCK is not set)"
	} else if conn, err := net.Dial("unix", sock); err != nil {
		s.agentWhy = "no ssh agent answers at $SSH_AUTH_SOCK"
	} else {
		s.agentCloser = conn
		ag, err := agent.NewClient(conn).Signers()
		switch {
		case err != nil:
			s.agentWhy = "the ssh agent did not list its keys"
		case len(ag) == 0:
			s.agentWhy = "the ssh agent holds no key"
		}
		for _, k := range ag {
			seen[string(k.PublicKey().Marshal())] = true
		}
		signers = append(signers, ag...)
		s.fromAgent = len(ag)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return signers
	}
	for _, name := range defaultKeyFiles {
		b, err := os.ReadFile(filepath.Join(home, ".ssh", name))
		if err != nil {
			continue
		}
		k, err := ssh.ParsePrivateKey(b)
		clear(b)
		var locked *ssh.PassphraseMissingError
		switch {
		case errors.As(err, &locked):
			s.locked = append(s.locked, "~/.ssh/"+name)
			continue
		case err != nil:
			continue
		case seen[string(k.PublicKey().Marshal())]:
			continue // the agent offers it already
		}
		signers = append(signers, k)
		s.files = append(s.files, "~/.ssh/"+name)
	}
	return signers
}

// offered says which keys s offered, for the message of a refusal.
func (s *sshAuth) offered() string {
	if s.named != "" {
		return s.named
	}
	var parts []string
	switch s.fromAgent {
	case 0:
	case 1:
		parts = append(parts, "1 key from the ssh agent")
	default:
		parts = append(parts, fmt.Sprintf("%d keys from the ssh agent", s.fromAgent))
	}
	return strings.Join(append(parts, s.files...), ", ")
}

// closeAuth lets go of what an auth holds open (the connection to the ssh
// agent), once the transfer is over.
func closeAuth(auth gittransport.AuthMethod) {
	if s, ok := auth.(*sshAuth); ok && s.agentCloser != nil {
		s.agentCloser.Close()
	}
}

// sshError says what an ssh transfer's failure is, wrapping the sentinel a
// caller branches on; nil when err is no failure of ssh's own (the remote's
// git said no, the network failed), which transferError maps as before.
func sshError(err error, auth gittransport.AuthMethod) error {
	s, ok := auth.(*sshAuth)
	if !ok || err == nil {
		return nil
	}
	var keyErr *knownhosts.KeyError
	switch {
	case errors.As(err, &keyErr) && len(keyErr.Want) > 0:
		w := keyErr.Want[0]
		return fmt.Errorf("ssh: WARNING: THE HOST KEY OF %s HAS CHANGED since %s:%d recorded it. "+
			"Someone may be between this machine and the host (a man in the middle), or the host "+
			"changed its key; nothing was sent: %w", s.host, homeShort(w.Filename), w.Line, ErrHostKeyChanged)
	case errors.As(err, &keyErr):
		return fmt.Errorf("ssh: the host %s is not in known_hosts (%s), so it cannot be told from "+
			"anyone else; nothing was sent: %w", s.host, strings.Join(homeShortAll(s.knownHosts), ", "), ErrUnknownHost)
	case !strings.Contains(err.Error(), "unable to authenticate"):
		return nil
	case s.named == "" && s.fromAgent == 0 && len(s.files) == 0:
		why := s.agentWhy + " and no key in ~/.ssh (" + strings.Join(defaultKeyFiles, ", ") + ")"
		if len(s.locked) > 0 {
			why = s.agentWhy + ", and " + strings.Join(s.locked, ", ") + " needs its passphrase"
		}
		return fmt.Errorf("ssh: no key to offer %s: %s: %w", s.host, why, ErrAuth)
	}
	return fmt.Errorf("ssh: %s refused the key(s) offered (%s): %w", s.host, s.offered(), ErrAuth)
}

// knownHosts returns the check of host keys against file, or the default
// files (~/.ssh/known_hosts, /etc/ssh/ssh_known_hosts, or $SSH_KNOWN_HOSTS
// as go-git reads it), and the files it reads.
func knownHosts(file string) (ssh.HostKeyCallback, []string, error) {
	files := []string{file}
	if file == "" {
		files = filepath.SplitList(os.Getenv("SSH_KNOWN_HOSTS"))
		if len(files) == 0 {
			home, _ := os.UserHomeDir()
			files = []string{filepath.Join(home, ".ssh", "known_hosts"), "/etc/ssh/ssh_known_hosts"}
		}
	}
	var found []string
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		return nil, nil, fmt.Errorf("gitlog: ssh: no known_hosts file (%s), so no host can be told from anyone "+
			"else; nothing was sent: %w", strings.Join(homeShortAll(files), ", "), ErrUnknownHost)
	}
	cb, err := gitssh.NewKnownHostsCallback(found...)
	if err != nil {
		return nil, nil, fmt.Errorf("gitlog: ssh: known_hosts: %v: %w", err, ErrUnknownHost)
	}
	return cb, found, nil
}

// homeShort writes a path under the home folder as ~/..., as ssh's own
// messages do.
func homeShort(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rest, ok := strings.CutPrefix(p, home+string(filepath.Separator)); ok {
			return "~/" + filepath.ToSlash(rest)
		}
	}
	return p
}

func homeShortAll(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = homeShort(p)
	}
	return out
}
