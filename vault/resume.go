package vault

// A re-encryption is one commit, so an interruption before that commit would
// lose all the work. To make a re-run cheap, every new ciphertext is appended
// to memvault/reencrypt in the repository's local state as soon as it is made,
// keyed by the blob it replaces, under a header naming the recipient set it is
// encrypted to. A re-run for the same set takes those ciphertexts and
// re-encrypts only the files left; any other run starts the file over. The
// file holds ciphertext only, never plaintext, and is deleted after the commit.
//
// Reading the age header of each blob cannot replace this: X25519 and hybrid
// stanzas are anonymous by design, so a header tells how many keys of a type a
// file is encrypted to, not which ones.
//
// The file is one of gitlog's record files (version 2): each record is the
// fingerprint of the recipient set (32 bytes), the old blob hash (20 bytes)
// and the new ciphertext; records of another set are dropped when a run
// starts. There is no fsync: a record a crash tore is stepped over. Version 1
// (a header line naming the set, then the old hash, the length, the
// ciphertext and a CRC-32C each) is still read, and written again in version
// 2. A lock file beside it (reencrypt.lock) keeps two runs from working at
// once.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/gitlog"
)

var progressRecords = gitlog.RecordFile{Name: "reencrypt", Kind: "reencrypt", Version: 2, Tag: "MVRE"}

// progressV1 starts a progress file of version 1: its format, then the
// recipient set.
const progressV1 = "memvault reencrypt v1 "

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// progressFile is the progress of one run. A nil *progressFile keeps
// nothing: every method is then a no-op.
type progressFile struct {
	repo   *gitlog.Repo
	target [32]byte
	unlock func()
	broken bool // a write failed: record no more
}

// openProgress opens the progress file of a re-encryption to the recipient set
// target and returns the ciphertexts an earlier run to the same set left.
// Records of another set are dropped. The error wraps ErrBusy while another
// run holds the lock, and ErrNewerFormat for a file of a newer memvault, which
// is left as it is; a damaged record only ends what is taken from a file of
// version 1.
func openProgress(repo *gitlog.Repo, target [32]byte) (*progressFile, map[gitlog.Hash][]byte, error) {
	unlock, ok, err := repo.TryLock(progressRecords.Name + ".lock")
	if err != nil {
		return nil, nil, fmt.Errorf("vault: %w", err)
	}
	if !ok {
		return nil, nil, fmt.Errorf("vault: another re-encryption of this vault is running (%s is locked): %w", progressRecords.Name+".lock", ErrBusy)
	}
	done, err := readProgress(repo, target)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return &progressFile{repo: repo, target: target, unlock: unlock}, done, nil
}

// readProgress takes the records of target from the progress file, writing
// the file again when it holds anything else (a version 1 file, records of
// another set).
func readProgress(repo *gitlog.Repo, target [32]byte) (map[gitlog.Hash][]byte, error) {
	done := map[gitlog.Hash][]byte{}
	data, err := os.ReadFile(filepath.Join(repo.StateDir(), progressRecords.Name))
	if errors.Is(err, os.ErrNotExist) {
		return done, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vault: read progress: %w", err)
	}
	rewrite := false
	if bytes.HasPrefix(data, []byte(progressV1)) {
		readProgressV1(data, target, done)
		rewrite = true
	} else {
		recs, err := repo.ReadRecords(progressRecords)
		if err != nil {
			return nil, fmt.Errorf("vault: %w", err)
		}
		for _, rec := range recs {
			if len(rec) < 52 || !bytes.Equal(rec[:32], target[:]) {
				rewrite = true
				continue
			}
			done[gitlog.Hash(rec[32:52])] = rec[52:]
		}
	}
	if rewrite {
		recs := make([][]byte, 0, len(done))
		for h, ct := range done {
			recs = append(recs, progressRecord(target, h, ct))
		}
		if err := repo.ReplaceRecords(progressRecords, recs); err != nil {
			return nil, fmt.Errorf("vault: %w", err)
		}
	}
	return done, nil
}

func progressRecord(target [32]byte, old gitlog.Hash, ct []byte) []byte {
	rec := make([]byte, 0, 52+len(ct))
	rec = append(rec, target[:]...)
	rec = append(rec, old[:]...)
	return append(rec, ct...)
}

// readProgressV1 adds to done the records of a file of version 1 made for
// target: each an old blob hash (20 bytes), a length (4 bytes, big-endian),
// the ciphertext and a CRC-32C of all that; the first that does not check
// ends them.
func readProgressV1(data []byte, target [32]byte, done map[gitlog.Hash][]byte) {
	header := []byte(progressV1 + hex.EncodeToString(target[:]) + "\n")
	if !bytes.HasPrefix(data, header) {
		return
	}
	for rest := data[len(header):]; len(rest) >= 28; {
		n := int(binary.BigEndian.Uint32(rest[20:24]))
		if n > len(rest)-28 {
			return
		}
		body := rest[:24+n]
		if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(rest[24+n:]) {
			return
		}
		done[gitlog.Hash(body[:20])] = bytes.Clone(body[24:])
		rest = rest[28+n:]
	}
}

// add appends one ciphertext. A write error only means a re-run would redo
// more work, so it stops the recording and is otherwise ignored.
func (p *progressFile) add(old gitlog.Hash, ct []byte) {
	if p == nil || p.broken {
		return
	}
	if err := p.repo.AppendRecords(progressRecords, progressRecord(p.target, old, ct)); err != nil {
		p.broken = true
	}
}

// close lets the lock go and, when finished is set, deletes the file.
func (p *progressFile) close(finished bool) {
	if p == nil {
		return
	}
	if finished {
		p.repo.ReplaceRecords(progressRecords, nil) // while still locked, so no other run reads a file being deleted
	}
	p.unlock()
}
