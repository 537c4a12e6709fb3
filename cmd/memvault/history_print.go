package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

// writeRecordJSON writes v as one line of JSON, with the C1 and bidi controls
// that encoding/json leaves raw escaped too: the values are the same, and a
// terminal it is printed on obeys none of them.
func writeRecordJSON(out io.Writer, what string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if _, err := out.Write(escape.JSON(b.Bytes())); err != nil {
		return fmt.Errorf("%s: write: %w", what, err)
	}
	return nil
}

// statusLetter is git's one-letter name of a file's change.
func statusLetter(s vault.FileStatus) string {
	switch s {
	case vault.Added:
		return "A"
	case vault.Deleted:
		return "D"
	case vault.Renamed:
		return "R"
	}
	return "M"
}

// writeFileList writes one line a changed file: its status letter and path(s).
func writeFileList(out io.Writer, files []vault.FileChange, st styles) {
	for _, f := range files {
		line := fmt.Sprintf("%s %s", statusLetter(f.Status), escape.Name(f.Path))
		if f.NewPath != "" {
			line += " -> " + escape.Name(f.NewPath)
		}
		fmt.Fprintln(out, "  "+st.bold(line))
	}
}

// writeDiffs writes each file's unified diff, coloured on a terminal; a rename
// without edits gets git's rename lines. The content was written by an agent,
// maybe a collaborator's: its controls are escaped, newlines and tabs kept.
func writeDiffs(out io.Writer, files []vault.FileChange, st styles) error {
	var b strings.Builder
	for _, f := range files {
		if f.Status == vault.Renamed {
			if f.Similarity > 0 {
				fmt.Fprintf(&b, "%s\n", st.bold(fmt.Sprintf("similarity index %d%%", f.Similarity)))
			}
			fmt.Fprintf(&b, "%s\n%s\n", st.bold("rename from "+escape.Name(f.Path)), st.bold("rename to "+escape.Name(f.NewPath)))
		}
		for _, line := range strings.SplitAfter(escape.Text(f.Diff), "\n") {
			text := strings.TrimSuffix(line, "\n")
			switch {
			case text == "":
				if line == "" {
					continue
				}
			case strings.HasPrefix(text, "--- "), strings.HasPrefix(text, "+++ "), strings.HasPrefix(text, "Binary files "):
				text = st.bold(text)
			case strings.HasPrefix(text, "@@"):
				text = st.cyan(text)
			case text[0] == '+':
				text = st.green(text)
			case text[0] == '-':
				text = st.red(text)
			}
			b.WriteString(text + "\n")
		}
	}
	if _, err := io.WriteString(out, b.String()); err != nil {
		return fmt.Errorf("diff: write: %w", err)
	}
	return nil
}

// writeUndoResult writes what an undo did, or nothing, the sentence saying there
// was nothing to do.
func writeUndoResult(out io.Writer, verb, nothing string, res *vault.UndoResult, asJSON bool, st styles) error {
	if asJSON {
		if res.Files == nil {
			res.Files = []vault.FileChange{}
		}
		return writeRecordJSON(out, verb, res)
	}
	if res.Commit == "" {
		_, err := fmt.Fprintln(out, nothing)
		return err
	}
	fmt.Fprintf(out, "%s: committed %s, changing %d file(s):\n", verb, st.yellow(shortHash(res.Commit)), len(res.Files))
	writeFileList(out, res.Files, st)
	return nil
}

// historyCommands are the commands that read and undo the history.
func historyCommands(g *globalOptions) []*cobra.Command {
	return []*cobra.Command{
		newShowCommand(g), newDiffCommand(g), newRestoreCommand(g), newRevertCommand(g),
		newRollbackCommand(g), newCheckpointCommand(g), newCheckpointsCommand(g), newTextconvCommand(g),
		newStatusCommand(g), newEditCommand(g),
	}
}
