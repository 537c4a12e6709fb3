package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

// holdLock makes another handle on v's directory hold the vault's writer lock,
// as another memvault writing would, until the returned function is called.
func holdLock(t *testing.T, v *vault.Vault, opts vault.Options) (release func()) {
	t.Helper()
	other, err := vault.Open(context.Background(), v.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	held, free, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		err := other.Update(context.Background(), vault.Meta{}, func(*vault.Tx) error {
			close(held)
			<-free
			return nil
		})
		if err != nil {
			t.Errorf("hold the lock: %v", err)
		}
	}()
	<-held
	once := false
	release = func() {
		if !once {
			once = true
			close(free)
			<-done
			other.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// A write behind another process's lock once said "working…" for as long as
// the lock was held (40 s), esc did nothing, and it landed later with no word
// of a lock. It says what it waits for, esc gives it up with nothing
// written, and once the lock is free it is done.
func TestWriteWaitsForTheLock(t *testing.T) {
	const waiting = "waiting for the vault's lock (held by another memvault)"
	t.Run("rollback", func(t *testing.T) {
		v, opts := newVault(t)
		seed(t, v)
		n := commitCount(t, v)
		release := holdLock(t, v, opts)
		a := newAsyncDriver(t, v, v, 100, 30)
		a.press("tab", "j", "j", "j", "j", "R")
		a.until(func() bool { return a.m.mode == modeDialog }, "confirmation")
		a.press("y")
		a.until(func() bool { return strings.Contains(a.m.status, waiting) }, "word of the lock")
		a.golden("lock_wait")
		a.press("esc")
		a.until(func() bool { return a.m.write == nil }, "end of the cancelled write")
		if !strings.Contains(a.m.status, "cancelled, nothing changed") || commitCount(t, v) != n {
			t.Fatalf("after esc the status says %q and the vault has %d commits, want %d", a.m.status, commitCount(t, v), n)
		}
		a.press("R")
		a.until(func() bool { return a.m.mode == modeDialog }, "confirmation")
		a.press("y")
		a.until(func() bool { return strings.Contains(a.m.status, waiting) }, "word of the lock")
		release()
		a.until(func() bool { return strings.Contains(a.m.status, "done as commit") }, "the rollback")
		if commitCount(t, v) != n+1 {
			t.Errorf("after the lock was freed the vault has %d commits, want %d", commitCount(t, v), n+1)
		}
	})
	t.Run("save", func(t *testing.T) {
		v, opts := newVault(t)
		seed(t, v)
		before := readMemory(t, v, prefsPath)
		release := holdLock(t, v, opts)
		a := newAsyncDriver(t, v, v, 100, 30)
		a.press("G", "l")
		a.until(func() bool { return len(a.m.tree.rows) == 4 }, "user/ unfolded")
		a.press("j", "e")
		a.until(func() bool { return a.m.mode == modeEdit }, "the editor")
		a.typeText("Hi ")
		a.update(ctrl('s'))
		a.until(func() bool { return strings.Contains(a.m.status, waiting) }, "word of the lock")
		a.press("esc")
		a.until(func() bool { return a.m.write == nil }, "end of the cancelled save")
		if a.m.mode != modeEdit || !strings.HasPrefix(a.m.editor.ta.Value(), "Hi ") || readMemory(t, v, prefsPath) != before {
			t.Fatalf("after esc: mode %v, status %q; want the editor with the text, nothing written", a.m.mode, a.m.status)
		}
		release()
		a.update(ctrl('s'))
		a.until(func() bool { return a.m.mode == modeBrowse }, "the save")
		if got := readMemory(t, v, prefsPath); got != "Hi "+before {
			t.Errorf("after the save the file is %q", got)
		}
	})
}

// typeText types s into the model, one key at a time.
func (a *asyncDriver) typeText(s string) {
	for _, r := range s {
		a.update(keyMsg(string(r)))
	}
}
