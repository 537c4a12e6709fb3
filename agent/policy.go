package agent

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/memvault/memvault/vault"
)

// SecretPolicy says what a write does with text that looks like a secret: an
// API key, a private key, a token, a card number. The vault's config names it
// ([memvault] secretPolicy); it applies to the text the agent writes
// (create's file_text, str_replace's new_str, insert's insert_text).
type SecretPolicy string

// The secret policies.
const (
	SecretsOff    SecretPolicy = "off"    // write as given, say nothing
	SecretsWarn   SecretPolicy = "warn"   // write as given, and the answer says what was found where
	SecretsRedact SecretPolicy = "redact" // write with each secret replaced by [REDACTED:<kind>]
	SecretsReject SecretPolicy = "reject" // write nothing; the answer is an error
)

// DefaultSecretPolicy is the policy of a vault whose config names none, or an
// unknown one.
const DefaultSecretPolicy = SecretsWarn

// ParseSecretPolicy returns the policy s names, or DefaultSecretPolicy.
func ParseSecretPolicy(s string) SecretPolicy {
	switch p := SecretPolicy(strings.ToLower(strings.TrimSpace(s))); p {
	case SecretsOff, SecretsWarn, SecretsRedact, SecretsReject:
		return p
	}
	return DefaultSecretPolicy
}

// secretRule finds one kind of secret. check, when set, confirms a match the
// pattern alone cannot (a card number's Luhn digit). hint, when set, tells
// whether the text may hold one at all: most patterns begin with \b, which
// leaves the regexp package no literal to look for first, so it tried the
// pattern at every byte of every text, and an import of 10,000 small files
// spent 1.5 s of CPU in the rules alone.
type secretRule struct {
	kind  string
	re    *regexp.Regexp
	check func(string) bool
	hint  func(string) bool
}

// holdsAny returns a hint: the text holds one of subs.
func holdsAny(subs ...string) func(string) bool {
	return func(text string) bool {
		for _, s := range subs {
			if strings.Contains(text, s) {
				return true
			}
		}
		return false
	}
}

// holdsFold tells whether text holds word (ASCII lowercase), in any case.
func holdsFold(word string) func(string) bool {
	return func(text string) bool {
		for i := 0; i+len(word) <= len(text); i++ {
			j := strings.IndexAny(text[i:], word[:1]+strings.ToUpper(word[:1]))
			if j < 0 || i+j+len(word) > len(text) {
				return false
			}
			i += j
			if strings.EqualFold(text[i:i+len(word)], word) {
				return true
			}
		}
		return false
	}
}

// holdsDigits tells whether text holds a run of at least 13 digits, each
// after the one before or after a single space or dash, as a card number is
// written.
func holdsDigits(text string) bool {
	n, gap := 0, false
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c >= '0' && c <= '9':
			if n++; n >= 13 {
				return true
			}
			gap = false
		case (c == ' ' || c == '-') && n > 0 && !gap:
			gap = true
		default:
			n, gap = 0, false
		}
	}
	return false
}

// secretRules is our own small rule set, after the prefixes the issuers
// document and gitleaks' rules for them. Specific rules come before general
// ones: a match is reported once, under the first rule that finds it. They are
// compiled on the first write, not as the program starts: compiling them took
// half a millisecond of every process's start, a view or a listing included.
var secretRules = sync.OnceValue(func() []secretRule {
	return []secretRule{
		{kind: "private key", re: regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----[\s\S]*?(-----END[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----|$)`),
			hint: holdsAny("PRIVATE KEY")},
		{kind: "age identity", re: regexp.MustCompile(`\bAGE-SECRET-KEY-(?:[A-Z0-9]+-)?1[02-9AC-HJ-NP-Z]{50,}`),
			hint: holdsAny("AGE-SECRET-KEY-")},
		{kind: "Anthropic API key", re: regexp.MustCompile(`\bsk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_\-]{20,}`),
			hint: holdsAny("sk-ant-")},
		{kind: "OpenAI API key", re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,}|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}|\bsk-[A-Za-z0-9]{48}\b`),
			hint: holdsAny("sk-")},
		{kind: "AWS access key id", re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}\b`),
			hint: holdsAny("AKIA", "ASIA", "ABIA", "ACCA", "A3T")},
		{kind: "GitHub token", re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{82})\b`),
			hint: holdsAny("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")},
		{kind: "Slack token", re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`),
			hint: holdsAny("xox")},
		{kind: "Google API key", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`),
			hint: holdsAny("AIza")},
		{kind: "JSON Web Token", re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}`),
			hint: holdsAny("eyJ")},
		{kind: "bearer token", re: regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9_\-.~+/]{20,}=*`),
			hint: holdsFold("bearer")},
		{kind: "card number", re: regexp.MustCompile(`\b(?:\d[ -]?){12,18}\d\b`), check: luhnCard, hint: holdsDigits},
	}
})

// secret is one match: its kind and byte range in the text.
type secret struct {
	kind       string
	start, end int
}

// findSecrets returns the secrets in text, in order, not overlapping.
func findSecrets(text string) []secret {
	var found []secret
	taken := func(s, e int) bool {
		for _, f := range found {
			if s < f.end && f.start < e {
				return true
			}
		}
		return false
	}
	for _, r := range secretRules() {
		if r.hint != nil && !r.hint(text) {
			continue
		}
		for _, m := range r.re.FindAllStringIndex(text, -1) {
			if taken(m[0], m[1]) || r.check != nil && !r.check(text[m[0]:m[1]]) {
				continue
			}
			found = append(found, secret{kind: r.kind, start: m[0], end: m[1]})
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].start < found[j].start })
	return found
}

// luhnCard tells whether s, digits with optional spaces or dashes, is 13 to 19
// digits that pass the Luhn check and do not repeat one digit.
func luhnCard(s string) bool {
	var digits []int
	for _, c := range s {
		if c >= '0' && c <= '9' {
			digits = append(digits, int(c-'0'))
		}
	}
	if len(digits) < 13 || len(digits) > 19 {
		return false
	}
	same := true
	sum := 0
	for i := range digits {
		d := digits[len(digits)-1-i]
		same = same && d == digits[0]
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0 && !same
}

// redactSecrets replaces each secret in text with [REDACTED:<kind>].
func redactSecrets(text string, found []secret) string {
	var b strings.Builder
	last := 0
	for _, s := range found {
		b.WriteString(text[last:s.start])
		b.WriteString("[REDACTED:" + s.kind + "]")
		last = s.end
	}
	b.WriteString(text[last:])
	return b.String()
}

// describeSecrets names what was found and where, by kind and line within the
// text the agent sent, never the secret itself: "an AWS access key id (line 3)".
func describeSecrets(field, text string, found []secret) string {
	parts := make([]string, len(found))
	for i, s := range found {
		parts[i] = fmt.Sprintf("%s (line %d of %s)", s.kind, 1+strings.Count(text[:s.start], "\n"), field)
	}
	return strings.Join(parts, ", ")
}

// applySecretPolicy applies p to text, the value of the command's field. It
// returns the text to write and a note for the answer, or the failure that
// rejects the write.
func applySecretPolicy(p SecretPolicy, field, text string) (string, string, error) {
	if p == SecretsOff {
		return text, "", nil
	}
	found := findSecrets(text)
	if len(found) == 0 {
		return text, "", nil
	}
	what := describeSecrets(field, text, found)
	switch p {
	case SecretsReject:
		return "", "", fail("Nothing was written: %s looks like a secret: %s. "+
			"Secrets must not be stored in memory; write the text again without them, "+
			"or with a placeholder such as [REDACTED].", field, what)
	case SecretsRedact:
		return redactSecrets(text, found), "\n\nNote: " + field + " looked like it held secrets (" + what +
			"); they were written as [REDACTED:<kind>] instead. Do not store secrets in memory.", nil
	}
	return text, "\n\nWarning: " + field + " looks like it holds secrets (" + what +
		"); they were stored in memory as given. Remove them if they should not be kept.", nil
}

// checkSecrets applies the vault's secret policy to what c writes: the text,
// and the path a create or rename names, which is stored in the tree and the
// commit's subject in the clear. It returns c with that text as it is to be
// written, and the note for the answer.
func checkSecrets(c command, limits vault.Limits) (command, string, error) {
	p := ParseSecretPolicy(limits.SecretPolicy)
	var pathNote string
	switch c.name {
	case "create":
		n, err := applySecretPolicyPath(p, "path", c.path)
		if err != nil {
			return c, "", err
		}
		pathNote = n
	case "rename":
		note, err := applySecretPolicyPath(p, "new_path", c.newPath)
		return c, note, err
	}
	var field string
	var text *string
	switch c.name {
	case "create":
		field, text = "file_text", &c.fileText
	case "str_replace":
		field, text = "new_str", &c.newStr
	case "insert":
		field, text = "insert_text", &c.insertText
	default:
		return c, "", nil
	}
	out, note, err := applySecretPolicy(p, field, *text)
	*text = out
	return c, pathNote + note, err
}

// applySecretPolicyPath applies p to a path the command stores. A path cannot
// be redacted, which would put the file somewhere the agent did not ask: under
// redact, as under reject, nothing is written.
func applySecretPolicyPath(p SecretPolicy, field, path string) (string, error) {
	if p == SecretsOff {
		return "", nil
	}
	found := findSecrets(path)
	if len(found) == 0 {
		return "", nil
	}
	kinds := make([]string, len(found))
	for i, s := range found {
		kinds[i] = s.kind
	}
	what := strings.Join(kinds, ", ")
	if p == SecretsReject || p == SecretsRedact {
		return "", fail("Nothing was written: %s looks like a secret: %s. "+
			"Secrets must not be stored in memory, names included; choose a name without them.", field, what)
	}
	return "\n\nWarning: " + field + " looks like it holds a secret (" + what +
		"); it was stored in memory as given, as a file name. Rename the file if it should not be kept.", nil
}

// ImportScreen returns the secret policy of a vault with limits as an
// import's screen (vault.ImportOptions.Screen), so files brought in by
// `memvault import` meet the same policy as what an agent writes: a file
// whose name holds a secret is left out under redact and reject; one whose
// text does is left out under reject, written redacted under redact, and
// written with a warning under warn. No secret is quoted.
func ImportScreen(limits vault.Limits) func(vault.ImportFile) (vault.ImportFile, string, string) {
	p := ParseSecretPolicy(limits.SecretPolicy)
	return func(f vault.ImportFile) (vault.ImportFile, string, string) {
		if p == SecretsOff {
			return f, "", ""
		}
		var warns []string
		if found := findSecrets(f.Path); len(found) > 0 {
			kinds := make([]string, len(found))
			for i, s := range found {
				kinds[i] = s.kind
			}
			if p != SecretsWarn {
				return f, "its name looks like a secret (" + strings.Join(kinds, ", ") + "; secretPolicy " + string(p) + ")", ""
			}
			warns = append(warns, "its name looks like a secret ("+strings.Join(kinds, ", ")+")")
		}
		text := string(f.Data)
		if found := findSecrets(text); len(found) > 0 {
			what := describeSecrets("the file", text, found)
			switch p {
			case SecretsReject:
				return f, "it looks like it holds secrets (" + what + "; secretPolicy reject)", ""
			case SecretsRedact:
				f.Data = []byte(redactSecrets(text, found))
				warns = append(warns, "written with its secrets as [REDACTED:<kind>] ("+what+")")
			default:
				warns = append(warns, "it looks like it holds secrets ("+what+"), written as they are")
			}
		}
		return f, "", strings.Join(warns, "; ")
	}
}
