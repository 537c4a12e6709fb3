package vault

import (
	"bytes"
	"errors"
	"fmt"

	"filippo.io/age"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// Reads never trust the tree. Sync and clone admit only what memvault wrote
// (admit.go), but a vault may have been changed by hand with git, or filled
// before that check existed: a read meets each entry as it is. One bad entry
// fails alone, with its own reason, never a whole listing; a listing reads a
// blob's size from its header and at most its age header, never the whole
// blob; and no read inflates a blob beyond the vault's limit (gitlog.Repo.SetBlobLimit).

// EntryError is one bad entry: as an error (a *EntryError), it wraps
// ErrBadEntry; as a value, it is how Status and GrepResult list the entries
// they went on past, so what a read fails with and what a listing names are
// the same record.
type EntryError struct {
	// Path is the memory path; for a name that is no memory path, or does not
	// open in a sealed vault, the name as stored. In the lists of Status and
	// GrepResult it is never escaped: the printer escapes it once. In an
	// error, whose text is printed as it is, a name that is no memory path is
	// quoted (in Go syntax).
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func (e *EntryError) Error() string { return "vault: " + e.Path + ": " + e.Reason }

// Unwrap returns ErrBadEntry.
func (e *EntryError) Unwrap() error { return ErrBadEntry }

func badEntry(p, reason string) error { return &EntryError{Path: p, Reason: reason} }

// reasonNotAge is what a read says of a memory blob without age's header.
const reasonNotAge = "not an age file (stored in the clear, or not written by memvault)"

// blobLimit is the largest blob a vault with limits l reads: the ciphertext of
// its largest file, and never less than the files beside the memories need,
// as the sealed format stores it (a size header, and the plaintext padded to
// its bucket: 512 KiB more at 16 MiB), the larger of the two formats; a vault
// holds both after a conversion.
func blobLimit(l Limits) int64 {
	return int64(seal.SizeHeaderLen) + maxCiphertext(seal.PaddedLen(max(l.MaxFileSize, maxMetaFile)))
}

// entryReason says why e, a child of the memory directory dir ("/memories/…"),
// is not something memvault reads, from its name and mode alone; "" when it
// may be.
func entryReason(dir string, e gitlog.Entry) string {
	if r := badGitName(e.Name); r != "" {
		return r
	}
	if _, err := CleanPath(dir + "/" + e.Name); err != nil {
		var pe *PathError
		if errors.As(err, &pe) {
			return pe.Reason
		}
		return "not a memory path"
	}
	switch e.Mode {
	case modeDir, modeRegular:
		return ""
	case modeSymlink:
		return "a symbolic link"
	case modeSubmodule:
		return "a submodule (gitlink)"
	case modeExecutable:
		return "an executable file"
	}
	return fmt.Sprintf("unknown mode %o", uint32(e.Mode))
}

// entryPath names child name of dir in an error: escaped when it is no memory
// path, since it came from the tree as it is.
func entryPath(dir, name string) string {
	if _, err := CleanPath(dir + "/" + name); err != nil {
		return fmt.Sprintf("%s/%q", dir, name)
	}
	return dir + "/" + name
}

// blobError turns the error of reading memory file p's blob into a bad entry
// when the blob is at fault.
func (v *Vault) blobError(p string, err error) error {
	var se *gitlog.SizeError
	switch {
	case errors.As(err, &se):
		return badEntry(p, fmt.Sprintf("%d bytes, larger than the vault's limit (maxFileSize %d)", se.Size, v.limits.MaxFileSize))
	case errors.Is(err, gitlog.ErrWrongType):
		return badEntry(p, "its tree entry names an object of another type")
	}
	return fmt.Errorf("vault: read %s: %w", p, err)
}

// readCiphertext reads the age file of memory file p, bounded by the vault's
// limit. The error wraps ErrBadEntry when the blob is not an age file or is too
// large.
func (v *Vault) readCiphertext(p string, h gitlog.Hash) ([]byte, error) {
	ct, err := v.repo.ReadBlob(h)
	if err != nil {
		return nil, v.blobError(p, err)
	}
	if reason := ageReason(ct, int64(len(ct))); reason != "" {
		return nil, badEntry(p, reason)
	}
	return ct, nil
}

// ageReason says why the blob of size bytes that starts with head is not an
// age file, or "": its header must start with age's magic and parse as age
// parses one (stanzas, then the MAC line), and a payload must follow. A blob
// that fails is not the identity's fault: no key opens it.
func ageReason(head []byte, size int64) string {
	if !bytes.HasPrefix(head, []byte(ageMagic)) {
		return reasonNotAge
	}
	if _, err := plainSizeOf(head, size); err != nil {
		return "a damaged age file (" + err.Error() + ")"
	}
	return ""
}

// sizePrefix is how much of a blob a listing reads first for its age header;
// a header that does not fit is read again up to ageHeaderSlack.
const sizePrefix = 4 << 10

// blobPlainSize returns the plaintext length of memory file p's age file from
// its size (read from the object header) and its age header, never reading
// the rest. The error wraps ErrBadEntry when the blob is at fault.
func (v *Vault) blobPlainSize(p string, h gitlog.Hash) (int64, error) {
	for _, want := range []int{sizePrefix, ageHeaderSlack} {
		head, size, err := v.repo.BlobPrefix(h, want)
		if err != nil {
			return 0, v.blobError(p, err)
		}
		if limit := blobLimit(v.limits); size > limit {
			return 0, v.blobError(p, &gitlog.SizeError{Object: h, Size: size, Limit: limit})
		}
		if !bytes.HasPrefix(head, []byte(ageMagic)) {
			return 0, badEntry(p, reasonNotAge)
		}
		n, err := plainSizeOf(head, size)
		if err == nil {
			return n, nil
		}
		if int64(len(head)) >= size || want == ageHeaderSlack {
			return 0, badEntry(p, "a damaged age file ("+err.Error()+")")
		}
	}
	panic("unreachable")
}

// plainSizeOf returns the plaintext length of an age file of size bytes from
// its first bytes, which must hold its whole header: the payload is a 16-byte
// nonce, then chunks of up to 64 KiB of plaintext, each followed by a 16-byte
// tag; an empty file is one empty chunk.
func plainSizeOf(head []byte, size int64) (int64, error) {
	hdr, err := age.ExtractHeader(bytes.NewReader(head))
	if err != nil {
		return 0, errors.New("no complete header")
	}
	const chunk, tag, nonce = 64 << 10, 16, 16
	payload := size - int64(len(hdr)) - nonce
	if payload < tag {
		return 0, errors.New("truncated")
	}
	chunks := (payload + chunk + tag - 1) / (chunk + tag)
	return payload - chunks*tag, nil
}
