package pack

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
)

// Scanner is the one reader of pack entries. IndexPack reads a pack
// that arrived with it in order (each entry's header, then its content
// inflated into a writer, with the entry's offset and the CRC-32 of its
// stored bytes, and the pack's checksum at the end); the pack reader and the
// merge of packs read one entry at an offset (see at).
//
// It reads through a buffer of its own and is the inflater's byte reader, so
// zlib takes bytes one at a time from memory and stops exactly at the end of
// each entry's stream, and the CRC and the pack's checksum are taken over
// whole runs of bytes, not a byte at a time: on the padded blobs of a sealed
// vault, go-git's scanner spent longer updating its CRC a byte at a time
// than inflating.
type Scanner struct {
	r   io.ReaderAt
	buf []byte
	pos int   // next byte to read: buf[pos:end] is read ahead
	end int   //
	off int64 // offset in the pack of buf[0]
	err error // of the last read of r, once buf[pos:end] is used up
	// chunk is how much a read of r asks for: a whole buffer in order, about
	// what the entry being read holds at an offset.
	chunk int

	// In the first pass, every byte read is summed into the pack's checksum
	// and the current entry's CRC; buf[mark:pos] is read and not yet summed.
	summing bool
	mark    int
	sum     hash.Hash
	crc     uint32

	zr   io.ReadCloser
	copy []byte // inflate's buffer, reused
}

// Chunks read from the pack: large in order, and at an offset at least
// seekChunk, for an entry's header and a small object whole.
const (
	scanChunk = 64 << 10
	seekChunk = 4 << 10
)

// maxEntryHead is the longest entry header: a type and size of up to 64
// bits, then an offset of as much or a 20-byte name.
const maxEntryHead = 1 + 10 + 20

var errPackChecksum = errors.New("the pack's checksum does not match its content")

// NewScanner reads the pack r in order from its start.
func NewScanner(r io.ReaderAt) *Scanner {
	return &Scanner{r: r, buf: make([]byte, scanChunk+maxEntryHead), chunk: scanChunk, summing: true, sum: sha1.New()}
}

// header reads the pack's header and returns its count of objects.
func (s *Scanner) header() (uint32, error) {
	var h [12]byte
	if _, err := io.ReadFull(s, h[:]); err != nil {
		return 0, fmt.Errorf("a pack header cut short: %w", err)
	}
	if string(h[:4]) != "PACK" {
		return 0, errors.New("not a pack: no PACK signature")
	}
	if v := binary.BigEndian.Uint32(h[4:]); v != 2 && v != 3 {
		return 0, fmt.Errorf("a pack of version %d", v)
	}
	return binary.BigEndian.Uint32(h[8:]), nil
}

// Offset returns the Offset in the pack of the next byte to read.
func (s *Scanner) Offset() int64 { return s.off + int64(s.pos) }

// account sums what was read since the last call.
func (s *Scanner) account() {
	if s.summing && s.pos > s.mark {
		s.sum.Write(s.buf[s.mark:s.pos])
		s.crc = crc32.Update(s.crc, crc32.IEEETable, s.buf[s.mark:s.pos])
	}
	s.mark = s.pos
}

// fill reads ahead until n bytes are, or the pack ends.
func (s *Scanner) fill(n int) {
	if s.end-s.pos >= n || s.err != nil {
		return
	}
	s.account()
	copy(s.buf, s.buf[s.pos:s.end])
	s.off += int64(s.pos)
	s.end -= s.pos
	s.pos, s.mark = 0, 0
	for s.end < n && s.err == nil {
		m, err := s.r.ReadAt(s.buf[s.end:min(len(s.buf), s.end+max(s.chunk, n-s.end))], s.off+int64(s.end))
		s.end += m
		s.err = err
		if m == 0 && err == nil {
			s.err = io.ErrNoProgress // ReadAt reads all it is asked or says why not
		}
	}
}

// ReadByte and Read read the pack; an inflater reads through them.
func (s *Scanner) ReadByte() (byte, error) {
	if s.pos == s.end {
		if s.fill(1); s.pos == s.end {
			return 0, s.err
		}
	}
	c := s.buf[s.pos]
	s.pos++
	return c, nil
}

func (s *Scanner) Read(p []byte) (int, error) {
	if s.pos == s.end {
		if s.fill(1); s.pos == s.end {
			return 0, s.err
		}
	}
	n := copy(p, s.buf[s.pos:s.end])
	s.pos += n
	return n, nil
}

// EntryHead is the header of one entry of a pack.
type EntryHead struct {
	offset  int64
	typ     plumbing.ObjectType // as stored: a delta's is OFS or REF
	size    int64               // inflated; of a delta, its instructions
	baseOfs int64               // an OFS delta's base
	baseRef Hash                // a REF delta's base
}

// next reads the header of the entry that starts here.
func (s *Scanner) next() (EntryHead, error) {
	s.account()
	s.crc = 0
	s.fill(maxEntryHead)
	h := EntryHead{offset: s.Offset()}
	t, size, ofs, ref, n, err := parseEntryHead(s.buf[s.pos:s.end])
	if err != nil {
		return h, fmt.Errorf("entry at %d: %w", h.offset, err)
	}
	if size < 0 {
		return h, fmt.Errorf("entry at %d: a size past 63 bits", h.offset)
	}
	s.pos += n
	h.typ, h.size, h.baseRef = t, size, ref
	if t == plumbing.OFSDeltaObject {
		if ofs <= 0 || ofs > h.offset {
			return h, fmt.Errorf("delta at %d: %w (an offset before the pack or at the delta itself)", h.offset, errDeltaBase)
		}
		h.baseOfs = h.offset - ofs
	}
	return h, nil
}

// want tells fill, reading at an offset, that the entry whose header next
// read holds about n bytes: zlib adds a few to what it cannot shrink.
func (s *Scanner) want(n int64) {
	if !s.summing {
		s.chunk = int(min(max(n+n/64+64, seekChunk), scanChunk))
	}
}

// inflate inflates the content of the entry whose header next read into w,
// and returns the CRC-32 of the entry's stored bytes (in the first pass). A
// stream that inflates to more or less than the header's size fails, having
// inflated at most one byte more than it.
func (s *Scanner) inflate(w io.Writer, h EntryHead) (uint32, error) {
	if err := s.startZlib(h); err != nil {
		return 0, err
	}
	if s.copy == nil {
		s.copy = make([]byte, 32<<10)
	}
	n, err := io.CopyBuffer(w, io.LimitReader(s.zr, h.size+1), s.copy)
	if err != nil {
		return 0, fmt.Errorf("entry at %d: %w", h.offset, err)
	}
	if n != h.size {
		return 0, fmt.Errorf("entry at %d: %d bytes inflated, where its header says %d", h.offset, n, h.size)
	}
	s.account()
	return s.crc, nil
}

// readPrefix inflates the first len(p) bytes of the content of the entry
// whose header next read, and no more, whatever its stream holds.
func (s *Scanner) readPrefix(p []byte, h EntryHead) error {
	if err := s.startZlib(h); err != nil {
		return err
	}
	if _, err := io.ReadFull(s.zr, p); err != nil {
		return fmt.Errorf("entry at %d: %w", h.offset, err)
	}
	return nil
}

// startZlib starts inflating the stream of the entry whose header next read.
func (s *Scanner) startZlib(h EntryHead) error {
	s.want(h.size)
	var err error
	if s.zr == nil {
		s.zr, err = zlib.NewReader(s)
	} else {
		err = s.zr.(zlib.Resetter).Reset(s, nil)
	}
	if err != nil {
		return fmt.Errorf("entry at %d: %w", h.offset, err)
	}
	return nil
}

// trailer reads the pack's checksum and checks it against what was read,
// and that nothing follows it.
func (s *Scanner) trailer() (Hash, error) {
	s.account()
	want := s.sum.Sum(nil)
	s.summing = false
	var sum Hash
	if _, err := io.ReadFull(s, sum[:]); err != nil {
		return sum, fmt.Errorf("the pack's checksum cut short: %w", err)
	}
	if !bytes.Equal(sum[:], want) {
		return sum, errPackChecksum
	}
	if s.fill(1); s.pos != s.end {
		return sum, errors.New("data past the pack's checksum")
	}
	return sum, nil
}

// seek goes to the entry at off, to read it again; the pack's checksum and
// the CRC are no longer taken. What is read ahead is kept when off is in it;
// a failed read is tried again, never taken for the end of the pack.
func (s *Scanner) seek(off int64) {
	s.summing = false
	s.chunk = seekChunk
	s.err = nil
	if off >= s.off && off <= s.off+int64(s.end) {
		s.pos = int(off - s.off)
		s.mark = s.pos
		return
	}
	s.off, s.pos, s.end, s.mark = off, 0, 0, 0
}

// At reads the header of the entry At off in the pack r, to read its content
// next.
func (s *Scanner) At(r io.ReaderAt, off int64) (EntryHead, error) {
	if r != s.r {
		s.r, s.off, s.pos, s.end, s.mark = r, off, 0, 0, 0
	}
	s.seek(off)
	return s.next()
}
