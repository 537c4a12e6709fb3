package gitlog

import (
	gitobject "github.com/memvault/memvault/gitlog/internal/object"

	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// tagPrefix is where tags live among the refs.
const tagPrefix = "refs/tags/"

// Ref returns the object ref names, or ZeroHash when it does not exist. A move
// still in the journal comes first: the ref's file, which git reads, takes it
// only once a flush has packed the objects it needs (see flushJournal).
func (r *Repo) Ref(name string) (Hash, error) {
	if _, _, err := r.jobjs.Refresh(r.journalPath()); err != nil && !errors.Is(err, ErrNewerFormat) {
		return ZeroHash, fmt.Errorf("gitlog: read %s: %w", name, err)
	}
	if h, ok := r.jobjs.Ref(name); ok {
		return h, nil
	}
	return r.fileRef(name)
}

// fileRef returns what the ref's file (or packed-refs) says, as git reads it.
func (r *Repo) fileRef(name string) (Hash, error) {
	// A loose ref is read with one open; go-git's reader checks each folder
	// of the path first (seven system calls). Anything else (packed refs, a
	// damaged file) goes through go-git.
	var buf [64]byte
	if f, err := os.Open(r.refPath(name)); err == nil {
		n, _ := io.ReadFull(f, buf[:])
		f.Close()
		if line := strings.TrimRight(string(buf[:n]), "\r\n"); len(line) == 40 && isHex(line) {
			return fromGG(plumbing.NewHash(line)), nil
		}
	}
	ref, err := r.st.Reference(ref(name))
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return ZeroHash, nil
	}
	if err != nil {
		return ZeroHash, fmt.Errorf("gitlog: read %s: %w", name, err)
	}
	if ref.Type() != plumbing.HashReference {
		return ZeroHash, fmt.Errorf("gitlog: read %s: a symbolic ref", name)
	}
	return fromGG(ref.Hash()), nil
}

// UpdateRef moves ref from old to new (ZeroHash for old: the ref must not exist)
// through the journal, so the move is durable and replayed after a crash like a
// commit's. The objects new needs must be in the repository, and are durable
// there already: written by Commit (into the journal) or by a fetch (a pack,
// synced before it is put in place). It returns an error wrapping ErrStale if ref
// does not hold old.
func (w *Writer) UpdateRef(ref string, old, new Hash) error {
	return w.r.casRef(ref, old, new, nil)
}

func (r *Repo) casRef(ref string, old, new Hash, objs []rawObject) error {
	cur, err := r.Ref(ref)
	if err != nil {
		return err
	}
	if cur != old {
		return fmt.Errorf("gitlog: move %s from %s: %w", ref, old, ErrStale)
	}
	return r.persist(ref, old, new, objs)
}

// Tag is an annotated tag: a named commit with who made it, when and why.
type Tag struct {
	Name    string // without tagPrefix
	Object  Hash   // the tag object, or the commit itself for a lightweight tag
	Target  Hash   // the commit
	Tagger  Signature
	Message string
}

// CreateTag writes an annotated tag object naming target and points
// refs/tags/<name> at it through the journal. It
// returns an error wrapping ErrBadRefName for a name git would refuse,
// fs.ErrExist if the tag exists, and ErrNotFound if target is not a commit.
func (w *Writer) CreateTag(name string, target Hash, tagger Signature, message string) (Tag, error) {
	r := w.r
	if err := CheckRefName(name); err != nil {
		return Tag{}, err
	}
	if _, err := r.readCommit(target); err != nil {
		return Tag{}, fmt.Errorf("gitlog: tag %s: %w", name, ErrNotFound)
	}
	ref := tagPrefix + name
	if cur, err := r.Ref(ref); err != nil {
		return Tag{}, err
	} else if !cur.IsZero() {
		return Tag{}, fmt.Errorf("gitlog: tag %s: %w", name, fs.ErrExist)
	}
	t := &object.Tag{Name: name, Tagger: tagger.git(), Message: message, TargetType: plumbing.CommitObject, Target: gg(target)}
	mo := &plumbing.MemoryObject{}
	if err := t.Encode(mo); err != nil {
		return Tag{}, fmt.Errorf("gitlog: encode tag: %w", err)
	}
	data, err := readAll(mo)
	if err != nil {
		return Tag{}, err
	}
	o := newObject(plumbing.TagObject, data)
	if err := r.casRef(ref, ZeroHash, o.Hash, []rawObject{o}); err != nil {
		return Tag{}, err
	}
	return Tag{Name: name, Object: o.Hash, Target: target, Tagger: tagger, Message: message}, nil
}

// LookupTag returns the tag called name. It returns an error wrapping
// ErrNotFound when there is none.
func (r *Repo) LookupTag(name string) (Tag, error) {
	if CheckRefName(name) != nil {
		return Tag{}, fmt.Errorf("gitlog: tag %s: %w", name, ErrNotFound)
	}
	h, err := r.Ref(tagPrefix + name)
	if err != nil {
		return Tag{}, err
	}
	if h.IsZero() {
		return Tag{}, fmt.Errorf("gitlog: tag %s: %w", name, ErrNotFound)
	}
	return r.peelTag(name, h)
}

// Tags returns every tag, sorted by name.
func (r *Repo) Tags() ([]Tag, error) {
	refs, err := r.refsWithPrefix(tagPrefix)
	if err != nil {
		return nil, fmt.Errorf("gitlog: list tags: %w", err)
	}
	var tags []Tag
	for name, h := range refs {
		t, err := r.peelTag(strings.TrimPrefix(string(name), tagPrefix), h)
		if err != nil {
			return nil, err
		}
		tags = append(tags, t)
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].Name < tags[j].Name })
	return tags, nil
}

// refsWithPrefix returns the refs whose names start with prefix, as Ref reads
// each: the journal's moves over the files.
func (r *Repo) refsWithPrefix(prefix string) (map[string]Hash, error) {
	if _, _, err := r.jobjs.Refresh(r.journalPath()); err != nil && !errors.Is(err, ErrNewerFormat) {
		return nil, err
	}
	iter, err := r.st.IterReferences()
	if err != nil {
		return nil, err
	}
	refs := map[string]Hash{}
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		if strings.HasPrefix(string(ref.Name()), prefix) && ref.Type() == plumbing.HashReference {
			refs[string(ref.Name())] = fromGG(ref.Hash())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, m := range r.jobjs.Moves() {
		switch {
		case !strings.HasPrefix(string(m.Name), prefix):
		case m.New.IsZero():
			delete(refs, m.Name)
		default:
			refs[m.Name] = m.New
		}
	}
	return refs, nil
}

// peelTag reads what the tag ref name holds: an annotated tag object or, for a
// lightweight tag, the commit itself, whose committer stands in for the tagger.
func (r *Repo) peelTag(name string, h Hash) (Tag, error) {
	o, err := r.object(plumbing.AnyObject, h)
	if err != nil {
		return Tag{}, fmt.Errorf("gitlog: tag %s: %w", name, err)
	}
	switch o.Type() {
	case plumbing.TagObject:
		var t object.Tag
		if err := t.Decode(o); err != nil {
			return Tag{}, fmt.Errorf("gitlog: tag %s: %w", name, err)
		}
		if t.TargetType != plumbing.CommitObject {
			return Tag{}, fmt.Errorf("gitlog: tag %s names a %s, not a commit", name, t.TargetType)
		}
		return Tag{Name: name, Object: h, Target: fromGG(t.Target), Tagger: signature(t.Tagger), Message: t.Message}, nil
	case plumbing.CommitObject:
		c, err := r.readCommit(h)
		if err != nil {
			return Tag{}, err
		}
		return Tag{Name: name, Object: h, Target: h, Tagger: c.Committer}, nil
	}
	return Tag{}, fmt.Errorf("gitlog: tag %s names a %s, not a commit", name, o.Type())
}

// CheckRefName checks a ref name below refs/ (a tag name, say) the way
// git check-ref-format does, and refuses a name that starts with "-" as well.
// The error wraps ErrBadRefName and says what is wrong.
func CheckRefName(name string) error {
	if why := gitobject.CheckRefName(name); why != "" {
		return fmt.Errorf("gitlog: %q %s: %w", name, why, ErrBadRefName)
	}
	return nil
}

// CommitsWithPrefix returns the commits whose hex name starts with prefix (at
// least 4 hex digits, any case).
func (r *Repo) CommitsWithPrefix(prefix string) ([]Hash, error) {
	prefix = strings.ToLower(prefix)
	if len(prefix) < 4 || len(prefix) > 40 || strings.Trim(prefix, "0123456789abcdef") != "" {
		return nil, nil
	}
	even := plumbing.NewHash(prefix + strings.Repeat("0", 40-len(prefix)))
	// A pack that a fetch or gc in another process added is not in the index
	// go-git built at open: look again after a reindex before saying none.
	r.jobjs.Refresh(r.journalPath())
	r.readMu.Lock()
	hs, err := r.st.HashesWithPrefix(even[:len(prefix)/2])
	if err == nil && len(hs) == 0 || errors.Is(err, fs.ErrNotExist) || errors.Is(err, dotgit.ErrPackfileNotFound) {
		r.st.Reindex()
		hs, err = r.st.HashesWithPrefix(even[:len(prefix)/2])
	}
	r.readMu.Unlock()
	hs = append(hs, gitobject.ToGoGit(r.jobjs.WithPrefix(even[:len(prefix)/2]))...)
	if err != nil {
		return nil, fmt.Errorf("gitlog: find %s: %w", prefix, err)
	}
	var out []Hash
	seen := map[Hash]bool{}
	for _, gh := range hs {
		h := fromGG(gh)
		if !strings.HasPrefix(h.String(), prefix) || seen[h] {
			continue
		}
		seen[h] = true
		if o, err := r.object(plumbing.CommitObject, h); err == nil && o.Type() == plumbing.CommitObject {
			out = append(out, h)
		}
	}
	return out, nil
}
