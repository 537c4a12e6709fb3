package agent

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulttest"
)

func TestParseInteger(t *testing.T) {
	tests := []struct {
		in   string
		n    int64
		fits bool
		ok   bool
	}{
		{"0", 0, true, true},
		{"-0", 0, true, true},
		{"3", 3, true, true},
		{"-12", -12, true, true},
		{"3.0", 3, true, true},
		{"3.000", 3, true, true},
		{"3e0", 3, true, true},
		{"30e-1", 3, true, true},
		{"0.3e1", 3, true, true},
		{"1E+2", 100, true, true},
		{"0e-999999999999999999999", 0, true, true},
		{"9223372036854775807", math.MaxInt64, true, true},
		{"-9223372036854775808", math.MinInt64, true, true},
		{"9223372036854775808", math.MaxInt64, false, true},
		{"-9223372036854775809", math.MinInt64, false, true},
		{"99999999999999999999", math.MaxInt64, false, true},
		{"1e400", math.MaxInt64, false, true},
		{"1e99999999999999999999999", math.MaxInt64, false, true},
		{"-1e400", math.MinInt64, false, true},
		{"1.5", 0, false, false},
		{"1e-1", 0, false, false},
		{"1e-99999999999999999999", 0, false, false},
		{`"1"`, 0, false, false},
		{"true", 0, false, false},
		{"null", 0, false, false},
		{"[1]", 0, false, false},
	}
	for _, tt := range tests {
		got, ok := parseInteger([]byte(tt.in))
		if ok != tt.ok || (ok && (got.n != tt.n || got.fits != tt.fits)) {
			t.Errorf("parseInteger(%s) = %+v, %v; want n=%d fits=%v, %v", tt.in, got, ok, tt.n, tt.fits, tt.ok)
		}
	}
	if got, _ := parseInteger([]byte("5.0")); got.String() != "5" {
		t.Errorf("parseInteger(5.0).String() = %q, want 5", got.String())
	}
	if got, _ := parseInteger([]byte("1e400")); got.String() != "1e400" {
		t.Errorf("parseInteger(1e400).String() = %q, want 1e400", got.String())
	}
}

func TestUnquote(t *testing.T) {
	tests := []struct {
		in, keep, replace string
		ok                bool
	}{
		{`"abc"`, "abc", "abc", true},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", "a\"b\\c/d\b\f\n\r\t", true},
		{`"\u00e9\u4e16"`, "é世", "é世", true},
		{`"\ud83d\ude42"`, "\U0001F642", "\U0001F642", true},
		{`"\uD83D\uDE42"`, "\U0001F642", "\U0001F642", true},
		{`"a\ud800b"`, "a\xed\xa0\x80b", "a\uFFFDb", false},
		{`"\udc00"`, "\xed\xb0\x80", "\uFFFD", false},
		{`"\ud800\u0041"`, "\xed\xa0\x80A", "\uFFFDA", false},
		{`"\ud800\ud800"`, "\xed\xa0\x80\xed\xa0\x80", "\uFFFD\uFFFD", false},
		{"\"a\xffb\"", "a\xffb", "a\uFFFDb", false},
		{"\"é\"", "é", "é", true},
	}
	for _, tt := range tests {
		keep, ok1 := unquote([]byte(tt.in), true)
		replace, ok2 := unquote([]byte(tt.in), false)
		if keep != tt.keep || replace != tt.replace || ok1 != tt.ok || ok2 != tt.ok {
			t.Errorf("unquote(%s) = %q, %q, %v, %v; want %q, %q, %v", tt.in, keep, replace, ok1, ok2, tt.keep, tt.replace, tt.ok)
		}
	}
}

func TestFormatSize(t *testing.T) {
	// Expectations from the reference's formatFileSize (JavaScript).
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0B"}, {1, "1B"}, {1023, "1023B"}, {1024, "1K"}, {1025, "1.0K"}, {1075, "1.0K"},
		{1126, "1.1K"}, {1280, "1.3K"}, {1536, "1.5K"}, {2047, "2.0K"}, {2048, "2K"},
		{1048575, "1024.0K"}, {1048576, "1M"}, {1048577, "1.0M"}, {3198157, "3.1M"},
		{1073741823, "1024.0M"}, {1073741824, "1G"}, {1073741825, "1.0G"}, {1610612736, "1.5G"},
		{999 << 30, "999G"}, {1 << 40, "1024G"}, {math.MaxInt64, "8589934592.0G"},
	}
	for _, tt := range tests {
		if got := formatSize(tt.n); got != tt.want {
			t.Errorf("formatSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestRenderFileLimit(t *testing.T) {
	const p = "/memories/f"
	header := "Here's the content of /memories/f with line numbers:" // 52 characters
	notice := func(n int) string {
		return "\n[Output truncated at " + strconv.Itoa(n) + " characters. Use view_range to see more.]"
	}
	content := "ab\ncd" // lines of 1+6+1+2 = 10 characters each
	tests := []struct {
		limit int
		want  string
	}{
		{0, header + "\n     1\tab\n     2\tcd"},
		{72, header + "\n     1\tab\n     2\tcd"},
		{71, header + "\n     1\tab" + notice(71)},
		{62, header + "\n     1\tab" + notice(62)},
		{61, header + notice(61)},
		{10, header + notice(10)},
	}
	for _, tt := range tests {
		if got := renderFile(p, content, nil, tt.limit); got != tt.want {
			t.Errorf("renderFile(limit %d) = %q, want %q", tt.limit, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"command":"view","path":"/memories","view_range":[1,-1]}`,
		`{"command":"create","path":"/memories/a.md","file_text":"x"}`,
		`{"command":"str_replace","path":"/memories/a","old_str":"a","new_str":null}`,
		`{"command":"insert","path":"/memories/a","insert_line":1e0,"insert_text":"\ud800"}`,
		`{"command":"delete","path":"/memories/%252e"}`,
		`{"command":"rename","old_path":"/memories/a","new_path":"/memories/a/b"}`,
		`{"command":"view","path":"/memories/\u0000"}`,
		`[]`, `null`, ``, `{"command":5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		c, fl := parse(input)
		if fl != nil {
			if fl.msg == "" || !utf8.ValidString(fl.answer().Content) && utf8.Valid(input) {
				t.Fatalf("parse(%q) failure %q", input, fl.msg)
			}
			return
		}
		if _, ok := commands[c.name]; !ok {
			t.Fatalf("parse(%q) accepted command %q", input, c.name)
		}
		paths := []string{c.path}
		if c.name == "rename" {
			paths = append(paths, c.newPath)
		}
		for _, p := range paths {
			if clean, err := vault.CleanPath(p); err != nil || clean != p {
				t.Fatalf("parse(%q) accepted path %q: CleanPath = %q, %v", input, p, clean, err)
			}
		}
	})
}

// FuzzHandle runs inputs on one real vault: no input may panic or fail outside
// the contract, and an answer is an error exactly when it says so.
func FuzzHandle(f *testing.F) {
	for _, s := range []string{
		`{"command":"create","path":"/memories/a.md","file_text":"one\ntwo"}`,
		`{"command":"view","path":"/memories"}`,
		`{"command":"view","path":"/memories/a.md","view_range":[2,-1]}`,
		`{"command":"str_replace","path":"/memories/a.md","old_str":"one","new_str":"1"}`,
		`{"command":"insert","path":"/memories/a.md","insert_line":2,"insert_text":"three\n"}`,
		`{"command":"rename","old_path":"/memories/a.md","new_path":"/memories/d/b.md"}`,
		`{"command":"delete","path":"/memories/d"}`,
		`{"command":"create","path":"/memories/x/../y","file_text":""}`,
	} {
		f.Add([]byte(s))
	}
	v := vaulttest.New(f)
	h := New(Vault(v), Options{})
	f.Fuzz(func(t *testing.T, input []byte) {
		a, err := h.Run(context.Background(), input, "toolu_fuzz")
		if err != nil {
			t.Fatalf("Run(%q) error: %v", input, err)
		}
		if a.IsError != strings.HasPrefix(a.Content, "Error: ") {
			t.Fatalf("Run(%q) = %+v: is_error and content disagree", input, a)
		}
	})
}
