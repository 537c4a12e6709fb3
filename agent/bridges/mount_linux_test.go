//go:build linux

package bridges_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/agent/agenttest"
	"github.com/memvault/memvault/agent/mount"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// mountDiffers are the contract cases where the SDK's tool answers otherwise
// on a mounted vault than on a plain folder, and why: each writes a file over
// the vault's file size limit (1 MiB), which a plain folder takes and the
// mount refuses with EFBIG, as the vault refuses it through every face.
var mountDiffers = map[string]string{
	"order/path-before-size":        "over the vault's file size limit",
	"create/too-large":              "over the vault's file size limit",
	"create/too-large-counts-bytes": "over the vault's file size limit",
	"str_replace/too-large":         "over the vault's file size limit",
	"insert/too-large":              "over the vault's file size limit",
}

// TestSDKOnMount runs the TypeScript SDK's own local-filesystem memory tool
// (BetaLocalFilesystemMemoryTool, through testdata/sdkserve.js) on a mounted
// vault and on a plain folder, side by side: every contract case (its setup,
// then its input) must get the same answer from both, and whatever the case
// leaves must be in the vault. The vault is in the default format, sealed, so
// a name over 143 bytes fails with ENAMETOOLONG where the folder takes it
// (agenttest.SealedDiffers).
func TestSDKOnMount(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse on this machine (%v): a vault cannot be mounted", err)
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			t.Skip("not root and no fusermount3 (package fuse3): a vault cannot be mounted")
		}
	}
	dir := installTypeScript(t)
	harness, err := os.ReadFile(filepath.Join("testdata", "sdkserve.js"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sdkserve.js"), harness, 0o644); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	plainBase, mountBase := filepath.Join(work, "plain"), filepath.Join(work, "mounted")
	for _, d := range []string{plainBase, mountBase, filepath.Join(plainBase, "memories"), filepath.Join(mountBase, "memories")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	v := vaulttest.New(t)
	m, err := mount.Start(context.Background(), v, filepath.Join(mountBase, "memories"), mount.Options{})
	if err != nil {
		t.Fatalf("mount.Start: %v", err)
	}
	defer func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := m.Wait(); err != nil {
			t.Errorf("Wait: %v", err)
		}
	}()
	plain := startLines(t, "SDK on a plain folder", os.Environ(), "node", filepath.Join(dir, "sdkserve.js"), plainBase)
	mounted := startLines(t, "SDK on the mounted vault", os.Environ(), "node", filepath.Join(dir, "sdkserve.js"), mountBase)
	same := 0
	for _, c := range agenttest.Cases {
		var obj map[string]any
		if json.Unmarshal([]byte(c.Input), &obj) != nil {
			continue // input that is not an object is the parser's case, not the folder's
		}
		// Each case starts from an empty memory folder on both sides.
		for _, base := range []string{plainBase, mountBase} {
			clear(t, filepath.Join(base, "memories"))
		}
		for _, in := range append(append([]string{}, c.Setup...), c.Input) {
			var line bytes.Buffer
			if err := json.Compact(&line, []byte(in)); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			in := line.String() // one line, as the harness reads it
			want, wantErr := plain.call(t, in)
			got, gotErr := mounted.call(t, in)
			// The SDK's errors name the folder on disk.
			want, got = strings.ReplaceAll(want, plainBase, "BASE"), strings.ReplaceAll(got, mountBase, "BASE")
			if got == want && gotErr == wantErr {
				continue
			}
			if why, ok := mountDiffers[c.Name]; ok {
				t.Logf("%s: differs as expected (%s)", c.Name, why)
				continue
			}
			if why, ok := agenttest.SealedDiffers[c.Name]; ok && gotErr && strings.Contains(got, "ENAMETOOLONG") {
				t.Logf("%s: differs as expected (%s: ENAMETOOLONG)", c.Name, why)
				continue
			}
			t.Errorf("%s: %s\non the mount:   %q (is_error %v)\nplain folder:   %q (is_error %v)", c.Name, short(in), short(got), gotErr, short(want), wantErr)
		}
		_, sealedDiffers := agenttest.SealedDiffers[c.Name]
		if _, ok := mountDiffers[c.Name]; !ok && !sealedDiffers {
			// A file closed with nothing written (an empty create) is committed
			// at its last close, which the kernel reports a moment after close
			// returns.
			for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				diffs := sameFiles(t, v, filepath.Join(plainBase, "memories"))
				if len(diffs) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("%s: the vault and the plain folder differ:\n%s", c.Name, strings.Join(diffs, "\n"))
					break
				}
			}
		}
		same++
	}
	if same < 100 {
		t.Fatalf("only %d contract cases ran", same)
	}
}

// sameFiles returns how the vault's files differ from those of the plain
// folder dir, by bytes, and which are in one only.
func sameFiles(t *testing.T, v *vault.Vault, dir string) []string {
	t.Helper()
	want := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		want["/memories/"+filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	snap, err := v.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	files, err := snap.Files(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var diffs []string
	for _, p := range files {
		b, err := snap.ReadFile(ctx, p)
		if w, ok := want[p]; !ok || err != nil || string(b) != w {
			diffs = append(diffs, fmt.Sprintf("the vault's %s = %q, %v; the plain folder's: %q (there: %v)", p, short(string(b)), err, short(w), ok))
		}
		delete(want, p)
	}
	for p := range want {
		diffs = append(diffs, p+" is in the plain folder, not in the vault")
	}
	return diffs
}

func short(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// clear empties the folder dir, keeping it.
func clear(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}
