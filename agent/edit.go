package agent

import (
	"context"
	"strconv"
	"strings"

	"github.com/memvault/memvault/vault"
)

// edit runs a mutating command inside tx and returns its answer, or the failure
// that answers it. Each command's checks run in the order the contract lists them.
func edit(ctx context.Context, tx Edit, c command) (string, error) {
	switch c.name {
	case "create":
		return create(ctx, tx, c)
	case "str_replace":
		return strReplace(ctx, tx, c)
	case "insert":
		return insert(ctx, tx, c)
	case "delete":
		return remove(tx, c)
	}
	return rename(tx, c)
}

func create(ctx context.Context, tx Edit, c command) (string, error) {
	switch k, err := stat(tx, c.path); {
	case err != nil:
		return "", err
	case k != vault.KindNone:
		return "", fail("File %s already exists", c.path)
	}
	if err := noFileAncestor(tx, c.path); err != nil {
		return "", err
	}
	if err := write(ctx, tx, c.path, c.fileText); err != nil {
		return "", err
	}
	return "File created successfully at: " + c.path, nil
}

func strReplace(ctx context.Context, tx Edit, c command) (string, error) {
	content, err := readFile(ctx, tx, c.path)
	if err != nil {
		return "", err
	}
	if c.oldStr == "" {
		return "", fail("No replacement was performed, old_str must not be empty.")
	}
	starts := occurrences(content, c.oldStr)
	switch {
	case len(starts) == 0:
		return "", fail("No replacement was performed, old_str `%s` did not appear verbatim in %s.", c.oldStr, c.path)
	case len(starts) > 1:
		return "", fail("No replacement was performed. Multiple occurrences of old_str `%s` in lines: %s. Please ensure it is unique",
			c.oldStr, startLines(content, starts))
	}
	i := starts[0]
	edited := content[:i] + c.newStr + content[i+len(c.oldStr):]
	if err := write(ctx, tx, c.path, edited); err != nil {
		return "", err
	}
	k := 1 + strings.Count(content[:i], "\n")
	return "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" + snippet(edited, k), nil
}

func insert(ctx context.Context, tx Edit, c command) (string, error) {
	content, err := readFile(ctx, tx, c.path)
	if err != nil {
		return "", err
	}
	n := strings.Count(content, "\n") + 1
	at := c.insertLine
	if !at.fits || at.n < 0 || at.n > int64(n) {
		return "", fail("Invalid `insert_line` parameter: %s. It should be within the range of lines of the file: [0, %d]", at, n)
	}
	text := strings.TrimSuffix(c.insertText, "\n")
	var edited string
	switch {
	case at.n == 0:
		edited = text + "\n" + content
	case at.n == int64(n):
		edited = content + "\n" + text
	default:
		off := lineOffset(content, int(at.n))
		edited = content[:off] + text + "\n" + content[off:]
	}
	if err := write(ctx, tx, c.path, edited); err != nil {
		return "", err
	}
	return "The file " + c.path + " has been edited.", nil
}

func remove(tx Edit, c command) (string, error) {
	if c.path == vault.Root {
		return "", fail("Cannot delete the /memories directory itself")
	}
	switch k, err := stat(tx, c.path); {
	case err != nil:
		return "", err
	case k == vault.KindNone:
		return "", fail("The path %s does not exist", c.path)
	}
	if err := tx.Remove(c.path); err != nil {
		return "", err
	}
	return "Successfully deleted " + c.path, nil
}

func rename(tx Edit, c command) (string, error) {
	if c.path == vault.Root {
		return "", fail("Cannot rename the /memories directory itself")
	}
	switch k, err := stat(tx, c.newPath); {
	case err != nil:
		return "", err
	case k != vault.KindNone:
		return "", fail("The destination %s already exists", c.newPath)
	}
	switch k, err := stat(tx, c.path); {
	case err != nil:
		return "", err
	case k == vault.KindNone:
		return "", fail("The path %s does not exist", c.path)
	}
	if strings.HasPrefix(c.newPath, c.path+"/") {
		return "", fail("Cannot move %s into itself", c.path)
	}
	if err := noFileAncestor(tx, c.newPath); err != nil {
		return "", err
	}
	if err := tx.Rename(c.path, c.newPath); err != nil {
		return "", limitFailure(err)
	}
	return "Successfully renamed " + c.path + " to " + c.newPath, nil
}

// readFile returns the content of file p, or the failure for a missing path or
// a directory.
func readFile(ctx context.Context, tx Edit, p string) (string, error) {
	switch k, err := stat(tx, p); {
	case err != nil:
		return "", err
	case k == vault.KindNone:
		return "", fail("The path %s does not exist. Please provide a valid path.", p)
	case k == vault.KindDir:
		return "", fail("The path %s is not a file.", p)
	}
	data, err := tx.ReadFile(ctx, p)
	return string(data), err
}

// noFileAncestor returns the failure for a path with a file as an ancestor.
func noFileAncestor(s Files, p string) error {
	anc, err := fileAncestor(s, p)
	if err != nil {
		return err
	}
	if anc != "" {
		return fail("The path %s is not a directory", anc)
	}
	return nil
}

// write stages data as the content of file p. The vault checks the size
// limits, so str_replace and insert that would make a file too large fail with
// the same answer as create.
func write(ctx context.Context, tx Edit, p, data string) error {
	return limitFailure(tx.WriteFile(ctx, p, []byte(data)))
}

// occurrences returns where old starts in content, occurrences not overlapping.
func occurrences(content, old string) []int {
	var starts []int
	for i := 0; ; {
		j := strings.Index(content[i:], old)
		if j < 0 {
			return starts
		}
		starts = append(starts, i+j)
		i += j + len(old)
	}
}

// startLines lists the 1-based lines on which the occurrences start, each once.
func startLines(content string, starts []int) string {
	var b strings.Builder
	line, from, last := 1, 0, 0
	for _, s := range starts {
		line += strings.Count(content[from:s], "\n")
		from = s
		if line == last {
			continue
		}
		if last > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(line))
		last = line
	}
	return b.String()
}

// lineOffset returns the byte offset at which line k+1 (1-based) of content
// starts, for 0 < k < number of lines.
func lineOffset(content string, k int) int {
	off := 0
	for ; k > 0; k-- {
		off += strings.IndexByte(content[off:], '\n') + 1
	}
	return off
}
