package vault

import (
	"fmt"
	"strings"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog"
)

type ageRecipient = age.Recipient

// Trailer keys of a memvault commit.
const (
	trCommand   = "Memory-Command"
	trPath      = "Memory-Path"
	trNewPath   = "Memory-New-Path"
	trToolUseID = "Tool-Use-Id"
	trAgent     = "Agent"
	trSession   = "Session"
	trSource    = "Memory-Source"
)

// commit writes changes on top of parent with the message and trailers of the
// design: subject "<command> <path>" ("rename <old> -> <new>"), then trailers. The
// caller holds the lock.
func (v *Vault) commit(parent gitlog.Hash, path, newPath string, changes []gitlog.Change, meta Meta) error {
	subject := meta.Command
	if path != "" {
		subject += " " + path
	}
	if newPath != "" {
		subject += " -> " + newPath
	}
	if len(changes) > 1 && path != "" {
		subject += fmt.Sprintf(" (+%d more)", len(changes)-1)
	}
	var b strings.Builder
	b.WriteString(oneLine(subject) + "\n\n")
	for _, t := range [][2]string{
		{trCommand, meta.Command}, {trPath, path}, {trNewPath, newPath},
		{trToolUseID, meta.ToolUseID}, {trAgent, meta.Agent}, {trSession, meta.Session}, {trSource, meta.Source},
	} {
		if t[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", t[0], oneLine(t[1]))
		}
	}
	now := v.opts.Now()
	author := meta.Agent
	if author == "" {
		author = "agent"
	}
	info := gitlog.CommitInfo{
		Message:   b.String(),
		Author:    gitlog.Signature{Name: signatureName(author), Email: "agent@memvault", When: now},
		Committer: gitlog.Signature{Name: "memvault", Email: "memvault@localhost", When: now},
	}
	if _, err := v.repo.Commit(parent, changes, info); err != nil {
		return fmt.Errorf("vault: commit %s: %w", subject, err)
	}
	return nil
}

// oneLine keeps a caller's value from breaking the message's line structure.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// signatureName keeps a caller's name from forging the author line: git ends the
// name at '<', so "x <a@b> 1 +0000" would set the email and time.
func signatureName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '<' || r == '>' {
			return -1
		}
		return r
	}, oneLine(s))
}
