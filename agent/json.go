package agent

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// integer is an integral JSON number. Values beyond int64 saturate n and keep
// their JSON text for echoing.
type integer struct {
	n    int64
	fits bool   // n is the exact value
	text string // the number as the JSON had it
}

// String returns the value in decimal, or the JSON text when it does not fit int64.
func (i integer) String() string {
	if i.fits {
		return strconv.FormatInt(i.n, 10)
	}
	return i.text
}

// parseInteger parses raw, a valid JSON value, as an integer: a number whose
// value is integral, whatever its notation (3, 3.0, 30e-1).
func parseInteger(raw []byte) (integer, bool) {
	s := string(raw)
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return integer{}, false
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	scale := parseExponent(exp) - int64(len(frac))
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return integer{n: 0, fits: true, text: string(raw)}, true
	}
	for strings.HasSuffix(digits, "0") {
		digits = digits[:len(digits)-1]
		scale++
	}
	if scale < 0 {
		return integer{}, false // a fractional part remains
	}
	v, ok := magnitude(digits, scale)
	switch {
	case ok && !neg && v <= math.MaxInt64:
		return integer{n: int64(v), fits: true, text: string(raw)}, true
	case ok && neg && v <= 1<<63:
		return integer{n: int64(-v), fits: true, text: string(raw)}, true // -(1<<63) wraps to MinInt64
	case neg:
		return integer{n: math.MinInt64, text: string(raw)}, true
	}
	return integer{n: math.MaxInt64, text: string(raw)}, true
}

// parseExponent parses the digits of an exponent (with an optional sign),
// clamped far beyond any length a number can have.
func parseExponent(s string) int64 {
	const clamp = 1 << 40
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	var e int64
	for i := 0; i < len(s) && e < clamp; i++ {
		e = e*10 + int64(s[i]-'0')
	}
	if neg {
		return -e
	}
	return e
}

// magnitude returns digits × 10^scale, or false if it does not fit uint64.
func magnitude(digits string, scale int64) (uint64, bool) {
	if int64(len(digits))+scale > 20 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		d := uint64(digits[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	for ; scale > 0; scale-- {
		if v > math.MaxUint64/10 {
			return 0, false
		}
		v *= 10
	}
	return v, true
}

// unquote decodes raw, a valid JSON string literal. It reports whether the
// string was well-formed Unicode: no invalid UTF-8 bytes and no unpaired
// surrogate escape. With keepInvalid, such sequences are kept as bytes that are
// invalid UTF-8 (a surrogate as its 3-byte WTF-8 form), so a later check can
// refuse them; without it, each becomes U+FFFD, as encoding/json does.
func unquote(raw []byte, keepInvalid bool) (string, bool) {
	s := string(raw[1 : len(raw)-1])
	var b strings.Builder
	b.Grow(len(s))
	ok := true
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			r, n := unescape(s[i:])
			i += n
			if utf16.IsSurrogate(r) {
				ok = false
				if keepInvalid {
					b.WriteString(wtf8(r))
				} else {
					b.WriteRune(utf8.RuneError)
				}
				continue
			}
			b.WriteRune(r)
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				ok = false
				if !keepInvalid {
					b.WriteRune(utf8.RuneError)
					i++
					continue
				}
			}
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	return b.String(), ok
}

// unescape decodes the escape sequence at the start of s, a surrogate pair as
// one rune, and returns the rune and the bytes it took. An unpaired surrogate
// comes back as itself.
func unescape(s string) (rune, int) {
	switch s[1] {
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r := hex4(s[2:6])
		if utf16.IsSurrogate(r) && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if pair := utf16.DecodeRune(r, hex4(s[8:12])); pair != utf8.RuneError {
				return pair, 12
			}
		}
		return r, 6
	}
	return rune(s[1]), 2 // '"', '\\', '/'
}

func hex4(s string) rune {
	n, _ := strconv.ParseUint(s, 16, 16)
	return rune(n)
}

// wtf8 is the generalized UTF-8 encoding of a surrogate code point: three bytes
// that are not valid UTF-8.
func wtf8(r rune) string {
	return string([]byte{0xe0 | byte(r>>12), 0x80 | byte(r>>6)&0x3f, 0x80 | byte(r)&0x3f})
}
