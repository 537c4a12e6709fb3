package memstore_test

import (
	"strings"
	"testing"

	"github.com/memvault/memvault/agent/memstoreapi/memstoreapitest"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestRefusedVersionSetAside: a version the vault refuses (its path holds
// "..") is set aside and named, and this sync and later ones go on past
// it; every later sync used to stop at it for good.
func TestRefusedVersionSetAside(t *testing.T) {
	s := memstoreapitest.New(t)
	s.Write("/a.md", "a", memstoreapitest.Session("sesn_01"))
	s.Write("/../escape.md", "out", memstoreapitest.Session("sesn_01"))
	s.Write("/b.md", "b", memstoreapitest.Session("sesn_01"))
	v := vaulttest.New(t)
	res := sync(t, v, s)
	if len(res.SetAside) != 1 || !strings.HasPrefix(res.SetAside[0], "memver_") || !strings.Contains(res.SetAside[0], "escape.md") {
		t.Errorf("set aside %q, want the version of /../escape.md, named", res.SetAside)
	}
	same(t, "the vault after the first sync", files(t, v), map[string]string{"/a.md": "a", "/b.md": "b"})

	s.Write("/c.md", "c", memstoreapitest.Session("sesn_01"))
	res = sync(t, v, s)
	if len(res.SetAside) != 0 || res.Pulled != 1 {
		t.Errorf("second sync: pulled %d, set aside %q; want the one new version, and nothing set aside again", res.Pulled, res.SetAside)
	}
	same(t, "the vault after the second sync", files(t, v), map[string]string{"/a.md": "a", "/b.md": "b", "/c.md": "c"})
}
