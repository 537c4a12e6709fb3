package escape

import (
	"bytes"
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/memories/notes/todo.md", "/memories/notes/todo.md"},
		{"/memories/Überblick/日本語 メモ.md", "/memories/Überblick/日本語 メモ.md"},
		{"👩‍💻 zwj", "👩‍💻 zwj"}, // a zero-width joiner is no control
		{`back\slash`, `back\slash`},
		{"", ""},
		{"a\nb", `"a\nb"`},
		{"x\x1b[2K\ry", `"x\x1b[2K\ry"`},
		{"tab\there", `"tab\there"`},
		{"say \"hi\"", `"say \"hi\""`},
		{"esc\x1b and \\", `"esc\x1b and \\"`},
		{"c1 \u0085 \u009b", `"c1 \u0085 \u009b"`},
		{"txt.\u202egpj", `"txt.\u202egpj"`},
		{"iso \u2066x\u2069", `"iso \u2066x\u2069"`},
		{"mark \u200f", `"mark \u200f"`},
		{"line\u2028sep", `"line\u2028sep"`},
		{"bad \xff\xfe", `"bad \xff\xfe"`},
		{"del \x7f nul \x00", `"del \x7f nul \x00"`},
		{"literal \ufffd stays", "literal \ufffd stays"},
	}
	for _, tt := range tests {
		if got := Name(tt.in); got != tt.want {
			t.Errorf("Name(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"two lines\n\tindented\n", "two lines\n\tindented\n"},
		{"crlf\r\nfile\r\n", "crlf\r\nfile\r\n"},
		{"über 日本語 👩‍💻", "über 日本語 👩‍💻"},
		{`C:\x1b stays`, `C:\x1b stays`},
		{"erase\x1b[1A\x1b[2K(recipients unchanged)\n", `erase\x1b[1A\x1b[2K(recipients unchanged)` + "\n"},
		{"over\rwrite", `over\rwrite`},
		{"end\r", `end\r`},
		{"csi \u009b2J", `csi \u009b2J`},
		{"abc \u202edcba", `abc \u202edcba`},
		{"bad \xc3", `bad \xc3`},
		{"bell\a", `bell\a`},
	}
	for _, tt := range tests {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a\tb über", "a\tb über"},
		{"forged\nline", `forged\nline`},
		{"crlf\r\n", `crlf\r\n`},
		{"\x1b]0;title\a", `\x1b]0;title\a`},
	}
	for _, tt := range tests {
		if got := Line(tt.in); got != tt.want {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestJSON(t *testing.T) {
	in := map[string]string{"agent": "mallory\u202eyrollam", "session": "s\u009b2J", "tool": "t\x1b", "name": "日本 \u2066"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got := JSON(b)
	for _, bad := range []string{"\u202e", "\u009b", "\x1b", "\u2066"} {
		if bytes.Contains(got, []byte(bad)) {
			t.Errorf("JSON(%s) = %s, holds %q raw", b, got, bad)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || !maps.Equal(back, in) {
		t.Errorf("JSON(%s) = %s, which decodes to %q, %v; want %q", b, got, back, err, in)
	}
}

// FuzzEscape checks that nothing a terminal obeys survives: the output is valid
// UTF-8 with no control but (in Text) newline, tab and a line-ending CR, and
// no bidi control; and that a quoted Name unquotes to what it was.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"a\nb", "\x1b[2K\r", "\u202e", "\xff", "\r\n", `"\`, "ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Name(s), Text(s), Line(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("escape of %q = %q: not UTF-8", s, out)
			}
		}
		n := Name(s)
		for _, r := range n {
			if unsafe(r) {
				t.Fatalf("Name(%q) = %q holds %U", s, n, r)
			}
		}
		if n != s && (!strings.HasPrefix(n, `"`) || !strings.HasSuffix(n, `"`)) {
			t.Fatalf("Name(%q) = %q: changed but not quoted", s, n)
		}
		if back, err := strconv.Unquote(n); n != s && (err != nil || back != s) {
			t.Fatalf("Name(%q) = %s, which unquotes to %q, %v", s, n, back, err)
		}
		for _, r := range Line(s) {
			if r != '\t' && unsafe(r) {
				t.Fatalf("Line(%q) = %q holds %U", s, Line(s), r)
			}
		}
		x := Text(s)
		for i, r := range x {
			if r == '\n' || r == '\t' || (r == '\r' && i+1 < len(x) && x[i+1] == '\n') {
				continue
			}
			if unsafe(r) {
				t.Fatalf("Text(%q) = %q holds %U", s, x, r)
			}
		}
	})
}
