package vault_test

import (
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/seal"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestLeaveOutRefusedSealed: in a sealed vault, fsck --repair's commit is
// sealed like every other (its message once went to the host in the clear,
// naming the command and each entry left out, and fsck then called the repair
// itself a problem), and the Memory-Left-Out trailers inside it still silence
// the entries it names.
func TestLeaveOutRefusedSealed(t *testing.T) {
	v, _ := damagedSealed(t, damageCases()[0])
	hostile := head(t, v)
	left, err := v.LeaveOutRefused(ctx)
	if err != nil || len(left) == 0 {
		t.Fatalf("LeaveOutRefused = %v, %v; want the hostile entry", left, err)
	}
	msg := vaulttest.HeadMessage(t, v)
	if !seal.IsSealed(msg) || strings.Contains(msg, "repair") || strings.Contains(msg, "Memory-") {
		t.Errorf("the repair commit's message, as the host holds it = %q; want it sealed", msg)
	}
	recs := vaulttest.Log(t, v, vault.LogOptions{Limit: 1})
	if recs[0].Command != "repair" {
		t.Errorf("the repair commit opens to command %q, want repair", recs[0].Command)
	}
	problems, err := v.Fsck(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The hostile commit's own message stays in the clear in history, which
	// is never rewritten; nothing else is left to say.
	for _, p := range problems {
		if !strings.HasPrefix(p, "commit "+hostile+": a message in the clear") {
			t.Errorf("Fsck after LeaveOutRefused: %q; want only the hostile commit's clear message", p)
		}
	}
	if again, err := v.LeaveOutRefused(ctx); err != nil || len(again) > 0 {
		t.Errorf("LeaveOutRefused again = %v, %v; want nothing to do", again, err)
	}
}
