package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog/gittest"
)

// TestImportHonoursSecretPolicy: with secretPolicy=reject, an AWS key, an SSH
// private key and an age identity (memvault's own kind) went in through
// import without a word. The policy the memory tool applies holds for import
// too: reject leaves them out, redact writes them redacted, warn says so.
func TestImportHonoursSecretPolicy(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	files := map[string]string{
		"aws.md":      "deploy with " + "AKIA" + "IOSFODNN7EXAMPLE" + "\n",
		"id_ed25519":  "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
		"identity":    "# created: today\n" + id.String() + "\n",
		"notes/ok.md": "nothing secret here\n",
	}
	for name, body := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, policy := range []string{"reject", "redact", "warn"} {
		t.Run(policy, func(t *testing.T) {
			flags := initVault(t)
			if out, err := exec.Command(gittest.Git(t), "--git-dir", flags[1], "config", "memvault.secretPolicy", policy).CombinedOutput(); err != nil {
				t.Fatalf("git config: %v\n%s", err, out)
			}
			cli := cliFor(flags...)
			out, code, stderr := cli("", "import", src)
			if code != exitOK {
				t.Fatalf("import: status %d\n%s%s", code, out, stderr)
			}
			for _, secret := range []string{"AKIA", "b3BlbnNzaC1rZXktdjEAAAA", id.String()} {
				if strings.Contains(out+stderr, secret) {
					t.Errorf("import's output quotes a secret %q:\n%s", secret, out)
				}
			}
			for _, name := range []string{"aws.md", "id_ed25519", "identity"} {
				got, code, _ := cli("", "cat", name)
				switch policy {
				case "reject":
					if code == exitOK || !strings.Contains(out, "/memories/"+name+": it looks like it holds secrets") {
						t.Errorf("reject: %s imported (%q), or not listed as skipped:\n%s", name, got, out)
					}
				case "redact":
					if code != exitOK || !strings.Contains(got, "[REDACTED:") || strings.Contains(got, "AKIA") || strings.Contains(got, id.String()) {
						t.Errorf("redact: %s = %q, want it imported with its secret redacted", name, got)
					}
				case "warn":
					if code != exitOK || !strings.Contains(out, "/memories/"+name+": it looks like it holds secrets") {
						t.Errorf("warn: %s imported %v, want it imported and listed with a warning:\n%s", name, code == exitOK, out)
					}
				}
			}
			if got, code, _ := cli("", "cat", "notes/ok.md"); code != exitOK || got != files["notes/ok.md"] {
				t.Errorf("%s: notes/ok.md = %q, want it imported as it is", policy, got)
			}
		})
	}
}
