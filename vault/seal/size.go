package seal

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"filippo.io/age"
)

// A memory file's plaintext is padded before it is age-encrypted: a frame of
// one version byte, the exact length as 8 bytes big-endian, the plaintext, then
// zero bytes up to the frame's bucket. The bucket of a frame of n bytes is
// Padmé's (Nikitin et al., "Reducing Metadata Leakage from Encrypted Files and
// Communication with PURBs", PETS 2019): n rounded up so that only the top
// ⌊log2 ⌊log2 n⌋⌋+1 bits of it may be set, which costs at most 12% and leaves
// O(log log n) bits of information in a size. No frame is smaller than
// MinPadded, so every file under 1 KiB pads to the same length.
//
// The exact length inside the frame lets any holder of an identity (textconv in
// a plain clone, with no vault key) strip the padding; the sealed size header
// in front of the age file (SealSize) lets a listing read it with the vault key
// alone, without an age unwrap.

const (
	padVersion = 1
	padHeader  = 1 + 8
	// MinPadded is the smallest padded frame: Padmé's bucket for a 1 KiB file.
	MinPadded = 1088
)

// ErrBadPad is wrapped by the error [Unpad] returns for a frame that [Pad] did
// not write.
var ErrBadPad = errors.New("not a padded memory file")

// padme rounds n up to its Padmé bucket.
func padme(n int64) int64 {
	if n < 2 {
		return n
	}
	e := bits.Len64(uint64(n)) - 1 // ⌊log2 n⌋
	s := bits.Len64(uint64(e))     // ⌊log2 e⌋ + 1
	mask := int64(1)<<(e-s) - 1
	return (n + mask) &^ mask
}

// PaddedLen returns the length of the frame Pad makes of n bytes of plaintext,
// or -1 when that would overflow.
func PaddedLen(n int64) int64 {
	if n < 0 || n > math.MaxInt64/2 {
		return -1
	}
	return max(padme(n+padHeader), MinPadded)
}

// Pad returns the padded frame of plain, to be age-encrypted in its place.
func Pad(plain []byte) []byte {
	out := make([]byte, PaddedLen(int64(len(plain))))
	out[0] = padVersion
	binary.BigEndian.PutUint64(out[1:padHeader], uint64(len(plain)))
	copy(out[padHeader:], plain)
	return out
}

// Unpad returns the plaintext inside a frame Pad wrote, a slice of frame (no
// copy). The error wraps [ErrBadPad] for anything else: too short, an unknown
// version, a length that does not fit, a frame that is not the length's bucket,
// padding that is not all zero.
func Unpad(frame []byte) ([]byte, error) {
	if len(frame) < padHeader {
		return nil, fmt.Errorf("seal: unpad: %w (%d bytes)", ErrBadPad, len(frame))
	}
	if frame[0] != padVersion {
		return nil, fmt.Errorf("seal: unpad: %w (version %d)", ErrBadPad, frame[0])
	}
	n := binary.BigEndian.Uint64(frame[1:padHeader])
	if n > uint64(len(frame)-padHeader) {
		return nil, fmt.Errorf("seal: unpad: %w (length %d in a frame of %d bytes)", ErrBadPad, n, len(frame))
	}
	if PaddedLen(int64(n)) != int64(len(frame)) {
		return nil, fmt.Errorf("seal: unpad: %w (a frame of %d bytes for %d bytes)", ErrBadPad, len(frame), n)
	}
	body, pad := frame[padHeader:padHeader+n], frame[padHeader+n:]
	if !allZero(pad) {
		return nil, fmt.Errorf("seal: unpad: %w (padding is not zero)", ErrBadPad)
	}
	return body, nil
}

// The size header of a sealed memory file's blob, in front of its age file:
// sizeMagic, then AES-SIV over a random nonce and the exact plaintext length
// (8 bytes big-endian), with the age file's header as associated data, so a
// header moved onto another file does not open.
const (
	sizeMagic = "mvs1"
	sizeNonce = 16
	// SizeHeaderLen is the length of the size header SealSize returns.
	SizeHeaderLen = len(sizeMagic) + sivLen + sizeNonce + 8
)

// ErrBadSize is wrapped by the error [Key.OpenSize] returns for a size header
// not sealed under this key for this age file.
var ErrBadSize = errors.New("no size sealed under this vault's key")

// SealSize returns the size header to store in front of an age file whose
// plaintext is size bytes long; ageHeader is that age file's header (up to and
// including its MAC line), which binds the two.
func (k *Key) SealSize(size int64, ageHeader []byte) ([]byte, error) {
	if size < 0 {
		return nil, fmt.Errorf("seal: size: negative")
	}
	pt := make([]byte, sizeNonce+8)
	if _, err := rand.Read(pt[:sizeNonce]); err != nil {
		return nil, fmt.Errorf("seal: size: %w", err)
	}
	binary.BigEndian.PutUint64(pt[sizeNonce:], uint64(size))
	ct, err := k.sizes.EncryptDeterministically(pt, ageHeader)
	if err != nil {
		return nil, fmt.Errorf("seal: size: %w", err)
	}
	return append([]byte(sizeMagic), ct...), nil
}

// HasSizeHeader reports whether blob starts the way a sealed memory file's
// blob does, so a reader can tell it from a plain age file without the key.
func HasSizeHeader(blob []byte) bool {
	return len(blob) >= SizeHeaderLen && bytes.HasPrefix(blob, []byte(sizeMagic))
}

// OpenSize returns the plaintext size sealed in the first SizeHeaderLen bytes
// of blob (more may follow) for the age file whose header is ageHeader. The
// error wraps [ErrBadSize] for anything else.
func (k *Key) OpenSize(blob, ageHeader []byte) (int64, error) {
	if !HasSizeHeader(blob) {
		return 0, fmt.Errorf("seal: open size: %w (no size header)", ErrBadSize)
	}
	pt, err := k.sizes.DecryptDeterministically(blob[len(sizeMagic):SizeHeaderLen], ageHeader)
	if err != nil {
		return 0, fmt.Errorf("seal: open size: %w", ErrBadSize)
	}
	n := binary.BigEndian.Uint64(pt[sizeNonce:])
	if n > math.MaxInt64/2 {
		return 0, fmt.Errorf("seal: open size: %w (out of range)", ErrBadSize)
	}
	return int64(n), nil
}

// ErrNoAgeHeader is wrapped by the error [Key.OpenBlobSize] returns for a blob
// whose size header is not followed by a complete age header (of which the
// caller may have read too little).
var ErrNoAgeHeader = errors.New("no complete age header after the size header")

// SealBlob returns a sealed memory file's blob: the size header of an age
// file whose plaintext is size bytes, then ageFile itself.
func (k *Key) SealBlob(size int64, ageFile []byte) ([]byte, error) {
	hdr, err := age.ExtractHeader(bytes.NewReader(ageFile))
	if err != nil {
		return nil, fmt.Errorf("seal: size: %w", ErrNoAgeHeader)
	}
	sh, err := k.SealSize(size, hdr)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(sh)+len(ageFile))
	return append(append(out, sh...), ageFile...), nil
}

// OpenBlobSize returns the plaintext size sealed in the header of a sealed
// memory file's blob, of which head holds at least the first bytes through
// the age header. The error wraps [ErrBadSize] when head has no size header
// or it does not open under k for that age file, and [ErrNoAgeHeader] when
// no complete age header follows it in head.
func (k *Key) OpenBlobSize(head []byte) (int64, error) {
	if !HasSizeHeader(head) {
		return 0, fmt.Errorf("seal: open size: %w (no size header)", ErrBadSize)
	}
	// The size opens only under the age header it was sealed with, which
	// SealBlob took from age's parser: where it opens, those bytes are that
	// header, and parsing them again (ten times the cost of opening the
	// size, for each file a listing or an admission reads) is left out.
	file := head[SizeHeaderLen:]
	if n, ok := ageHeaderLen(file); ok {
		if size, err := k.OpenSize(head, file[:n]); err == nil {
			return size, nil
		}
	}
	hdr, err := age.ExtractHeader(bytes.NewReader(file))
	if err != nil {
		return 0, fmt.Errorf("seal: open size: %w", ErrNoAgeHeader)
	}
	return k.OpenSize(head, hdr)
}

// ageHeaderLen returns the length of the age header that file starts with, as
// age.ExtractHeader returns it for a header it parses: through the end of the
// first line that starts with "---", the MAC line, which no other line of a
// header can start with (a stanza starts with "-> ", its body is base64). ok
// is false when file holds no such line whole.
func ageHeaderLen(file []byte) (n int, ok bool) {
	for n < len(file) {
		nl := bytes.IndexByte(file[n:], '\n')
		if nl < 0 {
			break
		}
		if bytes.HasPrefix(file[n:], []byte("---")) {
			return n + nl + 1, true
		}
		n += nl + 1
	}
	return 0, false
}

// ResealBlob returns blob, a sealed memory file's blob whose size header
// opens under old, with that header sealed under k instead; the age file
// stays as it is. The error is OpenBlobSize's.
func (k *Key) ResealBlob(old *Key, blob []byte) ([]byte, error) {
	size, err := old.OpenBlobSize(blob)
	if err != nil {
		return nil, err
	}
	return k.SealBlob(size, blob[SizeHeaderLen:])
}
