package vault

import (
	"fmt"
	"strings"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// A codec is how one tree stores memory: memory paths as tree paths and back,
// a memory file's bytes as a blob, the size of a file without decrypting it,
// a commit's message and author, the longest name the tree takes, and the
// format the tree says it is in. Each tree has one, chosen from the tree
// itself when it is first read (Snapshot, namesAt, namesOfRoot), and a commit
// is written and read with its tree's: plainCodec for the plain format,
// sealedCodec under the tree's vault key for the sealed one. The rest of the
// store asks its codec and not which format it holds; what manages keys
// (rotation, keychains, a merge across keys) asks for the key itself.
type codec interface {
	// treePath maps memory path p to its place in the tree
	// ("/memories/notes/a.md" -> "memories/notes/a.md", or memories/ and
	// sealed components). The error is a *PathError for an invalid path,
	// including a component too long to seal.
	treePath(p string) (string, error)
	// memPath maps a tree path under memories/ back to its memory path. The
	// error wraps ErrBadEntry when a stored component does not open; it
	// quotes the part of the path that opened, never the sealed rest.
	memPath(tp string) (string, error)
	// child opens the stored name of an entry of the memory folder dir.
	child(dir, stored string) (string, error)
	// plainTreePath maps tree path tp to the one it has in the plain format
	// ("memories/notes/a.md"). The error wraps ErrBadEntry when a stored
	// component does not open.
	plainTreePath(tp string) (string, error)
	// blob is the blob a memory file of plaintext plain is stored as,
	// encrypted to rs.
	blob(plain []byte, rs []ageRecipient) ([]byte, error)
	// plainSize is the plaintext size of memory file p, blob h, read from the
	// blob's first bytes, never decrypting.
	plainSize(v *Vault, p string, h gitlog.Hash) (int64, error)
	// maxName is the longest file or folder name, in bytes, the tree stores.
	maxName() int
	// sealMessage turns info's message and author into what a commit whose
	// tree has this codec records.
	sealMessage(info *gitlog.CommitInfo) error
	// message is commit c's message as memvault wrote it, c's tree having
	// this codec: "" for a sealed one that does not open (see record: such a
	// message is not believed).
	message(c *gitlog.Commit) string
	// format is the version .memvault/format says for a tree of this codec.
	format() string
	// foldersBindNames reports whether a stored name is bound to the path of
	// its folder, so that a folder moves as its files, each stored anew.
	foldersBindNames() bool
	// key is the tree's vault key: nil for the plain format.
	key() *seal.Key
}

// codecOf returns the codec of a tree whose vault key is k (nil: the plain
// format); cache is where sealed paths are remembered (nil: nowhere).
func codecOf(k *seal.Key, cache *sealKeys) codec {
	if k == nil {
		return plainCodec{}
	}
	return sealedCodec{k: k, cache: cache}
}

// codec returns the codec of a tree whose vault key is k, remembering sealed
// paths in v's cache.
func (v *Vault) codec(k *seal.Key) codec { return codecOf(k, &v.seals) }

// plainCodec stores memory as it is named, each file an age file.
type plainCodec struct{}

func (plainCodec) treePath(p string) (string, error)                    { return treePath(p) }
func (plainCodec) memPath(tp string) (string, error)                    { return memPath(tp), nil }
func (plainCodec) child(_, stored string) (string, error)               { return stored, nil }
func (plainCodec) plainTreePath(tp string) (string, error)              { return tp, nil }
func (plainCodec) maxName() int                                         { return maxSegmentLen }
func (plainCodec) format() string                                       { return formatVersion }
func (plainCodec) foldersBindNames() bool                               { return false }
func (plainCodec) key() *seal.Key                                       { return nil }
func (plainCodec) blob(plain []byte, rs []ageRecipient) ([]byte, error) { return encrypt(plain, rs) }

func (plainCodec) sealMessage(*gitlog.CommitInfo) error { return nil }
func (plainCodec) message(c *gitlog.Commit) string      { return c.Message }

func (plainCodec) plainSize(v *Vault, p string, h gitlog.Hash) (int64, error) {
	return v.blobPlainSize(p, h)
}

// sealedCodec stores memory under a vault key: each name sealed under the
// path of its folder, each file a sealed size header before the age file of
// its padded plaintext (see sealed.go and vault/seal).
type sealedCodec struct {
	k     *seal.Key
	cache *sealKeys // where sealed paths are remembered; nil: nowhere
}

func (n sealedCodec) key() *seal.Key       { return n.k }
func (sealedCodec) maxName() int           { return seal.MaxName }
func (sealedCodec) foldersBindNames() bool { return true }

func (n sealedCodec) format() string {
	if n.k.Generation() {
		return generationsFormatVersion
	}
	return sealedFormatVersion
}

func (n sealedCodec) blob(plain []byte, rs []ageRecipient) ([]byte, error) {
	return sealBlob(n.k, plain, rs)
}

func (n sealedCodec) sealMessage(info *gitlog.CommitInfo) error {
	msg, err := n.k.SealMessage(seal.Message{Text: info.Message, AuthorName: info.Author.Name, AuthorEmail: info.Author.Email})
	if err != nil {
		return fmt.Errorf("vault: commit: %w", err)
	}
	info.Message = msg
	info.Author.Name, info.Author.Email = seal.Author, seal.AuthorEmail
	return nil
}

func (n sealedCodec) message(c *gitlog.Commit) string {
	m, err := openMessageIn(n.cache, n.k, c)
	if err != nil {
		return ""
	}
	return m.Text
}

func (n sealedCodec) plainSize(v *Vault, p string, h gitlog.Hash) (int64, error) {
	return v.sealedBlobSize(n.k, p, h)
}

func (n sealedCodec) treePath(p string) (string, error) {
	cp, err := CleanPath(p)
	if err != nil {
		return "", err
	}
	if n.cache != nil {
		n.cache.mu.Lock()
		s, ok := n.cache.paths[pathKey{n.k, cp}]
		n.cache.mu.Unlock()
		if ok {
			return memDir + "/" + s, nil
		}
	}
	s, err := n.k.SealPath(Root, cp)
	if err != nil {
		return "", &PathError{Path: p, Kind: PathInvalid, Reason: reasonSealedSegment}
	}
	if n.cache != nil && s != "" {
		n.cache.mu.Lock()
		if n.cache.paths == nil || len(n.cache.paths) >= maxSealedPaths {
			n.cache.paths = map[pathKey]string{}
		}
		n.cache.paths[pathKey{n.k, cp}] = s
		n.cache.mu.Unlock()
	}
	if s == "" {
		return memDir, nil
	}
	return memDir + "/" + s, nil
}

func (n sealedCodec) memPath(tp string) (string, error) {
	rest, ok := strings.CutPrefix(tp, memDir)
	if !ok || rest != "" && rest[0] != '/' {
		return "", badEntry(Root, "a path outside memories/")
	}
	if rest == "" {
		return Root, nil
	}
	p, err := n.k.OpenPath(Root, rest[1:])
	if err != nil {
		return "", badEntry(Root, reasonUnopened)
	}
	return p, nil
}

func (n sealedCodec) child(dir, stored string) (string, error) {
	name, err := n.k.OpenName(dir, stored)
	if err != nil {
		return "", badEntry(dir+"/?", reasonUnopened)
	}
	return name, nil
}

func (n sealedCodec) plainTreePath(tp string) (string, error) {
	p, err := n.memPath(tp)
	if err != nil {
		return "", err
	}
	return p[1:], nil
}
