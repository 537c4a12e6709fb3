package vault

import (
	"strings"
)

// A memvault commit message is a subject line, a blank line, then one
// "Key: value" trailer a line. This file is the one place that writes and reads
// that shape.

// Trailer keys of a memvault commit.
const (
	trCommand   = "Memory-Command"
	trPath      = "Memory-Path"
	trNewPath   = "Memory-New-Path"
	trToolUseID = "Tool-Use-Id"
	trAgent     = "Agent"
	trSession   = "Session"
	trSource    = "Memory-Source"
	trOrigin    = "Memory-Origin"
	trSquashed  = "Memory-Squashed" // a sync's merge that left this clone's own commits out of the history it pushes
	trWriter    = "Memory-Writer"   // a key a change of writers adds ("+ KEY") or removes ("- KEY"); one a key

	trConflict = "Memory-Conflict" // a file a merge left with conflict markers or moved aside; one per file
	trDeleted  = "Memory-Deleted"  // a file a command that deletes many (expire) deleted; one per file

	// A change of recipients names each key it adds and removes, and how
	// many files it re-encrypted.
	trRecipientAdded   = "Recipient-Added"
	trRecipientRemoved = "Recipient-Removed"
	trReencrypted      = "Reencrypted-Files"

	// The review line (review.go). A commit of the line's own says what it
	// is (trReview: "follow", the view stood again on main; "reject"), the
	// main commit its view stands on, and every change still pending after
	// it, oldest first, one a trailer.
	trReview     = "Memory-Review"
	trReviewMain = "Memory-Review-Main"
	trPending    = "Memory-Pending"
	trRejected   = "Memory-Rejected" // a change the commit rejected
	// On main, the pending change a commit approves; on the line, each
	// change a follow found approved.
	trApproved = "Memory-Approved"
	// On a change of the line, why the guard against mass deletion held it.
	trHeld = "Memory-Held"
	// On main, "N of T": the files an agent's session deleted or emptied in
	// its run so far, of the T files the memory held when the run began.
	trRunDeleted = "Memory-Run-Deleted"
)

// trailer is one "Key: value" line of a commit message.
type trailer struct{ key, value string }

// metaTrailers are the trailers every memvault commit carries for meta, and the
// paths of the command when it has them.
func metaTrailers(meta Meta, path, newPath string) []trailer {
	return []trailer{
		{trCommand, meta.Command}, {trPath, path}, {trNewPath, newPath},
		{trToolUseID, meta.ToolUseID}, {trAgent, meta.Agent}, {trSession, meta.Session}, {trSource, meta.Source},
		{trOrigin, meta.Origin},
	}
}

// formatMessage writes subject and the trailers that have a value. Every value
// is kept on one line, so no caller can forge a trailer or the subject.
func formatMessage(subject string, trailers []trailer) string {
	var b strings.Builder
	b.WriteString(oneLine(subject) + "\n\n")
	for _, t := range trailers {
		if t.value != "" {
			b.WriteString(t.key + ": " + oneLine(t.value) + "\n")
		}
	}
	return b.String()
}

// parseMessage reads a commit message back: its subject, and its trailers in
// order. A line that is not "Key: value" with a one-word key is not a trailer.
func parseMessage(msg string) (subject string, trailers []trailer) {
	subject, rest, _ := strings.Cut(msg, "\n")
	for line := range strings.SplitSeq(rest, "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && k != "" && !strings.Contains(k, " ") {
			trailers = append(trailers, trailer{k, v})
		}
	}
	return subject, trailers
}

// trailerValue is the value of the last trailer named key, or "".
func trailerValue(trailers []trailer, key string) string {
	v := ""
	for _, t := range trailers {
		if t.key == key {
			v = t.value
		}
	}
	return v
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
