package gitlog

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// The reflog is checked: a line torn at the end by a crash is left out, a
// line that does not check anywhere else is damage, and a later version's
// reflog is refused and never written to.
func TestRefLogChecked(t *testing.T) {
	a, b := Hash{1}, Hash{2}
	when := time.Unix(1_800_000_000, 5)
	good := reflogMagic + reflogLine(RefMove{Old: ZeroHash, New: a, When: when}) + reflogLine(RefMove{Old: a, New: b, When: when.Add(time.Second)})
	moves, err := parseRefLog([]byte(good))
	if err != nil || len(moves) != 2 || moves[1].New != b || !moves[1].When.Equal(when.Add(time.Second)) {
		t.Fatalf("parseRefLog(good) = %+v, %v", moves, err)
	}
	if moves, err := parseRefLog([]byte(good + "0000 torn")); err != nil || len(moves) != 2 {
		t.Errorf("parseRefLog(torn tail) = %+v, %v; want the two whole lines", moves, err)
	}
	flipped := strings.Replace(good, b.String(), Hash{3}.String(), 1)
	if _, err := parseRefLog([]byte(flipped)); !errors.Is(err, ErrDamagedFile) {
		t.Errorf("parseRefLog(a changed line) = %v, want ErrDamagedFile", err)
	}
	if _, err := parseRefLog([]byte("memvault reflog v9\n")); !errors.Is(err, ErrNewerFormat) {
		t.Errorf("parseRefLog(v9) = %v, want ErrNewerFormat", err)
	}

	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SetClock(func() time.Time { return when })
	r.recordMove(Branch, ZeroHash, a, time.Time{})
	r.recordMove("refs/remotes/origin/main", ZeroHash, b, time.Time{}) // only main is recorded
	if moves, err := r.RefLog(); err != nil || len(moves) != 1 || moves[0].New != a || !moves[0].When.Equal(when) {
		t.Errorf("RefLog = %+v, %v; want the one move of main", moves, err)
	}
	newer := []byte("memvault reflog v9\nwhatever\n")
	if err := os.WriteFile(r.reflogPath(), newer, 0o600); err != nil {
		t.Fatal(err)
	}
	r.recordMove(Branch, a, b, time.Time{})
	if got, _ := os.ReadFile(r.reflogPath()); string(got) != string(newer) {
		t.Errorf("a later version's reflog was written to: %q", got)
	}
}
