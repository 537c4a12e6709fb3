package gitlog

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/memvault/memvault/gitlog/internal/pack"
)

// TestOpenReaderAcrossPackMerges: a repository kept open (a long-lived MCP
// server, serve, the UI) reads every object it read before after another
// handle merged every pack into a new one and removed the old ones, round
// after round, whatever the object's size: objects above 16 KiB were read
// through go-git by reopening a pack by its path, which a merge had
// removed, and the read failed with "no such file or directory", which the
// memory tool answered as "the path does not exist".
func TestOpenReaderAcrossPackMerges(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	reader, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	rnd := rand.New(rand.NewPCG(4, 9))
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		return b
	}
	// Each size class go-git reads another way: whole from a cache (small),
	// lazily by reopening the pack (over 16 KiB), as a stream (over
	// largeObject); and a tree over 16 KiB.
	sizes := map[string]int{"small.md": 900, "medium.md": 40 << 10, "large.md": largeObject + 4096}
	var cs []Change
	for name, n := range sizes {
		cs = append(cs, Change{Op: Put, Path: "m/" + name, Data: noise(n)})
	}
	for i := range 700 {
		cs = append(cs, Change{Op: Put, Path: fmt.Sprintf("m/wide/%s-%04d.md", strings.Repeat("n", 20), i), Data: fmt.Appendf(nil, "%d", i)})
	}
	first := commit(t, reader, cs...)
	flush(t, reader)

	type object struct {
		name string
		h    Hash
		t    plumbing.ObjectType
		size int64
	}
	var objs []object
	root, err := reader.RootTree(first)
	if err != nil {
		t.Fatal(err)
	}
	objs = append(objs, object{"commit", first, plumbing.CommitObject, 0}, object{"root tree", root, plumbing.TreeObject, 0})
	for name, n := range sizes {
		e, err := reader.Lookup(root, "m/"+name)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, object{name, e.Hash, plumbing.BlobObject, int64(n)})
	}
	wide, err := reader.Lookup(root, "m/wide")
	if err != nil {
		t.Fatal(err)
	}
	objs = append(objs, object{"wide tree", wide.Hash, plumbing.TreeObject, 0})

	readAllOf := func(round int) {
		t.Helper()
		for _, o := range objs {
			var err error
			switch o.t {
			case plumbing.CommitObject:
				reader.commits.clear() // read its bytes, not the decoded cache
				_, err = reader.ReadCommit(o.h)
			case plumbing.TreeObject:
				reader.trees.clear()
				_, err = reader.ReadTree(o.h)
			case plumbing.BlobObject:
				var data []byte
				if data, err = reader.ReadBlob(o.h); err == nil && int64(len(data)) != o.size {
					err = fmt.Errorf("%d bytes, want %d", len(data), o.size)
				}
				if err == nil {
					_, _, err = reader.BlobPrefix(o.h, 64)
				}
				if err == nil {
					_, err = reader.ObjectSize(o.h)
				}
				if err == nil {
					var rd io.ReadCloser
					if _, _, rd, err = reader.openObject(plumbing.BlobObject, o.h); err == nil {
						var n int64
						n, err = io.Copy(io.Discard, rd)
						rd.Close()
						if err == nil && n != o.size {
							err = fmt.Errorf("streamed %d bytes, want %d", n, o.size)
						}
					}
				}
			}
			if err != nil {
				t.Fatalf("round %d: read %s (%s) in the open repository: %v", round, o.name, o.h, err)
			}
		}
	}
	readAllOf(0)

	packer, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer packer.Close()
	for round := 1; round <= 6; round++ {
		commit(t, packer, Change{Op: Put, Path: fmt.Sprintf("m/round-%d.md", round), Data: noise(30 << 10)})
		if _, err := packer.Pack(ctx); err != nil {
			t.Fatalf("round %d: Pack: %v", round, err)
		}
		readAllOf(round)
	}
}

// TestLostPackIsNotMissingFile: an object whose pack is lost after it was
// found (a damaged repository: the pack removed by hand, a disk that fails)
// is a storage failure, never an error that reads as "no such file", which
// the memory tool would answer as "the path does not exist". A reader that
// holds the pack open reads on through its descriptor, as across a merge; a
// pack damaged under it, or gone before a reader opened it, fails the read.
func TestLostPackIsNotMissingFile(t *testing.T) {
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data := make([]byte, 40<<10)
	for i := range data {
		data[i] = byte(i * 7919 >> 3)
	}
	other := append([]byte("other"), data...)
	commit(t, r, Change{Op: Put, Path: "m/a.md", Data: data}, Change{Op: Put, Path: "m/b.md", Data: other})
	flush(t, r)
	// Reading b opens the pack; a is found through it.
	if got, err := read(t, r, "m/b.md"); err != nil || len(got) != len(other) {
		t.Fatalf("read before the pack is lost: %d bytes, %v", len(got), err)
	}
	packs, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*"))
	if err != nil || len(packs) == 0 {
		t.Fatalf("no pack to lose: %v", err)
	}
	notMissing := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("read of a blob whose pack is %s: no error", what)
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrNotFound) {
			t.Errorf("read of a blob whose pack is %s = %v, which reads as a missing file", what, err)
		}
	}
	for _, p := range packs {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := read(t, r, "m/a.md"); err != nil || got != string(data) {
		t.Fatalf("read through the pack held open after it was removed = %d bytes, %v; want the blob", len(got), err)
	}

	// Gone before a reader opened it.
	fresh, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	e, err := r.Lookup(mustRoot(t, r), "m/a.md") // r holds the trees read
	if err != nil {
		t.Fatal(err)
	}
	_, err = fresh.ReadBlob(e.Hash)
	notMissing("removed", err)

	// Damaged under the reader that holds it: the file cut short.
	r2dir := t.TempDir()
	r2, err := Init(r2dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	commit(t, r2, Change{Op: Put, Path: "m/a.md", Data: data}, Change{Op: Put, Path: "m/b.md", Data: other})
	flush(t, r2)
	if got, err := read(t, r2, "m/b.md"); err != nil || len(got) != len(other) {
		t.Fatalf("read before the pack is damaged: %d bytes, %v", len(got), err)
	}
	packs, _ = filepath.Glob(filepath.Join(r2dir, "objects", "pack", "pack-*.pack"))
	for _, p := range packs {
		os.Chmod(p, 0o644)
		if err := os.Truncate(p, 12); err != nil {
			t.Fatal(err)
		}
	}
	_, err = read(t, r2, "m/a.md")
	notMissing("cut short", err)
}

func mustRoot(t *testing.T, r *Repo) Hash {
	t.Helper()
	head, err := r.Head()
	if err != nil {
		t.Fatal(err)
	}
	root, err := r.RootTree(head)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// clear empties the cache, for a test that reads an object's bytes again.
func (c *objCache[T]) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
}

// TestStreamHoldsItsPack: a stream of a large blob opened before another
// handle merged its pack away, and read after the reader listed the packs
// again (which closes the packs no longer listed), reads to its end: the
// stream holds its pack open until it is closed.
func TestStreamHoldsItsPack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	reader, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	data := make([]byte, largeObject+4096)
	for i := range data {
		data[i] = byte(i * 7919 >> 5)
	}
	h := computeHash(plumbing.BlobObject, data)
	commit(t, reader, Change{Op: Put, Path: "m/large.md", Data: data})
	flush(t, reader)
	_, n, rd, err := reader.openObject(plumbing.BlobObject, h)
	if err != nil || n != int64(len(data)) {
		t.Fatalf("openObject(%s) = %d bytes, %v; want %d", h, n, err, len(data))
	}
	defer rd.Close()
	head := make([]byte, 1000)
	if _, err := io.ReadFull(rd, head); err != nil {
		t.Fatal(err)
	}

	packer, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer packer.Close()
	commit(t, packer, Change{Op: Put, Path: "m/other.md", Data: []byte("other")})
	if _, err := packer.Pack(ctx); err != nil {
		t.Fatal(err)
	}
	// A miss lists the packs again: the merged-away pack is no longer listed.
	if _, _, err := reader.packs.Stat(Hash{1}); !errors.Is(err, pack.ErrNotInPacks) {
		t.Fatalf("Stat of an absent object = %v, want ErrNotInPacks", err)
	}
	rest, err := io.ReadAll(rd)
	if err != nil {
		t.Fatalf("reading the stream after its pack was merged away: %v", err)
	}
	if got := append(head, rest...); !bytes.Equal(got, data) {
		t.Errorf("stream read %d bytes across the merge, not the blob's %d", len(got), len(data))
	}
}

// TestLooseObjects: objects git left loose are read by gitlog itself, whole,
// as streams and by size, within the same limits as packed ones; a loose
// file that does not inflate is damage, never a missing object; an object
// in neither packs nor loose files is absent.
func TestLooseObjects(t *testing.T) {
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	loose := func(typ string, data []byte) Hash {
		t.Helper()
		pt, _ := plumbing.ParseObjectType(typ)
		h := computeHash(pt, data)
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		fmt.Fprintf(zw, "%s %d\x00", typ, len(data))
		zw.Write(data)
		zw.Close()
		p := filepath.Join(dir, "objects", h.String()[:2], h.String()[2:])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, z.Bytes(), 0o444); err != nil {
			t.Fatal(err)
		}
		return h
	}
	blob := bytes.Repeat([]byte("a loose blob\n"), 100)
	h := loose("blob", blob)
	if got, err := r.ReadBlob(h); err != nil || !bytes.Equal(got, blob) {
		t.Errorf("ReadBlob(loose) = %d bytes, %v; want %d", len(got), err, len(blob))
	}
	if n, err := r.ObjectSize(h); err != nil || n != int64(len(blob)) {
		t.Errorf("ObjectSize(loose) = %d, %v; want %d", n, err, len(blob))
	}
	if _, n, rd, err := r.openObject(plumbing.AnyObject, h); err != nil || n != int64(len(blob)) {
		t.Errorf("openObject(loose) = %d, %v; want %d", n, err, len(blob))
	} else {
		got, err := io.ReadAll(rd)
		rd.Close()
		if err != nil || !bytes.Equal(got, blob) {
			t.Errorf("stream of a loose blob = %d bytes, %v; want %d", len(got), err, len(blob))
		}
	}
	if data, prefixSize, err := r.BlobPrefix(h, 5); err != nil || string(data) != "a loo" || prefixSize != int64(len(blob)) {
		t.Errorf("BlobPrefix(loose, 5) = %q, %d, %v", data, prefixSize, err)
	}

	r.SetBlobLimit(100)
	var se *SizeError
	if _, err := r.ReadBlob(h); !errors.As(err, &se) || se.Size != int64(len(blob)) {
		t.Errorf("ReadBlob(loose) over the limit = %v, want a *SizeError of %d bytes", err, len(blob))
	}
	r.SetBlobLimit(0)
	tree := loose("tree", nil)
	if _, err := r.ReadBlob(tree); !errors.Is(err, ErrWrongType) {
		t.Errorf("ReadBlob(a loose tree) = %v, want ErrWrongType", err)
	}
	if es, err := r.ReadTree(tree); err != nil || len(es) != 0 {
		t.Errorf("ReadTree(an empty loose tree) = %v, %v", es, err)
	}

	damaged := Hash{0xab, 1}
	p := filepath.Join(dir, "objects", "ab", damaged.String()[2:])
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte("not zlib at all"), 0o444); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"ReadBlob":   func() error { _, err := r.ReadBlob(damaged); return err }(),
		"ObjectSize": func() error { _, err := r.ObjectSize(damaged); return err }(),
	} {
		if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrNotFound) || errors.Is(err, plumbing.ErrObjectNotFound) {
			t.Errorf("%s(a damaged loose file) = %v, want an error that is no missing object", name, err)
		}
	}
	if _, err := r.ReadBlob(Hash{0xcd, 2}); !errors.Is(err, plumbing.ErrObjectNotFound) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadBlob(absent) = %v, want plumbing.ErrObjectNotFound", err)
	}
}
