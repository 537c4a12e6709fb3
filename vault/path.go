package vault

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on the shape of a memory path.
const (
	maxPathLen    = 4096 // bytes in a canonical path, "/memories" included
	maxSegmentLen = 255  // bytes in one segment
)

// PathErrorKind tells why CleanPath refused a path.
type PathErrorKind int

// The kinds of bad path. Each has its own answer in the memory tool contract.
const (
	PathOutside PathErrorKind = iota + 1 // not /memories or under it
	PathEscape                           // a ".." segment or an encoded dot, slash or backslash that leaves Root
	PathInvalid                          // anything else malformed; Reason says what
)

// PathError is the error CleanPath returns for a path it refuses.
type PathError struct {
	Path   string // the path as given
	Kind   PathErrorKind
	Reason string // a short lowercase phrase, such as "empty segment"
}

// Error returns a plain description of the refusal. The path is quoted, so
// control characters in it cannot reach a log line raw.
func (e *PathError) Error() string {
	return fmt.Sprintf("vault: invalid path %q: %s", e.Path, e.Reason)
}

// Reasons CleanPath gives, by kind.
const (
	reasonOutside   = "must start with " + Root
	reasonDotDot    = `".." segment`
	reasonEncoded   = "encoded dot, slash or backslash"
	reasonTooLong   = "path over 4096 bytes"
	reasonUTF8      = "invalid UTF-8"
	reasonControl   = "contains a control character"
	reasonBackslash = "contains a backslash"
	reasonEmpty     = "empty segment"
	reasonDot       = `"." segment`
	reasonSegment   = "segment over 255 bytes"
	reasonReserved  = "reserved name in git"
)

// CleanPath checks a memory path as the model gave it and returns its canonical
// form: Root, or Root followed by "/"-separated segments, with a single trailing
// "/" dropped ("/memories/" becomes "/memories", "/memories/a/" becomes "/memories/a").
//
// A refused path gets a *PathError, with the first applicable kind in this order:
//   - PathOutside: the path is not Root and does not start with Root + "/".
//   - PathInvalid "path over 4096 bytes": checked before anything that scans the
//     path repeatedly, so the cost of a check stays bounded.
//   - PathEscape: a ".." segment (a backslash also separates segments here, so
//     "..\x" counts), or a percent-encoded dot, slash or backslash at any depth of
//     percent-decoding (%2e, %252e, %25252e, %%32%65, …, any case), in %u form
//     (%u002e), or as an overlong UTF-8 sequence (%c0%ae), when the path, so
//     decoded and resolved, would leave Root ("/memories/..", "/memories/a/../..").
//   - PathInvalid, Reason `".." segment` or "encoded dot, slash or backslash":
//     the same, when the path would stay under Root ("/memories/a/../b",
//     "/memories/a%2fb"). Nothing resolves or decodes a memory path: a name
//     means what it says, or is refused.
//   - PathInvalid otherwise: invalid UTF-8, a control character (NUL included),
//     a backslash, an empty segment, a "." segment, a segment over 255 bytes, a
//     name git reserves (see gitReserved).
//
// Hidden names (a leading ".") and any other Unicode are allowed. A path that
// CleanPath accepts is canonical: CleanPath returns it unchanged.
func CleanPath(p string) (string, error) {
	if p != Root && !strings.HasPrefix(p, Root+"/") {
		return "", &PathError{Path: p, Kind: PathOutside, Reason: reasonOutside}
	}
	clean := p
	if len(clean) > len(Root) && strings.HasSuffix(clean, "/") {
		clean = clean[:len(clean)-1]
	}
	if len(clean) > maxPathLen {
		return "", &PathError{Path: p, Kind: PathInvalid, Reason: reasonTooLong}
	}
	if reason := escapes(clean); reason != "" {
		kind := PathInvalid
		if leaves(clean) {
			kind = PathEscape
		}
		return "", &PathError{Path: p, Kind: kind, Reason: reason}
	}
	if reason := malformed(clean); reason != "" {
		return "", &PathError{Path: p, Kind: PathInvalid, Reason: reason}
	}
	return clean, nil
}

// escapes returns why p could leave Root once some layer decodes or resolves it,
// or "" if it cannot.
func escapes(p string) string {
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return reasonDotDot
		}
	}
	// Each round of decoding removes at least two bytes, so this ends; p is at
	// most maxPathLen bytes, which bounds the work.
	for s := p; ; {
		if hasEncodedSeparator(s) {
			return reasonEncoded
		}
		d := percentDecode(s)
		if d == s {
			return ""
		}
		s = d
	}
}

// leaves reports whether p, under Root, names a place outside Root once
// every encoding escapes looks for is decoded and every ".." resolved: the
// path a careless layer below would reach.
func leaves(p string) bool {
	d := decoded(p)
	if i := strings.IndexByte(d, 0); i >= 0 {
		d = d[:i] // where a C string would end
	}
	depth := 0
	for _, seg := range strings.FieldsFunc(d[len(Root):], func(r rune) bool { return r == '/' || r == '\\' }) {
		switch seg {
		case ".":
		case "..":
			if depth--; depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

// decoded is p with every encoding of a dot, slash or backslash that
// hasEncodedSeparator finds decoded, round after round. Each round that
// changes p makes it shorter, so this ends.
func decoded(p string) string {
	for {
		d := percentDecode(p)
		if strings.Contains(d, "%u") || strings.Contains(d, "%U") {
			d = uDecoder.Replace(strings.ToLower(d))
		}
		d = decodeOverlong(d)
		if d == p {
			return d
		}
		p = d
	}
}

// uDecoder decodes the %u forms of a dot, slash and backslash, lower case.
var uDecoder = strings.NewReplacer("%u002e", ".", "%u002f", "/", "%u005c", "\\")

// encodedSeparators are the escapes of '.', '/' and '\' that CleanPath refuses,
// lower case.
var encodedSeparators = []string{"%2e", "%2f", "%5c", "%u002e", "%u002f", "%u005c"}

// hasEncodedSeparator reports whether s holds an escape of a dot, slash or
// backslash, in any case, or an overlong UTF-8 form of one.
func hasEncodedSeparator(s string) bool {
	if strings.IndexByte(s, '%') >= 0 {
		lower := strings.ToLower(s)
		for _, e := range encodedSeparators {
			if strings.Contains(lower, e) {
				return true
			}
		}
	}
	return hasOverlongSeparator(s)
}

// hasOverlongSeparator reports whether s holds an overlong (invalid) UTF-8
// encoding of '.', '/' or '\', the classic way past decoders that check for
// "../" before decoding.
func hasOverlongSeparator(s string) bool {
	_, n := overlongSeparator(s)
	return n > 0
}

// decodeOverlong replaces every overlong UTF-8 encoding of '.', '/' or '\'
// in s by the character.
func decodeOverlong(s string) string {
	var b strings.Builder
	for {
		i, n := overlongSeparator(s)
		if n == 0 {
			if b.Len() == 0 {
				return s
			}
			b.WriteString(s)
			return b.String()
		}
		r, _ := decodeOverlongAt(s[i : i+n])
		b.WriteString(s[:i])
		b.WriteRune(r)
		s = s[i+n:]
	}
}

// overlongSeparator finds the first overlong encoding of '.', '/' or '\' in
// s: where it starts, and its length, 0 when there is none.
func overlongSeparator(s string) (at, length int) {
	for i := 0; i < len(s); i++ {
		var n int // length of an overlong sequence starting at i
		switch c := s[i]; {
		case c == 0xc0 || c == 0xc1:
			n = 2
		case c == 0xe0 && i+1 < len(s) && s[i+1] < 0xa0:
			n = 3
		case c == 0xf0 && i+1 < len(s) && s[i+1] < 0x90:
			n = 4
		default:
			continue
		}
		if i+n > len(s) {
			continue
		}
		if r, ok := decodeOverlongAt(s[i : i+n]); ok && (r == '.' || r == '/' || r == '\\') {
			return i, n
		}
	}
	return 0, 0
}

// decodeOverlongAt decodes seq, a lead byte and its continuation bytes, as
// UTF-8 decoding would if it allowed overlong forms.
func decodeOverlongAt(seq string) (rune, bool) {
	r := rune(seq[0]) & (0x7f >> len(seq))
	for _, b := range []byte(seq[1:]) {
		if b&0xc0 != 0x80 {
			return 0, false
		}
		r = r<<6 | rune(b&0x3f)
	}
	return r, true
}

// percentDecode replaces every %XX (two hex digits) in s by the byte it encodes
// and leaves any other '%' as it is.
func percentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b.WriteByte(hi<<4 | lo)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// malformed returns what is wrong with the canonical-looking path p, or "".
func malformed(p string) string {
	if !utf8.ValidString(p) {
		return reasonUTF8
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return reasonControl
		}
	}
	if strings.IndexByte(p, '\\') >= 0 {
		return reasonBackslash
	}
	if p == Root {
		return ""
	}
	for _, seg := range strings.Split(p[len(Root)+1:], "/") {
		switch {
		case seg == "":
			return reasonEmpty
		case seg == ".":
			return reasonDot
		case len(seg) > maxSegmentLen:
			return reasonSegment
		case gitReserved(seg):
			return reasonReserved
		}
	}
	return ""
}

// gitIgnorable are the code points that HFS+ ignores in names, so ".g\u200cit"
// is ".git" on a Mac.
var gitIgnorable = strings.NewReplacer(
	"\u200b", "", "\u200c", "", "\u200d", "", "\u200e", "", "\u200f", "",
	"\u202a", "", "\u202b", "", "\u202c", "", "\u202d", "", "\u202e", "",
	"\u206a", "", "\u206b", "", "\u206c", "", "\u206d", "", "\u206e", "", "\u206f", "",
	"\ufeff", "",
)

// gitReserved reports whether a segment names what git itself gives meaning to
// inside a tree: ".git" (a clone of the vault refuses to check it out and strict
// hosts refuse the push), ".gitmodules" and ".gitattributes" (which would steer a
// clone's submodules or diff drivers), in the spellings that file systems fold
// into them, as git's own checks (core.protectNTFS, core.protectHFS) do: any
// case, HFS+ ignorable code points anywhere, trailing dots and spaces and an
// NTFS stream after a colon (".git::$INDEX_ALLOCATION"), and 8.3 short names
// ("GIT~1", "GITMOD~1", and the hashed forms "GI7EBA~1" and "GI7D29~1" Windows
// gives when the short names collide). The memory tool contract allows hidden
// names; these few are refused so that a vault always clones as a normal
// repository.
func gitReserved(seg string) bool {
	// Every reserved spelling holds a "." or a "~"; the ignorable code points
	// may stand anywhere, before the dot too ("\u200c.git").
	if !strings.ContainsAny(seg, ".~") {
		return false
	}
	name := strings.ToLower(gitIgnorable.Replace(seg))
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	name = strings.TrimRight(name, ". ")
	switch name {
	case ".git", "git~1", ".gitmodules", ".gitattributes":
		return true
	}
	for _, short := range []string{"gitmod~", "gi7eba~", "gitatt~", "gi7d29~"} {
		if len(name) == len(short)+1 && strings.HasPrefix(name, short) && '1' <= name[len(short)] && name[len(short)] <= '9' {
			return true
		}
	}
	return false
}
