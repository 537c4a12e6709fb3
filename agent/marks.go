package agent

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/memvault/memvault/vault"
)

// Mark is a reason for a person to look closely at a change before
// approving it. A mark never blocks a change on its own.
type Mark struct {
	// Kind is "secret", "instructions" or "mass deletion".
	Kind string `json:"kind"`
	// Why says what was found and where, for a person; it quotes no secret.
	Why string `json:"why"`
}

// Marks returns the marks of a pending change: text it adds that looks like
// a secret (the rules of the vault's secret policy); text that reads as
// instructions to the model rather than a memory (imperatives addressed to
// the assistant, data to be sent to an address, commands to run), which is
// how a poisoned page turns into a standing order once it is remembered; and
// a deletion of more files than limits let an agent delete unasked.
func Marks(p vault.PendingChange, limits vault.Limits) []Mark {
	var out []Mark
	switch {
	case p.Held != "":
		out = append(out, Mark{Kind: "mass deletion", Why: "held: it deletes or empties " + p.Held + ", more than an agent may unasked"})
	case p.Deletes > limits.MassDeleteFiles:
		out = append(out, Mark{Kind: "mass deletion", Why: fmt.Sprintf("it deletes or empties %d files, more than the %d an agent may unasked", p.Deletes, limits.MassDeleteFiles)})
	}
	for _, f := range p.Files {
		path := f.Path
		if f.NewPath != "" {
			path = f.NewPath
		}
		for _, l := range addedLines(f.Diff) {
			for _, s := range findSecrets(l.text) {
				out = append(out, Mark{Kind: "secret", Why: fmt.Sprintf("%s in %s, line %d", s.kind, path, l.n)})
			}
			if why := instruction(l.text); why != "" {
				out = append(out, Mark{Kind: "instructions", Why: fmt.Sprintf("%s in %s, line %d", why, path, l.n)})
			}
		}
	}
	return out
}

// addedLine is a line a diff adds, with its number in the new file.
type addedLine struct {
	n    int
	text string
}

// addedLines reads the lines a unified diff (vault.FileChange.Diff) adds.
func addedLines(diff string) []addedLine {
	var out []addedLine
	n := 0
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "@@"):
			// @@ -a,b +c,d @@: the new side starts at line c.
			if _, after, ok := strings.Cut(l, " +"); ok {
				num, _, _ := strings.Cut(after, ",")
				num, _, _ = strings.Cut(num, " ")
				fmt.Sscan(num, &n)
			}
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			out = append(out, addedLine{n: n, text: l[1:]})
			n++
		case strings.HasPrefix(l, " "):
			n++
		}
	}
	return out
}

// instructionRule finds one way text reads as an order to the model.
type instructionRule struct {
	why string
	re  *regexp.Regexp
}

// instructionRules are compiled on first use, as the secret rules are.
var instructionRules = sync.OnceValue(func() []instructionRule {
	const send = `(?:send|forward|upload|post|e-?mail\s+(?:it|them|this|that|these|those|the|all|every|a copy)|exfiltrate|transmit|share|submit|leak|paste)`
	const where = `(?:https?://\S+|\b[\w.+-]+@[\w-]+\.[\w.-]+|\b\d{1,3}(?:\.\d{1,3}){3}\b|\bwebhook\b)`
	return []instructionRule{
		{"an order to set aside the assistant's instructions",
			regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|override|bypass)\b[^\n]{0,40}\b(?:instructions?|rules|guidelines|system prompt|previous|above|prior)\b`)},
		{"an order addressed to the assistant",
			regexp.MustCompile(`(?i)(?:\b(?:you|assistant|claude)\s*(?:,|:)?\s*(?:must|should always|are to|will now|shall)\b|\bfrom now on\b|\bin (?:every|each|all) (?:future )?(?:answer|response|reply|conversation|session)s?\b|\b(?:always|never)\s+(?:send|forward|include|run|execute|call|visit|open|reveal|mention|tell|share|upload|email|e-mail|post)\b|\bdo not (?:tell|inform|mention)\b[^\n]{0,20}\buser\b|\bsystem prompt\b)`)},
		{"data to be sent to an address",
			regexp.MustCompile(`(?i)\b` + send + `\b[^\n]{0,80}` + where)},
		{"a command to run",
			regexp.MustCompile(`(?i)(?:\b(?:curl|wget)\s+[^\n|]*\|\s*(?:ba|z)?sh\b|\b(?:run|execute|exec|eval)\s+(?:this|the following|` + "`" + `)|^\s*(?:\$\s+|sudo\s|rm\s+-rf\b|bash\s+-c\b|sh\s+-c\b|powershell\b|python3?\s+-c\b|nc\s+-e\b|chmod\s+\+x\b))`)},
	}
})

// instruction says how text reads as instructions to the model, or "".
func instruction(text string) string {
	for _, r := range instructionRules() {
		if r.re.MatchString(text) {
			return r.why
		}
	}
	return ""
}
