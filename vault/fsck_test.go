package vault

import (
	"context"
	"strings"
	"testing"

	"github.com/memvault/memvault/gitlog"
)

// TestFsckFindsPlaintext plants a memory blob written without encryption deep in
// the history, as a buggy or malicious writer could, and expects fsck to name it.
func TestFsckFindsPlaintext(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v, _, err := Init(ctx, dir+"/v.git", Options{IdentityFile: dir + "/id"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if problems, err := v.Fsck(ctx); err != nil || len(problems) != 0 {
		t.Fatalf("Fsck on a new vault = %v, %v", problems, err)
	}
	w, _ := v.repo.Lock(ctx)
	head, _ := v.repo.Head()
	_, err = w.Commit(head, []gitlog.Change{{Op: gitlog.Put, Path: "memories/leak.md", Data: []byte("secret in the clear")}},
		gitlog.CommitInfo{Message: "leak\n", Sign: v.sign.sign})
	w.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	err = v.Update(ctx, Meta{Command: "delete"}, func(tx *Tx) error { return tx.Remove("/memories/leak.md") })
	if err != nil {
		t.Fatal(err)
	}
	problems, err := v.Fsck(ctx)
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0], "memories/leak.md") ||
		!strings.Contains(problems[0], "not an age file") || !strings.HasPrefix(problems[0], "commit ") {
		t.Errorf("Fsck with a plaintext blob in history = %q, %v; want one problem naming memories/leak.md", problems, err)
	}
}
