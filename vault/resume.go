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
// Record: 20-byte old blob hash, 4-byte big-endian length, ciphertext, 4-byte
// CRC-32C of all that. There is no fsync: after a machine crash a torn tail
// fails its checksum and is dropped with everything after it.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/gitlog"
)

// progressMagic starts the progress file: its format, then the recipient set.
// A file of another version (progressFamily, another number) is a newer
// memvault's, and is left alone.
const (
	progressFamily = "memvault reencrypt v"
	progressMagic  = progressFamily + "1 "
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// progressFile is the open memvault/reencrypt. A nil *progressFile keeps
// nothing: every method is then a no-op.
type progressFile struct {
	path   string
	f      *os.File // open and flocked until close
	broken bool     // a write failed: record no more
}

// openProgress opens the progress file of a re-encryption to the recipient set
// target and returns the ciphertexts an earlier run to the same set left. A
// file for another set is started over. Only I/O errors are returned; a
// damaged record ends what is taken from the file.
func openProgress(stateDir string, target [32]byte) (*progressFile, map[gitlog.Hash][]byte, error) {
	path := filepath.Join(stateDir, "reencrypt")
	header := []byte(progressMagic + hex.EncodeToString(target[:]) + "\n")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("vault: open %s: %w", path, err)
	}
	if busy, err := gitlog.TryLockFile(f); busy || err != nil {
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("vault: lock %s: %w", path, err)
		}
		return nil, nil, fmt.Errorf("vault: another re-encryption of this vault is running (%s is locked): %w", path, ErrBusy)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("vault: read %s: %w", path, err)
	}
	if bytes.HasPrefix(data, []byte(progressFamily)) && !bytes.HasPrefix(data, []byte(progressMagic)) {
		f.Close()
		return nil, nil, fmt.Errorf("vault: %s: %w", path, ErrNewerFormat)
	}
	done := map[gitlog.Hash][]byte{}
	keep := 0
	if bytes.HasPrefix(data, header) {
		keep = len(header) + readProgress(data[len(header):], done)
	}
	if keep == 0 {
		err = f.Truncate(0)
		if err == nil {
			_, err = f.WriteAt(header, 0)
		}
		keep = len(header)
	} else {
		err = f.Truncate(int64(keep))
	}
	if err == nil {
		_, err = f.Seek(int64(keep), io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("vault: write %s: %w", path, err)
	}
	return &progressFile{path: path, f: f}, done, nil
}

// readProgress adds the records of data to done and returns how many bytes of
// data held whole, valid records.
func readProgress(data []byte, done map[gitlog.Hash][]byte) int {
	off := 0
	for {
		rest := data[off:]
		if len(rest) < 28 {
			return off
		}
		n := int(binary.BigEndian.Uint32(rest[20:24]))
		if n > len(rest)-28 {
			return off
		}
		body := rest[:24+n]
		if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(rest[24+n:]) {
			return off
		}
		var h gitlog.Hash
		copy(h[:], body[:20])
		done[h] = bytes.Clone(body[24:])
		off += 28 + n
	}
}

// add appends one ciphertext. A write error only means a re-run would redo
// more work, so it stops the recording and is otherwise ignored.
func (p *progressFile) add(old gitlog.Hash, ct []byte) {
	if p == nil || p.broken {
		return
	}
	rec := make([]byte, 0, 28+len(ct))
	rec = append(rec, old[:]...)
	rec = binary.BigEndian.AppendUint32(rec, uint32(len(ct)))
	rec = append(rec, ct...)
	rec = binary.BigEndian.AppendUint32(rec, crc32.Checksum(rec, castagnoli))
	if _, err := p.f.Write(rec); err != nil {
		p.broken = true
	}
}

// close closes the file and, when finished is set, deletes it.
func (p *progressFile) close(finished bool) {
	if p == nil {
		return
	}
	if finished {
		os.Remove(p.path) // while still locked, so no other run reads a file being deleted
	}
	p.f.Close()
}
