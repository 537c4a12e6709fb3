// Package escape makes text that came from a vault's repository safe to show
// on a terminal. A remote can put anything in a name, a commit message, a
// trailer or a comment: a newline that forges a line of output, an escape
// sequence (ESC [2K erases a line), a C1 control that some terminals obey as
// one, a bidi override that reorders what the reader sees, bytes that are not
// UTF-8. Everything of that kind is shown as a visible escape (\x1b, \n,
// \u202e, \xff) instead; ordinary text, non-ASCII letters included, is left
// alone.
//
// Name is for one value (a path, a subject, a trailer, a comment): it comes
// back unchanged when it is safe, else quoted in Go syntax, so a quoted name
// is always one that was escaped. Text is for file contents and diffs, where
// newlines and tabs are the text's own and stay; Line is for one line of it.
//
// JSON is for output that encoding/json wrote: it escapes C0 controls but
// leaves C1 and bidi controls as they are, which JSON writes the same value
// with as \u escapes.
package escape

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// unsafe reports whether r must not reach a terminal as itself: a C0 or C1
// control, DEL, a line or paragraph separator, or a bidi control (marks,
// embeddings, overrides and isolates), which reorder what the reader sees.
func unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Name returns s as it is when every character is safe to print and s holds
// no double quote; else s quoted as a Go string literal, in which each unsafe
// character and invalid byte is escaped (\n, \x1b, \u202e, \xff) and other
// characters, non-ASCII letters included, stay as they are.
func Name(s string) string {
	if !needs(s, nameEscapes) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	write(&b, s, nameEscapes)
	b.WriteByte('"')
	return b.String()
}

func nameEscapes(s string, i int, r rune) bool { return r == '"' || r == '\\' || unsafe(r) }

// Text returns s with each unsafe character and invalid byte replaced by its
// escape (\x1b, \r, \u202e, \xff), keeping newlines, tabs, and a carriage
// return that ends a line ("\r\n"). Backslashes are not doubled: contents
// keep their own, so a literal "\x1b" in a file reads the same as an escaped
// ESC; Name is the unambiguous one.
func Text(s string) string {
	if !needs(s, textEscapes) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	write(&b, s, textEscapes)
	return b.String()
}

// Line is Text for one line of a screen: a newline or carriage return is
// escaped too, and only tabs stay.
func Line(s string) string {
	if !needs(s, lineEscapes) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	write(&b, s, lineEscapes)
	return b.String()
}

func lineEscapes(s string, i int, r rune) bool { return r != '\t' && unsafe(r) }

func textEscapes(s string, i int, r rune) bool {
	switch r {
	case '\n', '\t':
		return false
	case '\r':
		return i+1 == len(s) || s[i+1] != '\n'
	}
	return unsafe(r)
}

// needs reports whether s holds an invalid byte or a rune esc picks. A
// backslash alone needs nothing: only a quoted name doubles it.
func needs(s string, esc func(s string, i int, r rune) bool) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return true
			}
			continue
		}
		if r != '\\' && esc(s, i, r) {
			return true
		}
	}
	return false
}

// write copies s to b, escaping the runes esc picks and every invalid byte.
func write(b *strings.Builder, s string, esc func(s string, i int, r rune) bool) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case !esc(s, i, r):
			b.WriteString(s[i : i+n])
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			// strconv's escapes: \a \b \f \n \r \t \v, \x1b, \u0085, \u202e.
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
}

// JSON returns b, JSON text as encoding/json writes it (valid UTF-8, C0
// controls already escaped), with every other unsafe character written as a
// \u escape. Such characters can only be inside strings, whose values do not
// change, so the JSON decodes to exactly what b did.
func JSON(b []byte) []byte {
	wide := func(r rune) bool { return r >= 0x80 && unsafe(r) }
	if !bytes.ContainsFunc(b, wide) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if wide(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}
