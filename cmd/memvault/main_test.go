package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the testscript files' expected output")

// TestMain lets the test binary be the memvault command: testscript runs it under the
// name memvault, and TestNoPlaintextAtRest does the same through a symlink.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"memvault": mainWithTestHooks})
}

// TestScripts runs the stories in testdata/*.txtar.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata",
		UpdateScripts: *update,
		// [fuse]: this machine can mount a vault (/dev/fuse is there).
		// [race]: the race detector is on, and every command is slow.
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "fuse":
				_, err := os.Stat("/dev/fuse")
				return err == nil, nil
			case "race":
				return raceEnabled, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":  cmdExits,
			"answer": cmdAnswer,
			"perm":   cmdPerm,
			"glob":   cmdGlob,
			"grab":   cmdGrab,
		},
	})
}

// cmdExits runs a command and checks its exit status: exits STATUS CMD [ARGS...].
// Its stdout and stderr are kept for stdout, stderr and answer.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits STATUS CMD [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: status %q: %v", args[0], err)
	}
	got := 0
	var exitErr *exec.ExitError
	if err := ts.Exec(args[1], args[2:]...); errors.As(err, &exitErr) {
		got = exitErr.ExitCode()
	} else if err != nil {
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// cmdAnswer checks that stdout is exactly FILE's content without its final newline,
// since a tool answer has none and a txtar file always ends with one: answer FILE.
func cmdAnswer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: answer FILE")
	}
	want := strings.TrimSuffix(ts.ReadFile(args[0]), "\n")
	if got := ts.ReadFile("stdout"); got != want {
		ts.Fatalf("stdout is\n%q\nwant\n%q", got, want)
	}
}

// cmdPerm checks a file's permission bits: perm MODE FILE, MODE in octal.
func cmdPerm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: perm MODE FILE")
	}
	want, err := strconv.ParseUint(args[0], 8, 32)
	if err != nil {
		ts.Fatalf("perm: mode %q: %v", args[0], err)
	}
	fi, err := os.Stat(ts.MkAbs(args[1]))
	ts.Check(err)
	if got := fi.Mode().Perm(); got != os.FileMode(want) {
		ts.Fatalf("%s has mode %#o, want %#o", args[1], got, want)
	}
}

// cmdGlob checks that some file name matches a pattern: glob PATTERN;
// with !, that none does.
func cmdGlob(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: [!] glob PATTERN")
	}
	matches, err := filepath.Glob(ts.MkAbs(args[0]))
	ts.Check(err)
	switch {
	case neg && len(matches) > 0:
		ts.Fatalf("%s matches %q", args[0], matches)
	case !neg && len(matches) == 0:
		ts.Fatalf("%s matches nothing", args[0])
	}
}

// cmdGrab sets the environment variable NAME to what the first group of the
// regular expression matches in the last command's stdout: grab NAME REGEXP.
// A story passes what one command printed to the next, as a person copies it.
func cmdGrab(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: grab NAME REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	m := re.FindStringSubmatch(ts.ReadFile("stdout"))
	if len(m) < 2 {
		ts.Fatalf("grab: %q matches nothing in stdout", args[1])
	}
	ts.Setenv(args[0], m[1])
}
