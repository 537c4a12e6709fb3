package agenttest

import (
	"strings"
)

// Cases is the contract, case by case: every answer docs/memory-tool.md names,
// the order of its checks, and the decisions memvault made where it is silent.
// Each case assumes an empty vault with vault.DefaultLimits.
var Cases = join(
	inputCases(),
	parameterCases(),
	orderCases(),
	pathCases(),
	viewDirCases(),
	viewFileCases(),
	truncationCases(),
	createCases(),
	strReplaceCases(),
	insertCases(),
	deleteCases(),
	renameCases(),
)

func join(groups ...[]Case) []Case {
	var all []Case
	for _, g := range groups {
		all = append(all, g...)
	}
	return all
}

// fail is a case that must answer the error want and change nothing.
func fail(name string, setup []string, input, want string) Case {
	return Case{Name: name, Setup: setup, Input: input, Want: "Error: " + want, WantError: true}
}

// ok is a case that must answer want and change nothing: a view.
func ok(name string, setup []string, input, want string) Case {
	return Case{Name: name, Setup: setup, Input: input, Want: want}
}

// commit is a case that must answer want and make exactly one commit.
func commit(name string, setup []string, input, want string) Case {
	return Case{Name: name, Setup: setup, Input: input, Want: want, WantCommit: true}
}

func setup(inputs ...string) []string { return inputs }

const (
	root       = "/memories"
	limit      = 1 << 20 // vault.DefaultLimits.MaxFileSize
	viewLimit  = 16000   // vault.DefaultLimits.ViewLimit
	tenLines   = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten"
	threeLines = "a\nb\nc"
)

func inputCases() []Case {
	return []Case{
		fail("input/empty", nil, ``, "Invalid tool input: not valid JSON"),
		fail("input/truncated", nil, `{"command":"view","path":`, "Invalid tool input: not valid JSON"),
		fail("input/trailing-data", nil, `{"command":"view","path":"/memories"} {}`, "Invalid tool input: not valid JSON"),
		fail("input/single-quotes", nil, `{'command':'view'}`, "Invalid tool input: not valid JSON"),
		fail("input/array", nil, `[{"command":"view","path":"/memories"}]`, "Invalid tool input: expected a JSON object, got an array"),
		fail("input/string", nil, `"view"`, "Invalid tool input: expected a JSON object, got a string"),
		fail("input/number", nil, `42`, "Invalid tool input: expected a JSON object, got a number"),
		fail("input/null", nil, `null`, "Invalid tool input: expected a JSON object, got null"),
		fail("input/boolean", nil, `true`, "Invalid tool input: expected a JSON object, got a boolean"),
		ok("input/whitespace-around", nil, " \n\t{\"command\":\"view\",\"path\":\"/memories\"}\r\n", listing(root)),
		ok("input/escaped-key", nil, `{"comm\u0061nd":"view","path":"\/memories"}`, listing(root)),
		ok("input/extra-fields-ignored", nil,
			`{"command":"view","path":"/memories","file_text":5,"old_str":null,"insert_line":"x","extra":{}}`, listing(root)),
		fail("command/missing", nil, `{"path":"/memories"}`, "Unknown command: "),
		fail("command/empty-object", nil, `{}`, "Unknown command: "),
		fail("command/null", nil, `{"command":null,"path":"/memories"}`, "Unknown command: "),
		fail("command/empty", nil, `{"command":"","path":"/memories"}`, "Unknown command: "),
		fail("command/unknown", nil, `{"command":"list","path":"/memories"}`, "Unknown command: list"),
		fail("command/case", nil, `{"command":"View","path":"/memories"}`, "Unknown command: View"),
		fail("command/space", nil, `{"command":"view ","path":"/memories"}`, "Unknown command: view "),
		fail("command/number", nil, `{"command":5}`, "Unknown command: 5"),
		fail("command/array", nil, `{"command":["view"],"path":"/memories"}`, `Unknown command: ["view"]`),
	}
}

func parameterCases() []Case {
	bad := func(command, name, input string) Case {
		return fail("param/"+command+"/"+name, nil, input,
			"Missing or invalid parameter "+strings.SplitN(name, "-", 2)[0]+" for command "+command)
	}
	return []Case{
		bad("view", "path-missing", `{"command":"view"}`),
		bad("view", "path-null", `{"command":"view","path":null}`),
		bad("view", "path-number", `{"command":"view","path":1}`),
		bad("view", "path-array", `{"command":"view","path":["/memories"]}`),
		bad("view", "view_range-string", `{"command":"view","path":"/memories","view_range":"1,2"}`),
		bad("view", "view_range-object", `{"command":"view","path":"/memories","view_range":{}}`),
		bad("view", "view_range-string-element", `{"command":"view","path":"/memories","view_range":[1,"2"]}`),
		bad("view", "view_range-fraction", `{"command":"view","path":"/memories","view_range":[1.5,2]}`),
		bad("view", "view_range-null-element", `{"command":"view","path":"/memories","view_range":[null,2]}`),
		bad("view", "view_range-nested", `{"command":"view","path":"/memories","view_range":[[1],2]}`),
		ok("param/view/view_range-null", nil, `{"command":"view","path":"/memories","view_range":null}`, listing(root)),
		bad("create", "path-missing", `{"command":"create","file_text":"x"}`),
		bad("create", "file_text-missing", `{"command":"create","path":"/memories/a.md"}`),
		bad("create", "file_text-null", `{"command":"create","path":"/memories/a.md","file_text":null}`),
		bad("create", "file_text-number", `{"command":"create","path":"/memories/a.md","file_text":1}`),
		bad("str_replace", "path-missing", `{"command":"str_replace","old_str":"a","new_str":"b"}`),
		bad("str_replace", "old_str-missing", `{"command":"str_replace","path":"/memories/a.md","new_str":"b"}`),
		bad("str_replace", "old_str-number", `{"command":"str_replace","path":"/memories/a.md","old_str":1}`),
		bad("str_replace", "new_str-number", `{"command":"str_replace","path":"/memories/a.md","old_str":"a","new_str":1}`),
		bad("str_replace", "new_str-array", `{"command":"str_replace","path":"/memories/a.md","old_str":"a","new_str":["b"]}`),
		bad("insert", "path-missing", `{"command":"insert","insert_line":0,"insert_text":"x"}`),
		bad("insert", "insert_line-missing", `{"command":"insert","path":"/memories/a.md","insert_text":"x"}`),
		bad("insert", "insert_line-null", `{"command":"insert","path":"/memories/a.md","insert_line":null,"insert_text":"x"}`),
		bad("insert", "insert_line-string", `{"command":"insert","path":"/memories/a.md","insert_line":"1","insert_text":"x"}`),
		bad("insert", "insert_line-fraction", `{"command":"insert","path":"/memories/a.md","insert_line":1.5,"insert_text":"x"}`),
		bad("insert", "insert_line-boolean", `{"command":"insert","path":"/memories/a.md","insert_line":true,"insert_text":"x"}`),
		bad("insert", "insert_line-small-fraction", `{"command":"insert","path":"/memories/a.md","insert_line":1e-1,"insert_text":"x"}`),
		bad("insert", "insert_text-missing", `{"command":"insert","path":"/memories/a.md","insert_line":0}`),
		bad("insert", "insert_text-number", `{"command":"insert","path":"/memories/a.md","insert_line":0,"insert_text":0}`),
		bad("delete", "path-missing", `{"command":"delete"}`),
		bad("delete", "path-object", `{"command":"delete","path":{}}`),
		bad("rename", "old_path-missing", `{"command":"rename","new_path":"/memories/b.md"}`),
		bad("rename", "old_path-null", `{"command":"rename","old_path":null,"new_path":"/memories/b.md"}`),
		bad("rename", "new_path-missing", `{"command":"rename","old_path":"/memories/a.md"}`),
		bad("rename", "new_path-number", `{"command":"rename","old_path":"/memories/a.md","new_path":2}`),
	}
}

// orderCases pin the order of checks: (1) object, (2) command, (3) fields in
// order, (4) paths in order, (5) the command's own checks.
func orderCases() []Case {
	return []Case{
		fail("order/command-before-path", nil, `{"command":"nope","path":"/etc"}`, "Unknown command: nope"),
		fail("order/command-before-fields", nil, `{"command":"nope"}`, "Unknown command: nope"),
		fail("order/view_range-before-path", nil, `{"command":"view","path":"/etc","view_range":"x"}`,
			"Missing or invalid parameter view_range for command view"),
		fail("order/file_text-before-path", nil, `{"command":"create","path":"/etc/x"}`,
			"Missing or invalid parameter file_text for command create"),
		fail("order/path-field-first", nil, `{"command":"create","file_text":5}`,
			"Missing or invalid parameter path for command create"),
		fail("order/old_str-before-new_str", nil, `{"command":"str_replace","path":"/memories/a","new_str":1}`,
			"Missing or invalid parameter old_str for command str_replace"),
		fail("order/new_str-before-path", nil, `{"command":"str_replace","path":"/memories/../a","old_str":"a","new_str":1}`,
			"Missing or invalid parameter new_str for command str_replace"),
		fail("order/insert_line-before-insert_text", nil, `{"command":"insert","path":"/etc","insert_line":"1"}`,
			"Missing or invalid parameter insert_line for command insert"),
		fail("order/insert_text-before-path", nil, `{"command":"insert","path":"/etc","insert_line":1}`,
			"Missing or invalid parameter insert_text for command insert"),
		fail("order/new_path-field-before-old_path-check", nil, `{"command":"rename","old_path":"/etc"}`,
			"Missing or invalid parameter new_path for command rename"),
		fail("order/old_path-checked-first", nil, rename("/etc/a", "/memories/../b"),
			"Path must start with /memories, got: /etc/a"),
		fail("order/new_path-checked", nil, rename("/memories/a", "/memories/../b"),
			"Path /memories/../b would escape /memories directory"),
		fail("order/path-before-existence", nil, view("/memories/nope/../x"),
			`Invalid path /memories/nope/../x: ".." segment`),
		fail("order/path-before-root-delete", nil, del("/memories/.."),
			"Path /memories/.. would escape /memories directory"),
		fail("order/path-before-size", nil, create("/memories//big.txt", strings.Repeat("a", limit+1)),
			"Invalid path /memories//big.txt: empty segment"),
	}
}

func pathCases() []Case {
	outside := func(name, p string) Case {
		return fail("path/outside/"+name, nil, view(p), "Path must start with /memories, got: "+p)
	}
	escape := func(name, p string) Case {
		return fail("path/escape/"+name, nil, view(p), "Path "+p+" would escape /memories directory")
	}
	invalid := func(name, p, reason string) Case {
		return fail("path/invalid/"+name, nil, view(p), "Invalid path "+p+": "+reason)
	}
	seg255 := strings.Repeat("s", 255)
	// p4096 is a path of exactly 4096 bytes: 9 + 16×(1+254) + 1+6.
	p4096 := root + strings.Repeat("/"+strings.Repeat("p", 254), 16) + "/" + strings.Repeat("q", 6)
	return []Case{
		outside("empty", ""),
		outside("root-slash", "/"),
		outside("relative", "memories/x"),
		outside("other-dir", "/invalid/x"),
		outside("etc", "/etc/passwd"),
		outside("prefix-word", "/memoriesfoo/x"),
		outside("prefix-letter", "/memoriesX"),
		outside("case", "/Memories/x"),
		outside("double-slash-first", "//memories/x"),
		outside("backslash-after-root", `/memories\x`),
		outside("dotdot-before-root", "/etc/../memories/x"),
		escape("dotdot", "/memories/.."),
		escape("dotdot-slash", "/memories/../"),
		escape("dotdot-etc", "/memories/../etc/passwd"),
		invalid("dotdot-middle", "/memories/a/../b", `".." segment`),
		invalid("dotdot-last", "/memories/a/..", `".." segment`),
		escape("dotdot-backslash", `/memories/..\etc`),
		// A ".." that stays under /memories is refused as what it is: it
		// once answered "would escape", which it would not.
		invalid("dotdot-inside", "/memories/a/../inside.md", `".." segment`),
		escape("backslash-dotdot", `/memories/a\..\..\b`),
		escape("pct-2e", "/memories/%2e%2e/x"),
		escape("pct-2E-2F", "/memories/%2E%2E%2Fetc"),
		invalid("pct-2f", "/memories/a%2fb", "encoded dot, slash or backslash"),
		invalid("pct-5c", "/memories/a%5Cb", "encoded dot, slash or backslash"),
		invalid("pct-dot-name", "/memories/%2ebashrc", "encoded dot, slash or backslash"),
		escape("pct-double", "/memories/%252e%252e/x"),
		invalid("pct-triple", "/memories/%25252e", "encoded dot, slash or backslash"),
		invalid("pct-mixed", "/memories/%%32%65", "encoded dot, slash or backslash"),
		escape("pct-overlong", "/memories/%c0%ae%c0%ae/x"),
		invalid("empty-segment", "/memories//x", "empty segment"),
		invalid("empty-segment-root", "/memories//", "empty segment"),
		invalid("empty-segment-trailing", "/memories/a//", "empty segment"),
		invalid("dot-segment", "/memories/./x", `"." segment`),
		invalid("dot-last", "/memories/.", `"." segment`),
		invalid("backslash", `/memories/a\b`, "contains a backslash"),
		invalid("nul", "/memories/a\x00b", "contains a control character"),
		invalid("newline", "/memories/a\nb", "contains a control character"),
		invalid("escape-char", "/memories/\x1b[31m", "contains a control character"),
		invalid("del", "/memories/a\x7f", "contains a control character"),
		invalid("c1", "/memories/a\u0085", "contains a control character"),
		invalid("segment-256", "/memories/"+strings.Repeat("s", 256), "segment over 255 bytes"),
		invalid("git-reserved", "/memories/.git/config", "reserved name in git"),
		invalid("path-4097", p4096+"q", "path over 4096 bytes"),
		// JSON cannot carry invalid UTF-8 as a string; an unpaired surrogate escape
		// or a raw invalid byte is the nearest thing. The answer echoes U+FFFD.
		fail("path/invalid/lone-surrogate", nil, `{"command":"view","path":"/memories/\ud800"}`,
			"Invalid path /memories/\uFFFD: invalid UTF-8"),
		fail("path/invalid/lone-low-surrogate", nil, `{"command":"create","path":"/memories/a\udc00b","file_text":""}`,
			"Invalid path /memories/a\uFFFDb: invalid UTF-8"),
		fail("path/invalid/raw-byte", nil, "{\"command\":\"view\",\"path\":\"/memories/\xff\"}",
			"Invalid path /memories/\uFFFD: invalid UTF-8"),
		fail("path/outside/lone-surrogate", nil, `{"command":"view","path":"/\ud800/x"}`,
			"Path must start with /memories, got: /\uFFFD/x"),
		fail("path/escape/create", nil, create("/memories/a/../../etc/passwd", "x"),
			"Path /memories/a/../../etc/passwd would escape /memories directory"),
		fail("path/escape/delete", nil, del("/memories/%2e%2e"),
			"Path /memories/%2e%2e would escape /memories directory"),
		ok("path/trailing-slash-root", nil, view("/memories/"), listing(root)),
		ok("path/surrogate-pair", setup(create("/memories/\U0001F642.md", "smile")),
			`{"command":"view","path":"/memories/\ud83d\ude42.md"}`, fileView("/memories/\U0001F642.md", 1, "smile")),
		commit("path/segment-255", nil, create(root+"/"+seg255, "x"), "File created successfully at: "+root+"/"+seg255),
		commit("path/length-4096", nil, create(p4096, "x"), "File created successfully at: "+p4096),
		commit("path/length-4096-slash", nil, create(p4096+"/", "x"), "File created successfully at: "+p4096),
		commit("path/unicode", nil, create("/memories/日本語/メモ.md", "x"), "File created successfully at: /memories/日本語/メモ.md"),
		commit("path/triple-dot", nil, create("/memories/.../x", "x"), "File created successfully at: /memories/.../x"),
		commit("path/percent-literal", nil, create("/memories/100%/a%41", "x"), "File created successfully at: /memories/100%/a%41"),
		commit("path/spaces", nil, create("/memories/my notes/a b.md", "x"), "File created successfully at: /memories/my notes/a b.md"),
	}
}

func viewDirCases() []Case {
	tree := setup(
		create("/memories/a/b/c/d.txt", "d"),
		create("/memories/a/b/y.md", "yyy"),
		create("/memories/a/b/.k", "k"),
		create("/memories/a/x.txt", "xx"),
		create("/memories/a/.h.txt", "h"),
		create("/memories/a/node_modules/q.js", "q"),
		create("/memories/a-b.txt", "1"),
		create("/memories/B.md", "B"),
		create("/memories/z.md", ""),
		create("/memories/.hidden/h.txt", "h"),
		create("/memories/node_modules/m.js", "m"),
		create("/memories/only-hidden/.x", "x"),
	)
	sizes := setup(
		create("/memories/s0.txt", ""),
		create("/memories/s1023.txt", strings.Repeat("a", 1023)),
		create("/memories/s1024.txt", strings.Repeat("a", 1024)),
		create("/memories/s1025.txt", strings.Repeat("a", 1025)),
		create("/memories/s1280.txt", strings.Repeat("a", 1280)),
		create("/memories/s1536.txt", strings.Repeat("a", 1536)),
		create("/memories/s2048.txt", strings.Repeat("a", 2048)),
		create("/memories/s1048575.txt", strings.Repeat("a", limit-1)),
		create("/memories/s1048576.txt", strings.Repeat("a", limit)),
		create("/memories/u.txt", "é"),
	)
	return []Case{
		ok("view/dir/empty-root", nil, view(root), listing(root)),
		ok("view/dir/root", tree, view(root), listing(root,
			"1B\t/memories/B.md",
			"4K\t/memories/a/",
			"4K\t/memories/a/b/",
			"2B\t/memories/a/x.txt",
			"1B\t/memories/a-b.txt",
			"4K\t/memories/only-hidden/",
			"0B\t/memories/z.md",
		)),
		ok("view/dir/subdir-two-levels", tree, view("/memories/a"), listing("/memories/a",
			"4K\t/memories/a/b/",
			"4K\t/memories/a/b/c/",
			"3B\t/memories/a/b/y.md",
			"2B\t/memories/a/x.txt",
		)),
		ok("view/dir/trailing-slash", tree, view("/memories/a/b/"), listing("/memories/a/b",
			"4K\t/memories/a/b/c/",
			"1B\t/memories/a/b/c/d.txt",
			"3B\t/memories/a/b/y.md",
		)),
		ok("view/dir/hidden-dir-itself", tree, view("/memories/.hidden"), listing("/memories/.hidden",
			"1B\t/memories/.hidden/h.txt",
		)),
		ok("view/dir/node_modules-itself", tree, view("/memories/node_modules"), listing("/memories/node_modules",
			"1B\t/memories/node_modules/m.js",
		)),
		ok("view/dir/only-hidden", tree, view("/memories/only-hidden"), listing("/memories/only-hidden")),
		ok("view/dir/sizes", sizes, view(root), listing(root,
			"0B\t/memories/s0.txt",
			"1023B\t/memories/s1023.txt",
			"1K\t/memories/s1024.txt",
			"1.0K\t/memories/s1025.txt",
			"1024.0K\t/memories/s1048575.txt",
			"1M\t/memories/s1048576.txt",
			"1.3K\t/memories/s1280.txt",
			"1.5K\t/memories/s1536.txt",
			"2K\t/memories/s2048.txt",
			"2B\t/memories/u.txt",
		)),
		fail("view/missing", nil, view("/memories/nope.md"),
			"The path /memories/nope.md does not exist. Please provide a valid path."),
		fail("view/missing-dir", nil, view("/memories/nope/"),
			"The path /memories/nope does not exist. Please provide a valid path."),
		fail("view/under-a-file", setup(create("/memories/f.txt", "x")), view("/memories/f.txt/x"),
			"The path /memories/f.txt/x does not exist. Please provide a valid path."),
	}
}

func viewFileCases() []Case {
	five := setup(create("/memories/f.txt", "a\nb\nc\nd\ne"))
	f := "/memories/f.txt"
	empty := setup(create("/memories/e.txt", ""))
	header := func(p string) string { return "Here's the content of " + p + " with line numbers:\n" }
	return []Case{
		ok("view/file/simple", setup(create(f, threeLines)), view(f), fileView(f, 1, "a", "b", "c")),
		ok("view/file/trailing-slash", setup(create(f, threeLines)), view(f+"/"), fileView(f, 1, "a", "b", "c")),
		ok("view/file/trailing-newline", setup(create(f, "a\n")), view(f), fileView(f, 1, "a", "")),
		ok("view/file/empty", empty, view("/memories/e.txt"), fileView("/memories/e.txt", 1, "")),
		ok("view/file/crlf-kept", setup(create(f, "a\r\nb\r\n")), view(f), fileView(f, 1, "a\r", "b\r", "")),
		ok("view/file/unicode", setup(create(f, "héllo 世界\n\U0001F642\ttab")), view(f), fileView(f, 1, "héllo 世界", "\U0001F642\ttab")),
		ok("view/file/hidden", setup(create("/memories/.h", "x")), view("/memories/.h"), fileView("/memories/.h", 1, "x")),
		ok("view/file/number-width", setup(create(f, strings.Join(lines("l", 1, 12), "\n"))),
			viewRange(f, []int{9, 11}), fileView(f, 9, "l9", "l10", "l11")),
		ok("view/range/middle", five, viewRange(f, []int{2, 3}), fileView(f, 2, "b", "c")),
		ok("view/range/all", five, viewRange(f, []int{1, -1}), fileView(f, 1, "a", "b", "c", "d", "e")),
		ok("view/range/from-minus-one", five, viewRange(f, []int{2, -1}), fileView(f, 2, "b", "c", "d", "e")),
		ok("view/range/start-zero", five, viewRange(f, []int{0, 2}), fileView(f, 1, "a", "b")),
		ok("view/range/start-negative", five, viewRange(f, []int{-5, 1}), fileView(f, 1, "a")),
		ok("view/range/one-line", five, viewRange(f, []int{5, 5}), fileView(f, 5, "e")),
		ok("view/range/end-clipped", five, viewRange(f, []int{3, 100}), fileView(f, 3, "c", "d", "e")),
		ok("view/range/reversed", five, viewRange(f, []int{5, 3}), header(f)),
		ok("view/range/beyond-end", five, viewRange(f, []int{6, 7}), header(f)),
		ok("view/range/end-zero", five, viewRange(f, []int{1, 0}), header(f)),
		// A negative end below -1 counts from the end as a slice end does, as
		// both SDKs answer: [2, -2] of five lines is lines 2 and 3.
		ok("view/range/end-minus-two", five, viewRange(f, []int{2, -2}), fileView(f, 2, "b", "c")),
		ok("view/range/end-minus-three", five, viewRange(f, []int{1, -3}), fileView(f, 1, "a", "b")),
		ok("view/range/end-minus-four-start-zero", five, viewRange(f, []int{0, -4}), fileView(f, 1, "a")),
		ok("view/range/end-minus-all", five, viewRange(f, []int{1, -5}), header(f)),
		ok("view/range/end-before-start", five, viewRange(f, []int{4, -2}), header(f)),
		ok("view/range/end-minus-past-start", five, viewRange(f, []int{1, -9}), header(f)),
		ok("view/range/end-huge-negative", five, `{"command":"view","path":"/memories/f.txt","view_range":[1,-99999999999999999999]}`,
			header(f)),
		ok("view/range/trailing-newline-minus-two", setup(create(f, "a\nb\n")), viewRange(f, []int{1, -2}), fileView(f, 1, "a")),
		ok("view/range/one-number", five, viewRange(f, []int{4}), fileView(f, 1, "a", "b", "c", "d", "e")),
		ok("view/range/three-numbers", five, viewRange(f, []int{1, 2, 3}), fileView(f, 1, "a", "b", "c", "d", "e")),
		ok("view/range/empty-array", five, viewRange(f, []int{}), fileView(f, 1, "a", "b", "c", "d", "e")),
		ok("view/range/integral-notation", five, `{"command":"view","path":"/memories/f.txt","view_range":[2.0,30e-1]}`,
			fileView(f, 2, "b", "c")),
		ok("view/range/huge-numbers", five, `{"command":"view","path":"/memories/f.txt","view_range":[4,99999999999999999999]}`,
			fileView(f, 4, "d", "e")),
		ok("view/range/huge-start", five, `{"command":"view","path":"/memories/f.txt","view_range":[99999999999999999999,-1]}`,
			header(f)),
		ok("view/range/empty-file", empty, viewRange("/memories/e.txt", []int{1, -1}), fileView("/memories/e.txt", 1, "")),
		ok("view/range/empty-file-beyond", empty, viewRange("/memories/e.txt", []int{2, 3}), header("/memories/e.txt")),
		ok("view/range/on-directory-ignored", setup(create("/memories/d/x", "x")), viewRange("/memories/d", []int{1, 1}),
			listing("/memories/d", "1B\t/memories/d/x")),
	}
}

// truncationCases pin the view limit: it counts characters (code points) of the
// header and numbered lines joined by "\n"; the notice after the cut is not
// counted; only whole lines are kept.
func truncationCases() []Case {
	const p = "/memories/long.txt"
	header := "Here's the content of " + p + " with line numbers:" // 59 characters
	notice := "\n[Output truncated at 16000 characters. Use view_range to see more.]"
	// Each line of 93 characters shows as "\n" + 6 digits + tab + 93 = 101 characters.
	fit := (viewLimit - len(header)) / 101 // 157 lines: 59 + 157×101 = 15916
	ascii := lines93("x", 200)
	wide := lines93("é", 200) // 2 bytes a character: a byte count would keep fewer lines
	// 157 whole lines leave 84 characters: "\n" + "   158\t" + 76 fills exactly 16000.
	exact := append(ascii[:fit:fit], strings.Repeat("y", 76))
	over := append(ascii[:fit:fit], strings.Repeat("y", 77))
	const many = "/memories/many.txt"
	manyFit := (viewLimit - len("Here's the content of "+many+" with line numbers:")) / 8 // 1992 empty lines
	return []Case{
		ok("view/truncate/ascii", setup(create(p, strings.Join(ascii, "\n"))), view(p),
			fileView(p, 1, ascii[:fit]...)+notice),
		ok("view/truncate/counts-characters", setup(create(p, strings.Join(wide, "\n"))), view(p),
			fileView(p, 1, wide[:fit]...)+notice),
		ok("view/truncate/exactly-at-limit", setup(create(p, strings.Join(exact, "\n"))), view(p),
			fileView(p, 1, exact...)),
		ok("view/truncate/one-over-limit", setup(create(p, strings.Join(over, "\n"))), view(p),
			fileView(p, 1, ascii[:fit]...)+notice),
		ok("view/truncate/with-range", setup(create(p, strings.Join(ascii, "\n"))), viewRange(p, []int{101, -1}),
			fileView(p, 101, ascii[100:]...)),
		ok("view/truncate/no-line-fits", setup(create(p, strings.Repeat("z", 20000))), view(p),
			header+notice),
		ok("view/lines/999999", setup(create(many, strings.Repeat("\n", 999_998))), view(many),
			fileView(many, 1, make([]string, manyFit)...)+notice),
		fail("view/lines/1000000", setup(create(many, strings.Repeat("\n", 999_999))), view(many),
			"File /memories/many.txt exceeds maximum line limit of 999,999 lines."),
	}
}

func lines93(char string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat(char, 93)
	}
	return out
}

func createCases() []Case {
	f := setup(create("/memories/f.txt", "x"))
	return []Case{
		commit("create/ok", nil, create("/memories/notes.md", "hello"), "File created successfully at: /memories/notes.md"),
		ok("create/content", setup(create("/memories/notes.md", "hello\nworld\n")), view("/memories/notes.md"),
			fileView("/memories/notes.md", 1, "hello", "world", "")),
		commit("create/empty", nil, create("/memories/e.md", ""), "File created successfully at: /memories/e.md"),
		commit("create/nested", nil, create("/memories/a/b/c.md", "x"), "File created successfully at: /memories/a/b/c.md"),
		ok("create/nested-dirs-exist", setup(create("/memories/a/b/c.md", "x")), view(root),
			listing(root, "4K\t/memories/a/", "4K\t/memories/a/b/")),
		commit("create/trailing-slash", nil, create("/memories/n.md/", "x"), "File created successfully at: /memories/n.md"),
		commit("create/hidden", nil, create("/memories/.secret", "x"), "File created successfully at: /memories/.secret"),
		ok("create/hidden-not-listed", setup(create("/memories/.secret", "x")), view(root), listing(root)),
		commit("create/at-limit", nil, create("/memories/big.txt", strings.Repeat("a", limit)),
			"File created successfully at: /memories/big.txt"),
		commit("create/special-chars", nil, create("/memories/s.md", "$& $1 `x` \\ \"q\" <b>&amp;\u2028"),
			"File created successfully at: /memories/s.md"),
		ok("create/special-chars-kept", setup(create("/memories/s.md", "$& $1 `x` \\ \"q\" <b>&amp;\u2028")),
			view("/memories/s.md"), fileView("/memories/s.md", 1, "$& $1 `x` \\ \"q\" <b>&amp;\u2028")),
		fail("create/exists-file", f, create("/memories/f.txt", "y"), "File /memories/f.txt already exists"),
		ok("create/exists-file-unchanged", setup(create("/memories/f.txt", "x"), create("/memories/g.txt", "y")),
			view("/memories/f.txt"), fileView("/memories/f.txt", 1, "x")),
		fail("create/exists-dir", setup(create("/memories/d/x", "x")), create("/memories/d", "y"), "File /memories/d already exists"),
		fail("create/exists-root", nil, create("/memories", "y"), "File /memories already exists"),
		fail("create/exists-root-slash", nil, create("/memories/", "y"), "File /memories already exists"),
		fail("create/ancestor-file", f, create("/memories/f.txt/x", "y"), "The path /memories/f.txt is not a directory"),
		fail("create/ancestor-file-deep", f, create("/memories/f.txt/y/z.md", "y"), "The path /memories/f.txt is not a directory"),
		fail("create/too-large", nil, create("/memories/big.txt", strings.Repeat("a", limit+1)),
			"File /memories/big.txt would be 1048577 bytes, over the limit of 1048576 bytes"),
		fail("create/too-large-counts-bytes", nil, create("/memories/big.txt", strings.Repeat("é", limit/2+1)),
			"File /memories/big.txt would be 1048578 bytes, over the limit of 1048576 bytes"),
		fail("create/exists-before-size", f, create("/memories/f.txt", strings.Repeat("a", limit+1)),
			"File /memories/f.txt already exists"),
		fail("create/ancestor-before-size", f, create("/memories/f.txt/x", strings.Repeat("a", limit+1)),
			"The path /memories/f.txt is not a directory"),
		fail("create/exists-before-ancestor", setup(create("/memories/d/x", "x")), create("/memories/d/x", "y"),
			"File /memories/d/x already exists"),
	}
}

func strReplaceCases() []Case {
	const f = "/memories/f.md"
	ten := setup(create(f, tenLines))
	return []Case{
		fail("str_replace/missing", nil, strReplace("/memories/nope.md", "a", "b"),
			"The path /memories/nope.md does not exist. Please provide a valid path."),
		fail("str_replace/under-a-file", ten, strReplace(f+"/x", "a", "b"),
			"The path /memories/f.md/x does not exist. Please provide a valid path."),
		fail("str_replace/directory", setup(create("/memories/d/x.md", "a")), strReplace("/memories/d", "a", "b"),
			"The path /memories/d is not a file."),
		fail("str_replace/root", nil, strReplace(root, "a", "b"), "The path /memories is not a file."),
		fail("str_replace/none", ten, strReplace(f, "zzz", "b"),
			"No replacement was performed, old_str `zzz` did not appear verbatim in /memories/f.md."),
		fail("str_replace/none-case", ten, strReplace(f, "One", "b"),
			"No replacement was performed, old_str `One` did not appear verbatim in /memories/f.md."),
		fail("str_replace/none-backticks", ten, strReplace(f, "`one`", "b"),
			"No replacement was performed, old_str ``one`` did not appear verbatim in /memories/f.md."),
		fail("str_replace/multiple", setup(create(f, "x\nx\nx")), strReplace(f, "x", "y"),
			"No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 2, 3. Please ensure it is unique"),
		fail("str_replace/multiple-same-line", setup(create(f, "xx\ny\nx")), strReplace(f, "x", "y"),
			"No replacement was performed. Multiple occurrences of old_str `x` in lines: 1, 3. Please ensure it is unique"),
		fail("str_replace/multiple-one-line", setup(create(f, "aaaa")), strReplace(f, "aa", "b"),
			"No replacement was performed. Multiple occurrences of old_str `aa` in lines: 1. Please ensure it is unique"),
		fail("str_replace/multiple-multiline", setup(create(f, "a\nb\na\nb")), strReplace(f, "a\nb", "c"),
			"No replacement was performed. Multiple occurrences of old_str `a\nb` in lines: 1, 3. Please ensure it is unique"),
		fail("str_replace/empty-old_str", ten, strReplace(f, "", "b"),
			"No replacement was performed, old_str must not be empty."),
		fail("str_replace/empty-old_str-missing-file", nil, strReplace(f, "", "b"),
			"The path /memories/f.md does not exist. Please provide a valid path."),
		fail("str_replace/empty-old_str-directory", setup(create("/memories/d/x", "a")), strReplace("/memories/d", "", "b"),
			"The path /memories/d is not a file."),
		commit("str_replace/middle", ten, strReplace(f, "five", "FIVE"),
			edited(3, "three", "four", "FIVE", "six", "seven")),
		commit("str_replace/first-line", ten, strReplace(f, "one", "ONE"), edited(1, "ONE", "two", "three")),
		commit("str_replace/second-line", ten, strReplace(f, "two", "TWO"), edited(1, "one", "TWO", "three", "four")),
		commit("str_replace/last-line", ten, strReplace(f, "ten", "TEN"), edited(8, "eight", "nine", "TEN")),
		commit("str_replace/overlapping-counts-once", setup(create(f, "aaa")), strReplace(f, "aa", "b"), edited(1, "ba")),
		commit("str_replace/multiline-old", ten, strReplace(f, "two\nthree", "2\n3"), edited(1, "one", "2", "3", "four")),
		commit("str_replace/starts-mid-line", ten, strReplace(f, "ree\nfo", "REE\nFO"),
			edited(1, "one", "two", "thREE", "FOur", "five")),
		commit("str_replace/adds-lines", ten, strReplace(f, "five", "5a\n5b\n5c"),
			edited(3, "three", "four", "5a", "5b", "5c")),
		commit("str_replace/new_str-missing", ten, `{"command":"str_replace","path":"/memories/f.md","old_str":"three\n"}`,
			edited(1, "one", "two", "four", "five", "six")),
		commit("str_replace/new_str-null", ten, `{"command":"str_replace","path":"/memories/f.md","old_str":"three\n","new_str":null}`,
			edited(1, "one", "two", "four", "five", "six")),
		commit("str_replace/new_str-empty", ten, strReplace(f, "ten", ""), edited(8, "eight", "nine", "")),
		commit("str_replace/dollar-literal", setup(create(f, "price: X")), strReplace(f, "X", "$& $1 $$ $' $`"),
			edited(1, "price: $& $1 $$ $' $`")),
		commit("str_replace/unicode", setup(create(f, "héllo wörld")), strReplace(f, "wörld", "世界"), edited(1, "héllo 世界")),
		commit("str_replace/crlf", setup(create(f, "a\r\nb\r\n")), strReplace(f, "b\r", "B\r"), edited(1, "a\r", "B\r", "")),
		commit("str_replace/same-text", ten, strReplace(f, "six", "six"), edited(4, "four", "five", "six", "seven", "eight")),
		commit("str_replace/hidden-file", setup(create("/memories/.h", "a")), strReplace("/memories/.h", "a", "b"), edited(1, "b")),
		commit("str_replace/trailing-slash", setup(create(f, "a")), strReplace(f+"/", "a", "b"), edited(1, "b")),
		ok("str_replace/result", setup(create(f, tenLines), strReplace(f, "two\nthree", "2\n3")), viewRange(f, []int{1, 4}),
			fileView(f, 1, "one", "2", "3", "four")),
		fail("str_replace/too-large", setup(create(f, "X"+strings.Repeat("a", limit-1))), strReplace(f, "X", "YY"),
			"File /memories/f.md would be 1048577 bytes, over the limit of 1048576 bytes"),
	}
}

func insertCases() []Case {
	const f = "/memories/f.txt"
	three := setup(create(f, threeLines))
	done := "The file " + f + " has been edited."
	after := func(name string, base string, ins string, want ...string) Case {
		return ok("insert/result/"+name, setup(create(f, base), ins), view(f), fileView(f, 1, want...))
	}
	return []Case{
		fail("insert/missing", nil, insert("/memories/nope.txt", 0, "x"),
			"The path /memories/nope.txt does not exist. Please provide a valid path."),
		fail("insert/directory", setup(create("/memories/d/x", "a")), insert("/memories/d", 0, "x"),
			"The path /memories/d is not a file."),
		fail("insert/root", nil, insert(root, 0, "x"), "The path /memories is not a file."),
		fail("insert/missing-before-range", nil, insert("/memories/nope.txt", 99, "x"),
			"The path /memories/nope.txt does not exist. Please provide a valid path."),
		fail("insert/line-too-big", three, insert(f, 4, "x"),
			"Invalid `insert_line` parameter: 4. It should be within the range of lines of the file: [0, 3]"),
		fail("insert/line-negative", three, insert(f, -1, "x"),
			"Invalid `insert_line` parameter: -1. It should be within the range of lines of the file: [0, 3]"),
		fail("insert/line-huge", three, `{"command":"insert","path":"/memories/f.txt","insert_line":99999999999999999999,"insert_text":"x"}`,
			"Invalid `insert_line` parameter: 99999999999999999999. It should be within the range of lines of the file: [0, 3]"),
		fail("insert/line-integral-notation-echo", three, `{"command":"insert","path":"/memories/f.txt","insert_line":5.0,"insert_text":"x"}`,
			"Invalid `insert_line` parameter: 5. It should be within the range of lines of the file: [0, 3]"),
		fail("insert/empty-file-range", setup(create(f, "")), insert(f, 2, "x"),
			"Invalid `insert_line` parameter: 2. It should be within the range of lines of the file: [0, 1]"),
		fail("insert/too-large", setup(create(f, strings.Repeat("a", limit-1))), insert(f, 0, "x"),
			"File /memories/f.txt would be 1048577 bytes, over the limit of 1048576 bytes"),
		commit("insert/ok", three, insert(f, 1, "x"), done),
		commit("insert/integral-line", three, `{"command":"insert","path":"/memories/f.txt","insert_line":1.0,"insert_text":"x"}`, done),
		commit("insert/trailing-slash", three, insert(f+"/", 3, "x"), done),
		after("start", threeLines, insert(f, 0, "x"), "x", "a", "b", "c"),
		after("middle", threeLines, insert(f, 1, "x"), "a", "x", "b", "c"),
		after("end", threeLines, insert(f, 3, "x"), "a", "b", "c", "x"),
		after("exponent-line", threeLines, `{"command":"insert","path":"/memories/f.txt","insert_line":2e0,"insert_text":"x"}`,
			"a", "b", "x", "c"),
		after("strips-one-newline", threeLines, insert(f, 1, "x\n"), "a", "x", "b", "c"),
		after("strips-only-one-newline", threeLines, insert(f, 1, "x\n\n"), "a", "x", "", "b", "c"),
		after("keeps-cr", threeLines, insert(f, 1, "x\r\n"), "a", "x\r", "b", "c"),
		after("empty-text", threeLines, insert(f, 1, ""), "a", "", "b", "c"),
		after("only-newline", threeLines, insert(f, 1, "\n"), "a", "", "b", "c"),
		after("multiline", threeLines, insert(f, 1, "x\ny"), "a", "x", "y", "b", "c"),
		after("empty-file-start", "", insert(f, 0, "x"), "x", ""),
		after("empty-file-end", "", insert(f, 1, "x"), "", "x"),
		after("after-trailing-newline", "a\n", insert(f, 2, "b"), "a", "", "b"),
		after("before-trailing-newline", "a\n", insert(f, 1, "b"), "a", "b", ""),
		after("unicode", "é", insert(f, 1, "世界"), "é", "世界"),
	}
}

func deleteCases() []Case {
	tree := setup(
		create("/memories/d/a.md", "a"),
		create("/memories/d/e/b.md", "b"),
		create("/memories/keep.md", "k"),
	)
	return []Case{
		fail("delete/root", nil, del(root), "Cannot delete the /memories directory itself"),
		fail("delete/root-slash", nil, del("/memories/"), "Cannot delete the /memories directory itself"),
		fail("delete/root-with-files", tree, del(root), "Cannot delete the /memories directory itself"),
		fail("delete/missing", nil, del("/memories/nope.md"), "The path /memories/nope.md does not exist"),
		fail("delete/under-a-file", tree, del("/memories/keep.md/x"), "The path /memories/keep.md/x does not exist"),
		commit("delete/file", tree, del("/memories/keep.md"), "Successfully deleted /memories/keep.md"),
		commit("delete/dir", tree, del("/memories/d"), "Successfully deleted /memories/d"),
		commit("delete/trailing-slash", tree, del("/memories/d/"), "Successfully deleted /memories/d"),
		commit("delete/hidden", setup(create("/memories/.h", "x")), del("/memories/.h"), "Successfully deleted /memories/.h"),
		ok("delete/file-gone", setup(append(tree, del("/memories/keep.md"))...), view(root),
			listing(root, "4K\t/memories/d/", "1B\t/memories/d/a.md", "4K\t/memories/d/e/")),
		ok("delete/dir-gone", setup(append(tree, del("/memories/d"))...), view(root),
			listing(root, "1B\t/memories/keep.md")),
		fail("delete/dir-contents-gone", setup(append(tree, del("/memories/d"))...), view("/memories/d/e/b.md"),
			"The path /memories/d/e/b.md does not exist. Please provide a valid path."),
		fail("delete/empty-parent-gone", setup(create("/memories/p/only.md", "x"), del("/memories/p/only.md")), view("/memories/p"),
			"The path /memories/p does not exist. Please provide a valid path."),
		fail("delete/twice", setup(create("/memories/x", "x"), del("/memories/x")), del("/memories/x"),
			"The path /memories/x does not exist"),
	}
}

func renameCases() []Case {
	two := setup(create("/memories/a.md", "a"), create("/memories/b.md", "b"))
	dir := setup(create("/memories/d/x.md", "x"), create("/memories/d/s/y.md", "y"), create("/memories/f.txt", "f"))
	return []Case{
		fail("rename/root", nil, rename(root, "/memories/x"), "Cannot rename the /memories directory itself"),
		fail("rename/root-slash", nil, rename("/memories/", "/memories/x"), "Cannot rename the /memories directory itself"),
		fail("rename/root-before-destination", two, rename(root, "/memories/a.md"), "Cannot rename the /memories directory itself"),
		fail("rename/destination-exists", two, rename("/memories/a.md", "/memories/b.md"), "The destination /memories/b.md already exists"),
		fail("rename/destination-dir-exists", dir, rename("/memories/f.txt", "/memories/d"), "The destination /memories/d already exists"),
		fail("rename/destination-root", two, rename("/memories/a.md", root), "The destination /memories already exists"),
		fail("rename/same-path", two, rename("/memories/a.md", "/memories/a.md"), "The destination /memories/a.md already exists"),
		fail("rename/destination-before-missing", two, rename("/memories/nope.md", "/memories/b.md"),
			"The destination /memories/b.md already exists"),
		fail("rename/missing", nil, rename("/memories/nope.md", "/memories/x.md"), "The path /memories/nope.md does not exist"),
		fail("rename/missing-before-into-itself", nil, rename("/memories/nope", "/memories/nope/x"), "The path /memories/nope does not exist"),
		fail("rename/into-itself", dir, rename("/memories/d", "/memories/d/s/t"), "Cannot move /memories/d into itself"),
		fail("rename/file-into-itself", dir, rename("/memories/f.txt", "/memories/f.txt/x"), "Cannot move /memories/f.txt into itself"),
		fail("rename/ancestor-file", dir, rename("/memories/d/x.md", "/memories/f.txt/x.md"), "The path /memories/f.txt is not a directory"),
		fail("rename/ancestor-file-deep", dir, rename("/memories/d", "/memories/f.txt/a/b"), "The path /memories/f.txt is not a directory"),
		commit("rename/file", two, rename("/memories/a.md", "/memories/c.md"), "Successfully renamed /memories/a.md to /memories/c.md"),
		commit("rename/new-parents", two, rename("/memories/a.md", "/memories/x/y/a.md"),
			"Successfully renamed /memories/a.md to /memories/x/y/a.md"),
		commit("rename/dir", dir, rename("/memories/d", "/memories/e"), "Successfully renamed /memories/d to /memories/e"),
		commit("rename/sibling-prefix", dir, rename("/memories/d", "/memories/d2"), "Successfully renamed /memories/d to /memories/d2"),
		commit("rename/out-of-dir", dir, rename("/memories/d/s", "/memories/s"), "Successfully renamed /memories/d/s to /memories/s"),
		commit("rename/trailing-slashes", dir, rename("/memories/d/", "/memories/e/"), "Successfully renamed /memories/d to /memories/e"),
		commit("rename/to-hidden", two, rename("/memories/a.md", "/memories/.a.md"), "Successfully renamed /memories/a.md to /memories/.a.md"),
		ok("rename/file-result", setup(append(two, rename("/memories/a.md", "/memories/x/y/a.md"))...), view(root),
			listing(root, "1B\t/memories/b.md", "4K\t/memories/x/", "4K\t/memories/x/y/")),
		ok("rename/file-content-kept", setup(append(two, rename("/memories/a.md", "/memories/c.md"))...), view("/memories/c.md"),
			fileView("/memories/c.md", 1, "a")),
		fail("rename/old-gone", setup(append(two, rename("/memories/a.md", "/memories/c.md"))...), view("/memories/a.md"),
			"The path /memories/a.md does not exist. Please provide a valid path."),
		ok("rename/dir-result", setup(append(dir, rename("/memories/d", "/memories/e"))...), view(root),
			listing(root, "4K\t/memories/e/", "4K\t/memories/e/s/", "1B\t/memories/e/x.md", "1B\t/memories/f.txt")),
		ok("rename/emptied-dir-gone", setup(append(dir, rename("/memories/d/s/y.md", "/memories/y.md"))...), view("/memories/d"),
			listing("/memories/d", "1B\t/memories/d/x.md")),
	}
}
