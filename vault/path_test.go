package vault

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanPath(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	// maxed is a path of exactly 4096 bytes: /memories (9) + 16 × "/"+254 bytes (4080) + "/" + 6.
	maxed := Root + strings.Repeat("/"+long(254), 16) + "/" + long(6)
	tests := []struct {
		in     string
		want   string
		kind   PathErrorKind
		reason string
	}{
		{in: "/memories", want: "/memories"},
		{in: "/memories/", want: "/memories"},
		{in: "/memories/a", want: "/memories/a"},
		{in: "/memories/a/", want: "/memories/a"},
		{in: "/memories/a/b.md", want: "/memories/a/b.md"},
		{in: "/memories/x:.git", want: "/memories/x:.git"},
		{in: "/memories/.gitx", want: "/memories/.gitx"},
		{in: "/memories/gitmod~0", want: "/memories/gitmod~0"},
		{in: "/memories/gitmod~12", want: "/memories/gitmod~12"},
		{in: "/memories/.hidden", want: "/memories/.hidden"},
		{in: "/memories/...", want: "/memories/..."},
		{in: "/memories/..a", want: "/memories/..a"},
		{in: "/memories/a..", want: "/memories/a.."},
		{in: "/memories/a b", want: "/memories/a b"},
		{in: "/memories/日本語/メモ.md", want: "/memories/日本語/メモ.md"},
		{in: "/memories/100%", want: "/memories/100%"},
		{in: "/memories/%41%42", want: "/memories/%41%42"},
		{in: "/memories/%zz%2", want: "/memories/%zz%2"},
		{in: "/memories/" + long(255), want: "/memories/" + long(255)},
		{in: maxed, want: maxed},
		{in: maxed + "/", want: maxed},

		{in: "", kind: PathOutside, reason: reasonOutside},
		{in: "/", kind: PathOutside, reason: reasonOutside},
		{in: "memories/x", kind: PathOutside, reason: reasonOutside},
		{in: "/invalid/x", kind: PathOutside, reason: reasonOutside},
		{in: "/memoriesfoo/x", kind: PathOutside, reason: reasonOutside},
		{in: "/memoriesX", kind: PathOutside, reason: reasonOutside},
		{in: "/Memories/x", kind: PathOutside, reason: reasonOutside},
		{in: "//memories/x", kind: PathOutside, reason: reasonOutside},
		{in: " /memories", kind: PathOutside, reason: reasonOutside},
		{in: "/memories\\x", kind: PathOutside, reason: reasonOutside},
		{in: "/memories\x00", kind: PathOutside, reason: reasonOutside},
		{in: "/etc/../memories/x", kind: PathOutside, reason: reasonOutside},

		{in: "/memories/..", kind: PathEscape, reason: reasonDotDot},
		{in: "/memories/../", kind: PathEscape, reason: reasonDotDot},
		{in: "/memories/../etc/passwd", kind: PathEscape, reason: reasonDotDot},
		// A ".." or an encoding that would stay under /memories is refused
		// too, but the answer must not say it would leave: it would not.
		{in: "/memories/a/../inside.md", kind: PathInvalid, reason: reasonDotDot},
		{in: "/memories/a/../b", kind: PathInvalid, reason: reasonDotDot},
		{in: "/memories/a/..", kind: PathInvalid, reason: reasonDotDot},
		{in: "/memories/..\\etc", kind: PathEscape, reason: reasonDotDot},
		{in: "/memories/a\\..\\..\\b", kind: PathEscape, reason: reasonDotDot},
		{in: "/memories//..", kind: PathEscape, reason: reasonDotDot},
		{in: "/memories/%2e%2e/x", kind: PathEscape, reason: reasonEncoded},
		{in: "/memories/%2E%2E%2Fx", kind: PathEscape, reason: reasonEncoded},
		{in: "/memories/a%2fb", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/a%2Fb", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/a%5cb", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/a%5Cb", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/%2ehidden", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/%252e%252e/x", kind: PathEscape, reason: reasonEncoded},
		{in: "/memories/%252E", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/%25252e", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/%2525252F", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/%%32%65", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/%25%32%65", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/%u002e%u002e", kind: PathEscape, reason: reasonEncoded},
		{in: "/memories/%U002F", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/%c0%ae%c0%ae/x", kind: PathEscape, reason: reasonEncoded},
		{in: "/memories/%C0%AF", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/%c1%9c", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/%e0%80%ae", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/%f0%80%80%af", kind: PathInvalid, reason: reasonEncoded},
		{in: "/memories/\xc0\xae\xc0\xae", kind: PathEscape, reason: reasonEncoded},
		{in: "/memories/%2e%2e\x00", kind: PathEscape, reason: reasonEncoded},

		{in: "/memories//", kind: PathInvalid, reason: reasonEmpty},
		{in: "/memories//x", kind: PathInvalid, reason: reasonEmpty},
		{in: "/memories/a//b", kind: PathInvalid, reason: reasonEmpty},
		{in: "/memories/a//", kind: PathInvalid, reason: reasonEmpty},
		{in: "/memories/.", kind: PathInvalid, reason: reasonDot},
		{in: "/memories/./x", kind: PathInvalid, reason: reasonDot},
		{in: "/memories/a/./", kind: PathInvalid, reason: reasonDot},
		{in: "/memories/a\\b", kind: PathInvalid, reason: reasonBackslash},
		{in: "/memories/a\x00b", kind: PathInvalid, reason: reasonControl},
		{in: "/memories/a\x1bb", kind: PathInvalid, reason: reasonControl},
		{in: "/memories/a\nb", kind: PathInvalid, reason: reasonControl},
		{in: "/memories/a\tb", kind: PathInvalid, reason: reasonControl},
		{in: "/memories/a\x7fb", kind: PathInvalid, reason: reasonControl},
		{in: "/memories/a\u0085b", kind: PathInvalid, reason: reasonControl},
		{in: "/memories/\xff", kind: PathInvalid, reason: reasonUTF8},
		{in: "/memories/\xed\xa0\x80", kind: PathInvalid, reason: reasonUTF8},
		{in: "/memories/" + long(256), kind: PathInvalid, reason: reasonSegment},
		// Names git gives meaning to, in the spellings file systems fold into them.
		{in: "/memories/.git", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/a/.GIT/config", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/.git. ", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/GIT~1", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/.g\u200cit", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/\u200c.git", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/\ufeff.GitModules.", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/.git::$INDEX_ALLOCATION", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/.GIT . :x/y", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/GITMOD~1", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/gi7eba~9", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/GI7D29~1.", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/gitatt~2:s", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/.gitmodules", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/x/.gitattributes", kind: PathInvalid, reason: reasonReserved},
		{in: "/memories/.github/notes.md", want: "/memories/.github/notes.md"},
		{in: "/memories/.gitignore", want: "/memories/.gitignore"},
		{in: "/memories/my.git", want: "/memories/my.git"},
		{in: maxed + "a", kind: PathInvalid, reason: reasonTooLong},
		{in: "/memories/../" + long(5000), kind: PathInvalid, reason: reasonTooLong},
	}
	for _, tt := range tests {
		got, err := CleanPath(tt.in)
		if tt.kind == 0 {
			if err != nil || got != tt.want {
				t.Errorf("CleanPath(%q) = %q, %v, want %q, nil", tt.in, got, err, tt.want)
			}
			continue
		}
		var pe *PathError
		if !errors.As(err, &pe) {
			t.Errorf("CleanPath(%q) = %q, %v, want a *PathError", tt.in, got, err)
			continue
		}
		if got != "" || pe.Kind != tt.kind || pe.Reason != tt.reason || pe.Path != tt.in {
			t.Errorf("CleanPath(%q) = %q, %+v, want kind %d, reason %q", tt.in, got, *pe, tt.kind, tt.reason)
		}
	}
}

func TestPathErrorMessage(t *testing.T) {
	_, err := CleanPath("/memories/a\x00b")
	want := `vault: invalid path "/memories/a\x00b": contains a control character`
	if err == nil || err.Error() != want {
		t.Errorf("CleanPath error = %v, want %s", err, want)
	}
}

func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{
		"/memories", "/memories/", "/memories/a/b.md", "/memories/../x", "/memories/%2e%2e",
		"/memories/%252e", "/memories//x", "/memories/./x", "/memories/a\\b", "/memories/\x00",
		"/memoriesfoo", "/memories/\xff", "/memories/%c0%ae", "/memories/%%32%65",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := CleanPath(p)
		if err != nil {
			var pe *PathError
			if !errors.As(err, &pe) || pe.Path != p || pe.Kind < PathOutside || pe.Kind > PathInvalid || pe.Reason == "" {
				t.Fatalf("CleanPath(%q) error = %#v, want a *PathError for it", p, err)
			}
			return
		}
		again, err := CleanPath(got)
		if err != nil || again != got {
			t.Fatalf("CleanPath(%q) = %q, but CleanPath of that = %q, %v", p, got, again, err)
		}
		if got != p && got+"/" != p {
			t.Fatalf("CleanPath(%q) = %q: more than a trailing slash dropped", p, got)
		}
		if got != Root && !strings.HasPrefix(got, Root+"/") {
			t.Fatalf("CleanPath(%q) = %q: not under %s", p, got, Root)
		}
		if len(got) > maxPathLen || !utf8.ValidString(got) || strings.ContainsAny(got, "\\\x00") {
			t.Fatalf("CleanPath(%q) = %q: too long, invalid UTF-8, backslash or NUL", p, got)
		}
		for _, seg := range strings.Split(got, "/")[2:] {
			if seg == "" || seg == "." || seg == ".." || len(seg) > maxSegmentLen {
				t.Fatalf("CleanPath(%q) = %q: bad segment %q", p, got, seg)
			}
		}
		for d := got; ; d = percentDecode(d) {
			if lower := strings.ToLower(d); strings.Contains(lower, "%2e") || strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") {
				t.Fatalf("CleanPath(%q) = %q: holds an encoded dot, slash or backslash", p, got)
			}
			if percentDecode(d) == d {
				break
			}
		}
	})
}
