package vault_test

import (
	"testing"

	"github.com/memvault/memvault/gitlog/gittest"
	"github.com/memvault/memvault/vault/vaulttest"
)

// Real git servers on loopback for the sync tests: a bare repository served as a
// local path (file://, in process), by git daemon (git://) and by git
// http-backend behind net/http/cgi (smart HTTP).

// fileRemote is an empty bare repository reached by a file:// URL.
func fileRemote(t testing.TB) string { return vaulttest.FileRemote(t) }

// daemonRemote is a new empty repository served by git daemon (git://).
func daemonRemote(t testing.TB) string { return gittest.Daemon(t) }

// httpRemote is a new empty repository served by git http-backend (smart HTTP).
func httpRemote(t testing.TB) string { return gittest.HTTP(t, "", "") }

// httpBackend is git http-backend serving a new empty repository at /vault.git,
// for a test server to wrap.
func httpBackend(t testing.TB) *gittest.Backend { return gittest.Handler(t) }
