package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestSecretPolicyPaths: under reject, a key in create's file_text was
// refused, but the same key as create's path or rename's new_path was stored,
// and pushed, in the clear: in the tree and the commit's subject. A path is
// checked as text is; one cannot be redacted, so redact refuses it too.
func TestSecretPolicyPaths(t *testing.T) {
	ctx := context.Background()
	secretPath := "/memories/" + fakeAnthropic + ".md"
	for _, policy := range []string{"off", "warn", "redact", "reject"} {
		t.Run(policy, func(t *testing.T) {
			v := vaulttest.New(t)
			h := New(Vault(policyStore{v, policy}), Options{})
			if _, isErr := h.Handle(ctx, []byte(`{"command":"create","path":"/memories/plain.md","file_text":"x"}`), ""); isErr {
				t.Fatal("create plain.md failed")
			}
			for _, c := range []struct{ field, in, made string }{
				{"path", `{"command":"create","path":"` + secretPath + `","file_text":"x"}`, secretPath},
				{"new_path", `{"command":"rename","old_path":"/memories/plain.md","new_path":"` + secretPath + `x"}`, secretPath + "x"},
			} {
				before := vaulttest.Log(t, v, vault.LogOptions{})
				got, isErr := h.Handle(ctx, []byte(c.in), "")
				after := vaulttest.Log(t, v, vault.LogOptions{})
				snap, _ := v.Snapshot(ctx)
				_, err := snap.ReadFile(ctx, c.made)
				made := err == nil
				switch policy {
				case "off":
					if isErr || !made || strings.Contains(got, "secret") {
						t.Errorf("%s: answer %q, made %v; want a plain success", c.field, got, made)
					}
				case "warn":
					if isErr || !made || !strings.Contains(got, "\n\nWarning: "+c.field+" looks like it holds a secret (Anthropic API key)") {
						t.Errorf("%s: answer %q, made %v; want a success with a warning", c.field, got, made)
					}
				case "redact", "reject":
					want := "Error: Nothing was written: " + c.field + " looks like a secret: Anthropic API key."
					if !isErr || !strings.HasPrefix(got, want) || strings.Contains(got, fakeAnthropic) {
						t.Errorf("%s: answer %q, want %q...", c.field, got, want)
					}
					if made || len(after) != len(before) {
						t.Errorf("%s: a refused write made %s (%v) or a commit (%d -> %d)", c.field, c.made, made, len(before), len(after))
					}
				}
			}
		})
	}
}
