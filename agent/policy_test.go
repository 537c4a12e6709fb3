package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

// Fake secrets, built at run time so that no scanner flags this file.
var (
	fakeAnthropic = "sk-ant-" + "api03-" + strings.Repeat("Ab3_", 10)
	fakeOpenAI    = "sk-" + "proj-" + strings.Repeat("Xy9-", 12)
	fakeOpenAI48  = "sk-" + strings.Repeat("aB3d", 12)
	fakeAWS       = "AKIA" + "IOSFODNN7EXAMPLE"
	fakeGitHub    = "ghp" + "_" + strings.Repeat("a1B2", 9)
	fakeGitHubPAT = "github_pat_" + strings.Repeat("A1b2_", 16) + "xy"
	fakeSlack     = "xox" + "b-1234567890-abcdefghij"
	fakeGoogle    = "AIza" + strings.Repeat("Sy0_", 8) + "abc"
	fakeJWT       = "eyJ" + "hbGciOiJIUzI1NiJ9.eyJ" + "zdWIiOiIxMjM0NSJ9.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	fakePEM       = "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----"
	fakeBearer    = "Authorization: Bearer " + strings.Repeat("tOk3n", 6)
	fakeCard      = "4111 1111 1111 1111"
	fakeAgeID     = "AGE-SECRET-" + "KEY-1" + strings.Repeat("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 2)[:58]
)

func TestFindSecrets(t *testing.T) {
	cases := []struct {
		text, kind string // kind "" means no secret
	}{
		{"key " + fakeAnthropic + " end", "Anthropic API key"},
		{fakeOpenAI, "OpenAI API key"},
		{fakeOpenAI48, "OpenAI API key"},
		{"aws=" + fakeAWS, "AWS access key id"},
		{fakeGitHub, "GitHub token"},
		{"# created: today\n" + fakeAgeID + "\n", "age identity"},
		{fakeGitHubPAT, "GitHub token"},
		{fakeSlack, "Slack token"},
		{fakeGoogle, "Google API key"},
		{"token: " + fakeJWT, "JSON Web Token"},
		{"x\n" + fakePEM + "\ny", "private key"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIE (cut off", "private key"},
		{fakeBearer, "bearer token"},
		{"card " + fakeCard, "card number"},
		{"5555-5555-5555-4444", "card number"},
		// True negatives.
		{"the sk-ant docs say keys start with sk-ant-api03", ""},
		{"sk-short", ""},
		{"AKIA is the prefix of AWS keys; AKIAshort", ""},
		{"ghp_ tokens are 36 characters", ""},
		{"-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----", ""},
		{"eyJhbGciOi is how a JWT starts", ""},
		{"use a bearer token from the vault", ""},
		{"order 4111 1111 1111 1112", ""}, // fails Luhn
		{"0000 0000 0000 0000", ""},       // one repeated digit
		{"phone +1 415 555 0100, ISBN 978-0-306-40615-7", ""},
		{"commit 1b2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e", ""},
		{"AIza but too short", ""},
	}
	for _, c := range cases {
		found := findSecrets(c.text)
		switch {
		case c.kind == "" && len(found) > 0:
			t.Errorf("findSecrets(%q) = %v, want none", c.text, found)
		case c.kind != "" && (len(found) != 1 || found[0].kind != c.kind):
			t.Errorf("findSecrets(%q) = %v, want one %s", c.text, found, c.kind)
		}
	}
}

// TestSecretHintsHideNothing: a rule's hint, which spares the pattern a
// text that cannot hold its secret, passes every text the pattern matches.
func TestSecretHintsHideNothing(t *testing.T) {
	texts := []string{fakeAnthropic, fakeOpenAI, fakeOpenAI48, fakeAWS, fakeGitHub, fakeGitHubPAT, fakeSlack,
		fakeGoogle, fakeJWT, fakePEM, fakeBearer, fakeCard, fakeAgeID, "5555-5555-5555-4444",
		"authorization: BEARER " + strings.Repeat("tOk3n", 6), "bEaReR\t" + strings.Repeat("x", 20), "A3T" + "XAKIAIOSFODNN7EX"}
	for _, r := range secretRules() {
		for _, text := range texts {
			for _, variant := range []string{text, "x " + text + " y", strings.ToLower(text), strings.ToUpper(text)} {
				if r.re.MatchString(variant) && r.hint != nil && !r.hint(variant) {
					t.Errorf("rule %s: the pattern matches %q, the hint says it cannot", r.kind, variant)
				}
			}
		}
	}
}

// BenchmarkFindSecrets scans a kilobyte of text that holds no secret, as
// most memory files do: an import of 10,000 of them scans 10,000.
func BenchmarkFindSecrets(b *testing.B) {
	text := "# Notes on the project\n" + strings.Repeat("The meeting moved to Thursday; bring the draft. 42 items.\n", 17)
	for b.Loop() {
		if found := findSecrets(text); len(found) != 0 {
			b.Fatal(found)
		}
	}
}

func TestParseSecretPolicy(t *testing.T) {
	for in, want := range map[string]SecretPolicy{"": SecretsWarn, "off": SecretsOff, " Redact ": SecretsRedact,
		"reject": SecretsReject, "warn": SecretsWarn, "bogus": SecretsWarn} {
		if got := ParseSecretPolicy(in); got != want {
			t.Errorf("ParseSecretPolicy(%q) = %q, want %q", in, got, want)
		}
	}
}

// policyStore is a vault with a chosen secret policy.
type policyStore struct {
	*vault.Vault
	policy string
}

func (s policyStore) Limits() vault.Limits {
	l := s.Vault.Limits()
	l.SecretPolicy = s.policy
	return l
}

// TestSecretPolicy runs each policy on each command that writes text: what the
// answer says, what is stored, and that the secret never appears in an answer.
func TestSecretPolicy(t *testing.T) {
	ctx := context.Background()
	text := "deploy notes\naws " + fakeAWS + "\n"
	for _, policy := range []string{"off", "warn", "redact", "reject"} {
		t.Run(policy, func(t *testing.T) {
			v := vaulttest.New(t)
			h := New(Vault(policyStore{v, policy}), Options{})
			if _, isErr := h.Handle(ctx, []byte(`{"command":"create","path":"/memories/base.md","file_text":"AAA\nBBB"}`), ""); isErr {
				t.Fatal("create base failed")
			}
			inputs := []struct{ field, in string }{
				{"file_text", `{"command":"create","path":"/memories/s.md","file_text":` + quote(text) + `}`},
				{"new_str", `{"command":"str_replace","path":"/memories/base.md","old_str":"BBB","new_str":` + quote(text) + `}`},
				{"insert_text", `{"command":"insert","path":"/memories/base.md","insert_line":0,"insert_text":` + quote(text) + `}`},
			}
			for _, c := range inputs {
				field, in := c.field, c.in
				before := vaulttest.Log(t, v, vault.LogOptions{})
				got, isErr := h.Handle(ctx, []byte(in), "")
				after := vaulttest.Log(t, v, vault.LogOptions{})
				// str_replace's snippet shows what was written, as the contract says;
				// nothing memvault adds may echo the secret.
				if _, note, _ := strings.Cut(got, "\n\n"); strings.Contains(note, fakeAWS) ||
					field != "new_str" && strings.Contains(got, fakeAWS) {
					t.Errorf("%s: answer %q echoes the secret", field, got)
				}
				where := "AWS access key id (line 2 of " + field + ")"
				switch policy {
				case "off":
					if isErr || strings.Contains(got, "secret") {
						t.Errorf("%s: answer %q, want a plain success", field, got)
					}
				case "warn":
					if isErr || !strings.Contains(got, "\n\nWarning: "+field+" looks like it holds secrets ("+where+")") {
						t.Errorf("%s: answer %q, want a success with a warning naming %s", field, got, where)
					}
				case "redact":
					if isErr || !strings.Contains(got, "[REDACTED:<kind>]") || !strings.Contains(got, where) {
						t.Errorf("%s: answer %q, want a success saying it redacted", field, got)
					}
				case "reject":
					want := "Error: Nothing was written: " + field + " looks like a secret: " + where
					if !isErr || !strings.HasPrefix(got, want) {
						t.Errorf("%s: answer %q, want %q...", field, got, want)
					}
					if len(after) != len(before) {
						t.Errorf("%s: a rejected write made a commit", field)
					}
				}
			}
			snap, _ := v.Snapshot(ctx)
			for _, p := range []string{"/memories/s.md", "/memories/base.md"} {
				b, err := snap.ReadFile(ctx, p)
				if policy == "reject" {
					if p == "/memories/s.md" && err == nil {
						t.Errorf("reject: %s was created", p)
					}
					continue
				}
				stored := string(b)
				if has := strings.Contains(stored, fakeAWS); has != (policy != "redact") {
					t.Errorf("%s: %s holds %q", policy, p, stored)
				}
				if policy == "redact" && !strings.Contains(stored, "[REDACTED:AWS access key id]") {
					t.Errorf("redact: %s = %q, want the placeholder", p, stored)
				}
			}
		})
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer("\n", `\n`, `"`, `\"`).Replace(s) + `"`
}
