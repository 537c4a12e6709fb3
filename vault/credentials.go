package vault

import (
	"io"

	"github.com/memvault/memvault/gitlog"
)

// Credentials are what a transfer (Sync, Clone) may present to a remote. The
// zero value means: none for https and git:// (then a user and password written
// in the URL, then git's credential helpers when the server asks), and the ssh
// agent with ~/.ssh/known_hosts for ssh. The vault reads no environment
// variable for them: the caller fills them in.
type Credentials struct {
	Username string // the https basic-auth user
	// Password is the https password or token; a token alone goes with the user
	// x-access-token. It is never shown in errors.
	Password         string
	SSHUser          string // the ssh user; "" means the URL's, else "git"
	SSHKeyFile       string // a private key file for ssh instead of the agent
	SSHKeyPassphrase string // unlocks SSHKeyFile when it is encrypted
	KnownHostsFile   string // a known_hosts file; "" means the default files
}

// String names the https user only, so that formatting Credentials (or options that
// hold them) never shows the password.
func (c Credentials) String() string { return "credentials for " + c.Username }

// GoString keeps %#v from printing the password too.
func (c Credentials) GoString() string { return c.String() }

// transfer is what a Fetch or Push with c presents, and where its progress goes.
func (c Credentials) transfer(progress io.Writer) gitlog.TransferOptions {
	return gitlog.TransferOptions{Username: c.Username, Password: c.Password, SSHUser: c.SSHUser, SSHKey: c.SSHKeyFile,
		SSHKeyPassphrase: c.SSHKeyPassphrase, KnownHosts: c.KnownHostsFile, Progress: progress}
}

// Remote is a remote a vault syncs with.
type Remote struct {
	Name string
	URL  string // with any password in it replaced by xxxxx: safe to show
}
