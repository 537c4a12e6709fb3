package vault

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// The sealed format (format 2). The tree holds .memvault/key, the vault key
// age-encrypted to the recipients; every name under memories/ is sealed with
// it, one path component at a time; every memory blob is a sealed size header
// followed by the age file of the padded plaintext; every commit message and
// author is sealed. vault/seal does the cryptography; this file maps the store
// onto it. A tree with no .memvault/key is the plain format (format 1).
const (
	sealedFormatVersion = "2"
	keyPath             = ".memvault/key"
)

// sealKeys caches the vault keys opened from .memvault/key blobs, by blob
// hash: each tree carries the key its names were sealed with, and one age
// unwrap per key, not per tree or commit, is the cost of reading them.
type sealKeys struct {
	mu   sync.Mutex
	byID map[gitlog.Hash]*seal.Key
	// historyRead is set once readHistoryKeys has read every key of the
	// history into byID.
	historyRead bool
	// byRoot remembers the key of each root tree read lately (nil for the
	// plain format): a log opens one message per commit, and need not look
	// for the key file in each tree again.
	byRoot map[gitlog.Hash]*seal.Key
	// opened remembers each folder's tree with its names opened (see
	// openedTree): trees never change, so a listing opens each sealed name
	// once, and puts them in order once.
	opened map[openedKey][]openedEntry
	// paths remembers memory paths sealed lately, so a view seals each once.
	paths map[pathKey]string
	// msgs remembers the messages opened lately, by commit: a commit never
	// changes, nor does the key of its tree, so a log opens each once, as a
	// plain log decodes each commit once (gitlog caches the commits).
	msgs map[gitlog.Hash]seal.Message
	// sealedHead says the head's tree had a key file when the vault was
	// opened: a new process has opened no key yet, and must not take a
	// message in the clear at the head for the writer's.
	sealedHead bool
	// chain is every keychain read so far, merged, with the key of each tree
	// it was read from (generations.go); chainsRead are their blobs.
	chain      seal.Keychain
	chainsRead map[gitlog.Hash]bool
}

type pathKey struct {
	key *seal.Key
	p   string
}

type openedKey struct {
	tree gitlog.Hash
	dir  string
	key  *seal.Key
}

// Bounds of the caches above: a few MB at most.
const (
	maxRootKeys      = 4096
	maxOpenedFolders = 1024
	maxSealedPaths   = 16384
	maxOpenedMsgs    = 16384
)

func (s *sealKeys) get(h gitlog.Hash) (*seal.Key, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.byID[h]
	return k, ok
}

// seen says whether this vault has met the sealed format: its head was
// sealed when it was opened, or a vault key has been opened since. Never, in
// a vault of the plain format, whose readers then look up no key.
func (s *sealKeys) seen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sealedHead || len(s.byID) > 0
}

func (s *sealKeys) put(h gitlog.Hash, k *seal.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil || len(s.byID) > 64 {
		s.byID = map[gitlog.Hash]*seal.Key{}
	}
	s.byID[h] = k
}

// sealKeyAt returns the vault key of the tree root, or nil for a tree in the
// plain format. The error wraps ErrDecrypt (or the identity's error) when the
// key file cannot be opened, and ErrBadEntry when it is no vault key.
func (v *Vault) sealKeyAt(root gitlog.Hash) (*seal.Key, error) {
	v.seals.mu.Lock()
	k, ok := v.seals.byRoot[root]
	v.seals.mu.Unlock()
	if ok {
		return k, nil
	}
	e, err := v.repo.Lookup(root, keyPath)
	switch {
	case errors.Is(err, gitlog.ErrNotFound):
		k = nil
	case err != nil:
		return nil, fmt.Errorf("vault: %s: %w", keyPath, err)
	default:
		if k, err = v.sealKeyBlob(e.Hash, root); err != nil {
			if k = v.olderKey(root, e.Hash, err); k == nil {
				return nil, err
			}
		}
	}
	v.seals.mu.Lock()
	if v.seals.byRoot == nil || len(v.seals.byRoot) >= maxRootKeys {
		v.seals.byRoot = map[gitlog.Hash]*seal.Key{}
	}
	v.seals.byRoot[root] = k
	v.seals.mu.Unlock()
	return k, nil
}

// openedEntry is an entry of a memory folder's tree with its name opened;
// err says why it did not open (Name is then the stored name).
type openedEntry struct {
	gitlog.Entry
	err error
}

// openedTree returns the entries of the memory folder dir, whose tree is h,
// with their names opened under ns, in git's order of the opened names (a
// folder's name as if it ended in "/"), which is the byte order of the paths
// below them. A sealed tree is opened once: trees never change, so the result
// comes from the cache after that; the caller must not change it. The error
// is the tree's read error.
func (v *Vault) openedTree(ns codec, h gitlog.Hash, dir string) ([]openedEntry, error) {
	k := openedKey{h, dir, ns.key()}
	if ns.key() != nil {
		v.seals.mu.Lock()
		es, ok := v.seals.opened[k]
		v.seals.mu.Unlock()
		if ok {
			return es, nil
		}
	}
	es, err := v.repo.ReadTree(h)
	if err != nil {
		return nil, err
	}
	out := make([]openedEntry, len(es))
	for i, e := range es {
		out[i].Entry = e
	}
	if ns.key() == nil {
		return out, nil // stored as they are, and in git's order already
	}
	for i := range out {
		if name, err := ns.child(dir, out[i].Name); err != nil {
			out[i].err = err
		} else {
			out[i].Name = name
		}
	}
	slices.SortFunc(out, func(a, b openedEntry) int { return gitCompare(a.Entry, b.Entry) })
	v.seals.mu.Lock()
	if v.seals.opened == nil || len(v.seals.opened) >= maxOpenedFolders {
		v.seals.opened = map[openedKey][]openedEntry{}
	}
	v.seals.opened[k] = out
	v.seals.mu.Unlock()
	return out, nil
}

// gitCompare orders tree entries as git does: by name, a folder's name as if
// it ended in "/".
func gitCompare(a, b gitlog.Entry) int {
	an, bn := a.Name, b.Name
	n := min(len(an), len(bn))
	if c := strings.Compare(an[:n], bn[:n]); c != 0 {
		return c
	}
	end := func(e gitlog.Entry, name string) int {
		switch {
		case len(name) > n:
			return int(name[n])
		case e.IsDir():
			return '/'
		}
		return 0
	}
	return end(a, an) - end(b, bn)
}

func (v *Vault) sealKeyBlob(h, root gitlog.Hash) (*seal.Key, error) {
	if k, ok := v.seals.get(h); ok {
		return k, nil
	}
	ct, err := v.readCiphertext(keyPath, h)
	if err != nil {
		return nil, err
	}
	plain, err := v.keys.decryptAt(keyPath, ct, root)
	if err != nil {
		return nil, err
	}
	k, err := seal.ParseKey(plain)
	clear(plain)
	if err != nil {
		return nil, badEntry(keyPath, err.Error())
	}
	v.seals.put(h, k)
	return k, nil
}

// commitKey returns the key a commit of changes on top of parent seals its
// message with: the key its own tree will hold, so a key file the changes put
// (a new vault, a rotation) or link (a merge that takes the other side's key)
// counts. nil means the plain format.
func (v *Vault) commitKey(parent gitlog.Hash, changes []gitlog.Change) (*seal.Key, error) {
	for _, c := range changes {
		switch {
		case c.Path == keyPath && c.Op == gitlog.Put:
			return v.sealKeyBlob(gitlog.BlobHash(c.Data), gitlog.ZeroHash)
		case c.Path == keyPath && c.Op == gitlog.Link:
			return v.sealKeyBlob(c.Hash, gitlog.ZeroHash)
		}
	}
	if parent.IsZero() {
		return nil, nil
	}
	root, err := v.repo.RootTree(parent)
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	return v.sealKeyAt(root)
}

// reasonUnopened is what a read says of a stored name that does not open.
const reasonUnopened = "a name not sealed under this vault's key"

// reasonSealedSegment is the PathError reason for a path the sealed format
// cannot store: nothing can be at it, and nothing can be written there.
var reasonSealedSegment = fmt.Sprintf("segment over %d bytes, the longest a sealed vault stores", seal.MaxName)

// unsealable reports whether err refuses a path only because the sealed
// format cannot store it.
func unsealable(err error) bool {
	var pe *PathError
	return errors.As(err, &pe) && pe.Reason == reasonSealedSegment
}

// sealBlob returns the blob of a memory file in the sealed format: the sealed
// size header, then the age file of the padded plaintext.
func sealBlob(k *seal.Key, plain []byte, rs []ageRecipient) ([]byte, error) {
	ct, err := encrypt(seal.Pad(plain), fileRecipients(rs, k))
	if err != nil {
		return nil, err
	}
	blob, err := k.SealBlob(int64(len(plain)), ct)
	if err != nil {
		return nil, fmt.Errorf("vault: encrypt: %w", err)
	}
	return blob, nil
}

// unsealBlob splits a memory blob into its age file and whether it is sealed
// (a size header in front, padding inside). The header needs no key to skip,
// so any holder of an identity (textconv in a plain clone) reads the content.
func unsealBlob(blob []byte) (ageFile []byte, sealed bool) {
	if seal.HasSizeHeader(blob) {
		return blob[seal.SizeHeaderLen:], true
	}
	return blob, false
}

// sealedPlainSize returns the plaintext size sealed in the header of a memory
// blob whose first bytes are head, opened with k without an age unwrap. The
// error wraps ErrBadEntry when the blob has no header that opens.
func sealedPlainSize(k *seal.Key, p string, head []byte) (int64, error) {
	if !seal.HasSizeHeader(head) {
		return 0, badEntry(p, "no sealed size header")
	}
	n, err := k.OpenBlobSize(head)
	switch {
	case errors.Is(err, seal.ErrNoAgeHeader):
		return 0, badEntry(p, "a damaged age file (no complete header)")
	case err != nil:
		return 0, badEntry(p, "a size not sealed under this vault's key")
	}
	return n, nil
}

// sealedInit turns the first commit's changes into a sealed vault's: format 3,
// a new generation of the vault key encrypted to the recipients, and its
// keychain, empty. The key is cached under its blob's hash, so the first
// commit's message is sealed with it.
func (v *Vault) sealedInit(changes []gitlog.Change, recipients string) ([]gitlog.Change, error) {
	rs, err := v.keys.parseRecipients([]byte(recipients))
	if err != nil {
		return nil, err
	}
	k, err := newGeneration(rs)
	if err != nil {
		return nil, err
	}
	ct, err := v.keyFile(k, rs)
	if err != nil {
		return nil, err
	}
	chain, err := k.SealKeychain(seal.Keychain{})
	if err != nil {
		return nil, err
	}
	for i := range changes {
		if changes[i].Path == formatPath {
			changes[i].Data = []byte(generationsFormatVersion + "\n")
		}
	}
	return append(changes, gitlog.Change{Op: gitlog.Put, Path: keyPath, Data: ct},
		gitlog.Change{Op: gitlog.Put, Path: keychainPath, Data: chain}), nil
}

// sealedBlobSize is blobPlainSize for a blob of the sealed format: the size
// sealed in its header, read from the blob's first bytes.
func (v *Vault) sealedBlobSize(k *seal.Key, p string, h gitlog.Hash) (int64, error) {
	for _, want := range []int{sizePrefix, ageHeaderSlack + seal.SizeHeaderLen} {
		head, size, err := v.repo.BlobPrefix(h, want)
		if err != nil {
			return 0, v.blobError(p, err)
		}
		if limit := blobLimit(v.limits); size > limit {
			return 0, v.blobError(p, &gitlog.SizeError{Object: h, Size: size, Limit: limit})
		}
		n, err := sealedPlainSize(k, p, head)
		if err == nil || int64(len(head)) >= size || want != sizePrefix {
			return n, err
		}
	}
	panic("unreachable")
}

// readMemoryBlob reads the blob of memory file p, bounded by the vault's limit,
// and returns its age file and whether it is in the sealed format (its
// plaintext then padded). The error wraps ErrBadEntry when the rest is not an
// age file or the blob is too large.
func (v *Vault) readMemoryBlob(p string, h gitlog.Hash) ([]byte, bool, error) {
	blob, err := v.repo.ReadBlob(h)
	if err != nil {
		return nil, false, v.blobError(p, err)
	}
	ct, sealed := unsealBlob(blob)
	if reason := ageReason(ct, int64(len(ct))); reason != "" {
		return nil, false, badEntry(p, reason)
	}
	return ct, sealed, nil
}

// moveSealedDir stages the move of the directory oldPath (tree path from, tree
// h) to newPath in a sealed tree. Each sealed name is bound to the plaintext
// path of its folder, so nothing below the directory keeps its stored name:
// every file is linked at its name sealed under its new folder (the blobs
// stay; only trees are rewritten), and the old subtree is deleted.
func (tx *Tx) moveSealedDir(oldPath, newPath, from, to string, h gitlog.Hash) error {
	k := tx.names.key()
	oldClean, _ := CleanPath(oldPath)
	newClean, _ := CleanPath(newPath)
	files, err := tx.v.openedFilesUnder(tx.names, from, h) // each folder opened once, and cached
	if err != nil {
		return err
	}
	changes := make([]gitlog.Change, 0, len(files)+1)
	for _, f := range files {
		p := "/" + f.path
		sealed, err := k.SealPath(newClean, newClean+strings.TrimPrefix(p, oldClean))
		if err != nil {
			return &PathError{Path: newClean + strings.TrimPrefix(p, oldClean), Kind: PathInvalid, Reason: reasonSealedSegment}
		}
		changes = append(changes, gitlog.Change{Op: gitlog.Link, Path: to + "/" + sealed, Hash: f.hash})
	}
	// A directory with no file in it cannot be in a git tree; one with files
	// always has some.
	if err := tx.stage(oldPath, newPath, gitlog.Change{Op: gitlog.Delete, Path: from}); err != nil {
		return err
	}
	for _, c := range changes {
		if err := tx.stage(oldPath, newPath, c); err != nil {
			return err
		}
	}
	tx.folded += len(changes) // one move, as the plain format's one Move change
	return nil
}

// resealed returns the changes of a commit that re-encrypts files, a tree
// whose key is old at root, to rs and seals them under next: every size
// header sealed again (it is bound to the age header, which re-encryption
// changes) and, when next is another key than old (a rotation, or a vault of
// format 2 becoming format 3), every name sealed under next, the old tree of
// names deleted. The key file, encrypted to rs, is among them, and in format 3
// the keychain, which chains old and everything before it to next. done maps
// each file's old blob to its new age file (of the padded plaintext, as
// reencryption.one makes it, to rs and next's generation). next is cached
// under its blob's hash, so the commit's message is sealed with it.
func (v *Vault) resealed(ctx context.Context, old, next *seal.Key, root gitlog.Hash, files []fileRef, done map[gitlog.Hash][]byte, rs []ageRecipient) ([]gitlog.Change, error) {
	k := next
	rotate := !sameKey(old, k)
	kf, err := v.keyFile(k, rs)
	if err != nil {
		return nil, err
	}
	changes := make([]gitlog.Change, 0, len(files)+4)
	if rotate && len(files) > 0 { // else there is no memories/ in the tree
		changes = append(changes, gitlog.Change{Op: gitlog.Delete, Path: memDir})
	}
	from, to := codecOf(old, nil), codecOf(k, nil)
	for _, f := range files {
		p, err := from.memPath(f.path)
		if err != nil {
			return nil, err
		}
		size, err := v.sealedBlobSize(old, p, f.hash)
		if err != nil {
			return nil, err
		}
		blob, err := k.SealBlob(size, done[f.hash])
		if err != nil {
			return nil, fmt.Errorf("vault: encrypt: %w", err)
		}
		tp, err := to.treePath(p)
		if err != nil {
			return nil, err
		}
		changes = append(changes, gitlog.Change{Op: gitlog.Put, Path: tp, Data: blob})
	}
	changes = append(changes, gitlog.Change{Op: gitlog.Put, Path: keyPath, Data: kf})
	if !k.Generation() {
		return changes, nil
	}
	chain, err := v.chainAfter(ctx, root, old, k)
	if err != nil {
		return nil, err
	}
	changes = append(changes, gitlog.Change{Op: gitlog.Put, Path: keychainPath, Data: chain})
	if !old.Generation() {
		changes = append(changes, gitlog.Change{Op: gitlog.Put, Path: formatPath, Data: []byte(generationsFormatVersion + "\n")})
	}
	return changes, nil
}

// sealInfo seals the message and author of a commit of changes on top of
// parent, as writeCommitAt does, when the commit's tree is sealed (see
// commitKey); a commit of the plain format is left as it is.
func (v *Vault) sealInfo(parent gitlog.Hash, changes []gitlog.Change, info *gitlog.CommitInfo) error {
	k, err := v.commitKey(parent, changes)
	if err != nil {
		return err
	}
	return v.codec(k).sealMessage(info)
}

// openedMessage returns commit c's message as memvault wrote it: opened with
// the key of c's tree in the sealed format, and "" for one that does not open
// there (see record: such a message is not believed).
func (v *Vault) openedMessage(c *gitlog.Commit) (string, error) {
	if !seal.IsSealed(c.Message) && !v.seals.seen() {
		return c.Message, nil
	}
	k, err := v.sealKeyAt(c.TreeHash)
	if err != nil {
		return c.Message, err
	}
	return v.codec(k).message(c), nil
}

// openMessage opens the sealed message of commit c under k, the key of c's
// tree, once per commit: a message opened before comes from the cache. The
// error wraps seal.ErrBadMessage.
func (v *Vault) openMessage(k *seal.Key, c *gitlog.Commit) (seal.Message, error) {
	return openMessageIn(&v.seals, k, c)
}

// openMessageIn is openMessage with cache as the cache (nil: none).
func openMessageIn(cache *sealKeys, k *seal.Key, c *gitlog.Commit) (seal.Message, error) {
	if c.Hash.IsZero() || cache == nil { // not read from the repository: nothing to cache it by
		return k.OpenMessage(c.Message)
	}
	cache.mu.Lock()
	m, ok := cache.msgs[c.Hash]
	cache.mu.Unlock()
	if ok {
		return m, nil
	}
	m, err := k.OpenMessage(c.Message)
	if err != nil {
		return m, err
	}
	cache.mu.Lock()
	if cache.msgs == nil || len(cache.msgs) >= maxOpenedMsgs {
		cache.msgs = map[gitlog.Hash]seal.Message{}
	}
	cache.msgs[c.Hash] = m
	cache.mu.Unlock()
	return m, nil
}

// keyFile returns the key file of vault key k, encrypted to rs, and caches k
// under its blob's hash: a commit that puts it seals its message with k
// before the blob is in the repository (see commitKey).
func (v *Vault) keyFile(k *seal.Key, rs []ageRecipient) ([]byte, error) {
	kf, err := encrypt(k.Marshal(), rs)
	if err != nil {
		return nil, err
	}
	v.seals.put(gitlog.BlobHash(kf), k)
	return kf, nil
}

// touchesKey reports whether any of changes may change what is at
// .memvault/key: one at that path, at a folder above it, or moving one there.
func touchesKey(changes []gitlog.Change) bool {
	on := func(p string) bool {
		return p == "" || p == keyPath || strings.HasPrefix(keyPath, p+"/")
	}
	for _, c := range changes {
		if on(c.Path) || c.Op == gitlog.Move && on(c.NewPath) {
			return true
		}
	}
	return false
}

// inheritSealKey records k (nil: the plain format) as the key of the tree of
// commit h, just written with changes on top of a tree whose key was k, when
// the changes leave .memvault/key alone. The next snapshot and the next
// commit then find the key without looking up the key file in the new tree:
// a plain vault pays nothing per write for the sealed format.
func (v *Vault) inheritSealKey(h gitlog.Hash, k *seal.Key, changes []gitlog.Change) {
	if touchesKey(changes) {
		return
	}
	root, err := v.repo.RootTree(h)
	if err != nil {
		return
	}
	v.seals.mu.Lock()
	if v.seals.byRoot == nil || len(v.seals.byRoot) >= maxRootKeys {
		v.seals.byRoot = map[gitlog.Hash]*seal.Key{}
	}
	v.seals.byRoot[root] = k
	v.seals.mu.Unlock()
}

// namesOfRoot returns how memory paths are stored in the tree root (zero: no
// tree yet, which holds nothing in either format).
func (v *Vault) namesOfRoot(root gitlog.Hash) (codec, error) {
	if root.IsZero() {
		return plainCodec{}, nil
	}
	k, err := v.sealKeyAt(root)
	return v.codec(k), err
}

// sameKey reports whether two trees whose keys are a and b (nil: the plain
// format) store every memory path under the same name.
func sameKey(a, b *seal.Key) bool {
	return a == b || a != nil && b != nil && a.Equal(b)
}

// diffOpened is DiffTrees of the root trees a and b at or under the memory
// path p ("" for all of /memories), with each change's Path the plaintext
// tree path ("memories/notes/a.md") in either format, in the order DiffTrees
// gives a plain tree's changes (byte order of path). Where both trees store
// names the same way (the same key, or both plain) only the subtrees that
// differ are read; across formats or keys every file of both trees is paired
// by its plaintext path. The error is a *PathError for an invalid p, and
// wraps ErrBadEntry for a stored name that does not open.
func (v *Vault) diffOpened(a, b gitlog.Hash, p string) ([]gitlog.TreeChange, error) {
	na, err := v.namesOfRoot(a)
	if err != nil {
		return nil, err
	}
	nb, err := v.namesOfRoot(b)
	if err != nil {
		return nil, err
	}
	if p != "" {
		if p, err = CleanPath(p); err != nil {
			return nil, err
		}
	}
	if sameKey(na.key(), nb.key()) || a.IsZero() || b.IsZero() {
		ns := nb
		if b.IsZero() {
			ns = na
		}
		tp := memDir
		if p != "" {
			if tp, err = ns.treePath(p); unsealable(err) {
				return nil, nil // neither tree can hold it
			} else if err != nil {
				return nil, err
			}
		}
		tcs, err := v.repo.DiffTrees(a, b, tp)
		if err != nil {
			return nil, err
		}
		for i := range tcs {
			if tcs[i].Path, err = ns.plainTreePath(tcs[i].Path); err != nil {
				return nil, err
			}
		}
		sort.SliceStable(tcs, func(i, j int) bool { return tcs[i].Path < tcs[j].Path })
		return tcs, nil
	}
	cp := Root
	if p != "" {
		cp = p
	}
	fa, err := v.openedFilesAt(a, na, cp)
	if err != nil {
		return nil, err
	}
	fb, err := v.openedFilesAt(b, nb, cp)
	if err != nil {
		return nil, err
	}
	var tcs []gitlog.TreeChange
	for mp, h := range fa {
		if fb[mp] != h {
			tcs = append(tcs, gitlog.TreeChange{Path: mp[1:], From: h, To: fb[mp]})
		}
	}
	for mp, h := range fb {
		if _, ok := fa[mp]; !ok {
			tcs = append(tcs, gitlog.TreeChange{Path: mp[1:], To: h})
		}
	}
	sort.Slice(tcs, func(i, j int) bool { return tcs[i].Path < tcs[j].Path })
	return tcs, nil
}

// openedFilesAt returns the files at or below the memory path cp in the root
// tree root, whose names are ns, by their memory paths: cp itself when it is
// a file, nothing when nothing is there or ns cannot store cp. The error
// wraps ErrBadEntry for a name that does not open.
func (v *Vault) openedFilesAt(root gitlog.Hash, ns codec, cp string) (map[string]gitlog.Hash, error) {
	tp, err := ns.treePath(cp)
	if unsealable(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	e, err := v.repo.Lookup(root, tp)
	switch {
	case errors.Is(err, gitlog.ErrNotFound) || errors.Is(err, gitlog.ErrNotDir):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("vault: %s: %w", cp, err)
	case !e.IsDir():
		return map[string]gitlog.Hash{cp: e.Hash}, nil
	}
	refs, err := v.openedFilesUnder(ns, tp, e.Hash)
	if err != nil {
		return nil, err
	}
	out := make(map[string]gitlog.Hash, len(refs))
	for _, r := range refs {
		out[memPath(r.path)] = r.hash
	}
	return out, nil
}

// openedFilesUnder is filesUnder for a tree whose names are ns: each file's
// path is its plaintext tree path ("memories/notes/a.md"), each stored name
// opened once (see openName), in byte order of path. dir is the memory path
// of the folder at tree path tp, whose tree is h. The error wraps ErrBadEntry
// for a name that does not open.
func (v *Vault) openedFilesUnder(ns codec, tp string, h gitlog.Hash) ([]fileRef, error) {
	dir, err := ns.memPath(tp)
	if err != nil {
		return nil, err
	}
	return v.walkFiles(ns, dir, h, false, stopAtBadEntry)
}

// pathInParent maps the tree path tp, stored under the key of commit c's
// tree (k, nil for the plain format), to where the same memory path is stored
// in the tree of c's first parent: the same unless c changed the key (a
// rotation, or the conversion of a plain vault), when it is opened under k
// and sealed again under the parent's key. A path that does not map stays as
// it is: the walk then finds nothing there.
func (v *Vault) pathInParent(c *gitlog.Commit, k *seal.Key, tp string) string {
	// A plain tree's parent is plain: a vault is converted from the plain
	// format to the sealed one, never back, so a plain history pays nothing.
	if k == nil || len(c.ParentHashes) == 0 {
		return tp
	}
	// The parent's key is the same unless c changed the key file; the
	// history index tells that without reading the parent.
	if changed, err := v.repo.Changed(c.Hash, keyPath); err == nil && !changed {
		return tp
	}
	root, err := v.repo.RootTree(c.ParentHashes[0])
	if err != nil {
		return tp
	}
	pk, err := v.sealKeyAt(root)
	if err != nil || sameKey(k, pk) {
		return tp
	}
	mp, err := v.codec(k).memPath(tp)
	if err != nil {
		return tp
	}
	if q, err := v.codec(pk).treePath(mp); err == nil {
		return q
	}
	return tp
}

// currentKey returns the key of the tree at main (nil: the plain format, or
// no commit yet).
func (v *Vault) currentKey() (*seal.Key, error) {
	head, err := v.repo.Head()
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	ns, err := v.namesAt(head)
	return ns.key(), err
}

// tagsDir is what a sealed checkpoint's name is sealed under, as a memory
// file's name is sealed under its folder: no memory folder has this path.
const tagsDir = "refs/tags"

// sealedTagName returns the tag name a sealed vault stores checkpoint name
// under: each part of it between slashes sealed under k.
func sealedTagName(k *seal.Key, name string) (string, error) {
	return k.SealPath(tagsDir, tagsDir+"/"+name)
}

// openCheckpoint opens the name and message of a sealed vault's checkpoint
// c, whose tag points at commit target, under k (the current key) or else
// the key of target's tree. What opens under neither stays as stored.
func (v *Vault) openCheckpoint(c *Checkpoint, k *seal.Key, target gitlog.Hash) bool {
	keys := []*seal.Key{k}
	if ns, err := v.namesAt(target); err == nil && ns.key() != nil && !sameKey(ns.key(), k) {
		keys = append(keys, ns.key())
	}
	for _, k := range append(keys, v.seals.all()...) {
		p, err := k.OpenPath(tagsDir, c.Name)
		if err != nil {
			continue
		}
		c.Name = strings.TrimPrefix(p, tagsDir+"/")
		if raw := c.Message + "\n"; seal.IsSealed(raw) {
			c.Message = sealedUnopened
			if m, err := k.OpenMessage(raw); err == nil {
				c.Message = strings.TrimRight(m.Text, "\n")
			}
		}
		return true
	}
	return false
}

// readHistoryKeys reads, once a process, the key of each tree in the
// history where the vault's key file changed, so that openCheckpoint can try
// every key this identity opens: a checkpoint's name is sealed under the key
// current when it was made, which after two rotations may be neither the
// current key nor its commit's. The history index finds those trees without
// reading every commit; a key this identity cannot open is passed over.
func (v *Vault) readHistoryKeys(ctx context.Context) {
	v.seals.mu.Lock()
	done := v.seals.historyRead
	v.seals.historyRead = true
	v.seals.mu.Unlock()
	if done {
		return
	}
	head, err := v.repo.Head()
	if err != nil || head.IsZero() {
		return
	}
	v.repo.Walk(ctx, head, gitlog.WalkOptions{Path: keyPath}, func(c *gitlog.Commit, p string) (string, error) {
		v.sealKeyAt(c.TreeHash)
		return p, nil
	})
}

// stagedPlainSize is the plaintext size of blob, a memory file's blob staged
// on top of the tree root: read from its age header in the plain format, from
// its sealed size header (under root's key) in the sealed one.
func (v *Vault) stagedPlainSize(root gitlog.Hash, p string, blob []byte) (int64, error) {
	if !seal.HasSizeHeader(blob) {
		return plainSizeOf(blob, int64(len(blob)))
	}
	k, err := v.sealKeyAt(root)
	if err != nil {
		return 0, err
	}
	if k == nil {
		return 0, badEntry(p, "a sealed blob in a tree of the plain format")
	}
	return sealedPlainSize(k, p, blob)
}

// sealedProblems checks the sealed format in every commit of the history from
// head, one sentence per problem: each tree's key file opens; each commit's
// message is sealed in a sealed tree (and only there) and opens under its
// tree's key; each memory file new in a commit against its first parent (every
// file, where the commit changed the key) has a name that opens under the
// tree's key (admission's check of the history reports those that do not), and
// a size header that matches the length of the padded frame its age file
// holds. No blob is decrypted, and each is read no further than its headers. The error is ctx's, or an I/O error.
func (v *Vault) sealedProblems(ctx context.Context, head gitlog.Hash) ([]string, error) {
	var out []string
	seen := map[gitlog.Hash]string{} // the reason found for each blob read
	if head.IsZero() {
		return nil, nil
	}
	err := eachCommit(ctx, v.repo, head, func(c *gitlog.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		say := func(format string, args ...any) {
			out = append(out, fmt.Sprintf("commit %s: ", c.Hash)+fmt.Sprintf(format, args...))
		}
		k, err := v.sealKeyAt(c.TreeHash)
		if err != nil {
			say("%s does not open: %v", keyPath, err)
			return nil
		}
		switch {
		case k == nil && seal.IsSealed(c.Message):
			say("a sealed message in a tree of the plain format")
		case k != nil && !seal.IsSealed(c.Message):
			say("a message in the clear in a sealed tree")
		case k != nil:
			if _, err := k.OpenMessage(c.Message); err != nil {
				say("a message that does not open under its tree's key")
			}
		}
		if k == nil {
			return nil
		}
		var parent gitlog.Hash
		var pk *seal.Key
		if len(c.ParentHashes) > 0 {
			if parent, err = v.repo.RootTree(c.ParentHashes[0]); err != nil {
				return err
			}
			pk, _ = v.sealKeyAt(parent)
		}
		var files []fileRef
		if sameKey(k, pk) {
			tcs, err := v.repo.DiffTrees(parent, c.TreeHash, memDir)
			if err != nil {
				return err
			}
			for _, tc := range tcs {
				if !tc.To.IsZero() {
					files = append(files, fileRef{path: tc.Path, hash: tc.To})
				}
			}
		} else if files, err = v.memoryFiles(c.TreeHash); err != nil {
			return err
		}
		ns := v.codec(k)
		for _, f := range files {
			p, err := ns.memPath(f.path)
			if err != nil {
				continue // admission's check of the history names it
			}
			reason, ok := seen[f.hash]
			if !ok {
				reason = v.sealedBlobReason(k, p, f.hash)
				seen[f.hash] = reason
			}
			if reason != "" {
				say("%s: %s", p, reason)
			}
		}
		return nil
	})
	return out, err
}

// sealedBlobReason says what is wrong with the blob h of memory file p in a
// tree sealed under k, or "": its size header must open under k, and the size
// it seals must be what the padded frame in its age file was made of.
func (v *Vault) sealedBlobReason(k *seal.Key, p string, h gitlog.Hash) string {
	var reason string
	for _, want := range []int{sizePrefix + seal.SizeHeaderLen, ageHeaderSlack + seal.SizeHeaderLen} {
		head, size, err := v.repo.BlobPrefix(h, want)
		if err != nil {
			return err.Error()
		}
		if size > blobLimit(v.limits) {
			return "" // admission's check of the history names it
		}
		if reason = sealedFrameReason(k, p, head, size); reason == "" || int64(len(head)) >= size {
			return reason
		}
	}
	return reason
}

// sealedFrameReason is sealedBlobReason for a blob of size bytes that
// starts with head.
func sealedFrameReason(k *seal.Key, p string, head []byte, size int64) string {
	n, err := sealedPlainSize(k, p, head)
	if err != nil {
		return "" // a size header that does not open: admission's check of the history names it
	}
	frame, err := plainSizeOf(head[seal.SizeHeaderLen:], size-int64(seal.SizeHeaderLen))
	if err != nil {
		return "a damaged age file (" + err.Error() + ")"
	}
	if frame != seal.PaddedLen(n) {
		return fmt.Sprintf("a size header of %d bytes over a padded frame of %d bytes (%d expected)", n, frame, seal.PaddedLen(n))
	}
	return ""
}
