// Package source reads a git repository that memvault did not make, never
// writing it, as a source of files: a plain repository of memory files that an
// import replays. Everything in it may be crafted, so every read is bounded by
// the caller's limits. It stands beside gitlog, whose Repo is memvault's own
// repository, and gives its answers in gitlog's types.
package source

import (
	"bufio"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/gitlog/internal/pack"
)

// Repo is a git repository opened as a source of files.
type Repo struct {
	r   *git.Repository
	dir string // the repository's git folder, whose loose objects ReadFile reads itself
}

// File is one entry of a source commit's tree that is not a folder.
type File struct {
	Path string // slash-separated, relative to the tree's root
	Mode uint32 // as in gitlog.Entry
	Size int64
	Hash gitlog.Hash
}

// Open opens the git repository at dir: a working tree whose .git is a
// folder, or a bare repository. A .git that is a file (a "gitdir:" line naming
// a repository elsewhere, as worktrees and submodules have) is refused: only
// the repository given is read.
func Open(dir string) (*Repo, error) {
	gitdir := dir
	fi, err := os.Lstat(filepath.Join(dir, ".git"))
	switch {
	case err == nil && fi.IsDir():
		gitdir = filepath.Join(dir, ".git")
	case err == nil:
		return nil, fmt.Errorf("source: open %s as a git repository: its .git is not a folder (a gitdir: file names a repository elsewhere); give that repository itself", dir)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("source: open %s as a git repository: %w", dir, err)
	}
	// The cache is the repository's own size, not go-git's default of 96 MiB:
	// an import reads each blob once a commit, and a source of many large
	// blobs would fill a big cache to its brim.
	st := filesystem.NewStorageWithOptions(osfs.New(gitdir), cache.NewObjectLRU(8*cache.MiByte),
		filesystem.Options{LargeObjectThreshold: pack.LargeObject})
	r, err := git.Open(st, nil)
	if err != nil {
		return nil, fmt.Errorf("source: open %s as a git repository: %w", dir, err)
	}
	return &Repo{r: r, dir: gitdir}, nil
}

// History returns HEAD and its first-parent ancestors, oldest first, at most max
// of them (more is an error). A repository without commits has none.
func (s *Repo) History(ctx context.Context, max int) ([]*gitlog.Commit, error) {
	ref, err := s.r.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("source: source HEAD: %w", err)
	}
	var out []*gitlog.Commit
	for h := hashOf(ref.Hash()); !h.IsZero(); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(out) == max {
			return nil, fmt.Errorf("source: the source's history has more than %d commits", max)
		}
		c, err := s.r.CommitObject(plumbing.Hash(h))
		if err != nil {
			return nil, fmt.Errorf("source: source commit %s: %w", h, err)
		}
		out = append(out, commitOf(c))
		h = gitlog.ZeroHash
		if len(c.ParentHashes) > 0 {
			h = hashOf(c.ParentHashes[0])
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// Files lists the non-folder entries of tree, at most max of them (more is an
// error), with each blob's size read from its header.
func (s *Repo) Files(ctx context.Context, tree gitlog.Hash, max int) ([]File, error) {
	var out []File
	var walk func(dir string, h gitlog.Hash, depth int) error
	walk = func(dir string, h gitlog.Hash, depth int) error {
		if depth > 64 {
			return fmt.Errorf("source: source tree %s nests too deep", dir)
		}
		t, err := s.r.TreeObject(plumbing.Hash(h))
		if err != nil {
			return fmt.Errorf("source: source tree %s: %w", h, err)
		}
		for _, e := range t.Entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			p := e.Name
			if dir != "" {
				p = dir + "/" + e.Name
			}
			if uint32(e.Mode) == modeDir {
				if err := walk(p, hashOf(e.Hash), depth+1); err != nil {
					return err
				}
				continue
			}
			if len(out) == max {
				return fmt.Errorf("source: the source holds more than %d files", max)
			}
			f := File{Path: p, Mode: uint32(e.Mode), Hash: hashOf(e.Hash)}
			if f.Mode != modeSubmodule {
				if f.Size, err = s.r.Storer.EncodedObjectSize(e.Hash); err != nil {
					return fmt.Errorf("source: source blob %s: %w", p, err)
				}
			}
			out = append(out, f)
		}
		return nil
	}
	return out, walk("", tree, 0)
}

// ReadFile reads the blob of f, at most max bytes (more is an error). A loose
// blob is inflated here, never past the size its header gives: go-git inflates
// a small loose object whole, and one whose header said 5 bytes inflated to
// 2 GiB.
func (s *Repo) ReadFile(f File, max int64) ([]byte, error) {
	if data, ok, err := s.readLoose(f, max); ok {
		return data, err
	}
	o, err := s.r.Storer.EncodedObject(plumbing.BlobObject, plumbing.Hash(f.Hash))
	if err != nil {
		return nil, fmt.Errorf("source: source blob %s: %w", f.Path, err)
	}
	if o.Size() > max {
		return nil, fmt.Errorf("source: source blob %s: %d bytes, over %d", f.Path, o.Size(), max)
	}
	rc, err := o.Reader()
	if err != nil {
		return nil, fmt.Errorf("source: source blob %s: %w", f.Path, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, o.Size()+1))
	if err == nil && int64(len(data)) > o.Size() {
		err = fmt.Errorf("inflates past the %d bytes its header gives", o.Size())
	}
	if err != nil {
		return nil, fmt.Errorf("source: source blob %s: %w", f.Path, err)
	}
	return data, nil
}

// readLoose reads f's blob when it is a loose object (ok), bounded by its
// header's size and by max, and checks it hashes to its name.
func (s *Repo) readLoose(f File, max int64) (data []byte, ok bool, err error) {
	hex := f.Hash.String()
	p := filepath.Join(s.dir, "objects", hex[:2], hex[2:])
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	fail := func(format string, args ...any) ([]byte, bool, error) {
		return nil, true, fmt.Errorf("source: source blob %s: %s", f.Path, fmt.Sprintf(format, args...))
	}
	if err != nil {
		return fail("%v", err)
	}
	if !fi.Mode().IsRegular() {
		return fail("its loose object is not a regular file")
	}
	file, err := os.Open(p)
	if err != nil {
		return fail("%v", err)
	}
	defer file.Close()
	zr, err := zlib.NewReader(file)
	if err != nil {
		return fail("%v", err)
	}
	defer zr.Close()
	br := bufio.NewReader(io.LimitReader(zr, 64))
	hdr, err := br.ReadString(0)
	if err != nil {
		return fail("no object header")
	}
	typ, size, found := strings.Cut(strings.TrimSuffix(hdr, "\x00"), " ")
	n, perr := strconv.ParseInt(size, 10, 64)
	switch {
	case !found || perr != nil || n < 0:
		return fail("a damaged object header")
	case typ != "blob":
		return fail("a %s, not a blob", typ)
	case n > max:
		return fail("%d bytes, over %d", n, max)
	}
	rest := io.MultiReader(br, zr) // what the header read took, then the rest
	data, err = io.ReadAll(io.LimitReader(rest, n+1))
	switch {
	case err != nil:
		return fail("%v", err)
	case int64(len(data)) > n:
		return fail("inflates past the %d bytes its header gives", n)
	case int64(len(data)) < n:
		return fail("shorter than the %d bytes its header gives", n)
	case gitlog.BlobHash(data) != f.Hash:
		return fail("does not hash to its name")
	}
	return data, true, nil
}

// The modes of the entries Files tells apart, as git records them.
const (
	modeDir       = 0o040000
	modeSubmodule = 0o160000
)

func hashOf(h plumbing.Hash) gitlog.Hash { return gitlog.Hash(h) }

// commitOf is c in gitlog's terms.
func commitOf(c *object.Commit) *gitlog.Commit {
	parents := make([]gitlog.Hash, len(c.ParentHashes))
	for i, p := range c.ParentHashes {
		parents[i] = hashOf(p)
	}
	sig := func(s object.Signature) gitlog.Signature {
		return gitlog.Signature{Name: s.Name, Email: s.Email, When: s.When}
	}
	return &gitlog.Commit{
		Hash: hashOf(c.Hash), TreeHash: hashOf(c.TreeHash), ParentHashes: parents,
		Author: sig(c.Author), Committer: sig(c.Committer), Message: c.Message, Signed: c.PGPSignature,
	}
}
