package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/vault"
)

// The lanes of a history where a clone's two commits were merged with the
// remote's one, then one more commit on top.
func TestGraphLanes(t *testing.T) {
	recs := []vault.Record{
		{Commit: "top", Parents: []string{"merge"}},
		{Commit: "merge", Parents: []string{"ours2", "theirs"}},
		{Commit: "ours2", Parents: []string{"ours1"}},
		{Commit: "theirs", Parents: []string{"base"}},
		{Commit: "ours1", Parents: []string{"base"}},
		{Commit: "base", Parents: []string{"init"}},
		{Commit: "init"},
	}
	want := []string{
		"●  ",
		"●─╮",
		"● │",
		"│ ●",
		"● │",
		"●─╯",
		"●  ",
	}
	if got := graph(recs); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("graph:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := graph(recs[2:3]); got != nil {
		t.Errorf("a history without a merge has a graph: %q", got)
	}
}

// Merges were flat in the history: the commits of two clones interleaved in
// one list with nothing to tell them apart. A clone that wrote while its
// remote did, then synced, shows the two lines and where they meet.
func TestMergeGraph(t *testing.T) {
	ctx := context.Background()
	remote, opts := newVault(t)
	seed(t, remote)
	if err := remote.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	v, _, err := vault.Clone(ctx, "file://"+remote.Dir(), filepath.Join(t.TempDir(), "clone.git"), opts, vault.CloneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	write(t, v, vault.Meta{Command: "create", Agent: "laptop"}, "/memories/laptop.md", "here\n")
	write(t, v, vault.Meta{Command: "create", Agent: "laptop"}, "/memories/laptop2.md", "here too\n")
	write(t, remote, vault.Meta{Command: "create", Agent: "server"}, "/memories/server.md", "there\n")
	if err := remote.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Sync(ctx, vault.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, v, 100, 30)
	d.golden("merge_graph")
	var rows []string
	for _, l := range strings.Split(d.frame(), "\n") {
		if strings.Contains(l, " c0000") {
			rows = append(rows, l)
		}
	}
	for i, want := range []string{"●─╮", "│ ●", "● │", "● │", "●─╯"} {
		if i >= len(rows) || !strings.Contains(rows[i], want) {
			t.Errorf("history row %d lacks %q:\n%s", i, want, strings.Join(rows, "\n"))
			break
		}
	}
}
