package main

import (
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/vault"
)

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	day := func(y, m, d, h, min int) time.Time { return time.Date(y, time.Month(m), d, h, min, 0, 0, time.Local) }
	for in, want := range map[string]time.Time{
		"":                     {},
		"2025-06-01":           day(2025, 6, 1, 0, 0),
		"2025-06-01 14:30":     day(2025, 6, 1, 14, 30),
		"2025-06-01T14:30":     day(2025, 6, 1, 14, 30),
		"2025-06-01T14:30:00Z": time.Date(2025, 6, 1, 14, 30, 0, 0, time.UTC),
		"90m":                  now.Add(-90 * time.Minute),
		"3d":                   now.Add(-72 * time.Hour),
		"2w":                   now.Add(-14 * 24 * time.Hour),
	} {
		if got, err := parseSince(in, now); err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"yesterday", "-3d", "3x", "2025-13-01", "d"} {
		if _, err := parseSince(in, now); err == nil {
			t.Errorf("parseSince(%q) succeeded, want an error", in)
		}
	}
}

func TestWriteDiffsColours(t *testing.T) {
	files := []vault.FileChange{
		{Path: "/memories/a", Status: vault.Modified, Diff: "--- /memories/a\n+++ /memories/a\n@@ -1 +1 @@\n-old\n+new\n"},
		{Path: "/memories/b", NewPath: "/memories/c", Status: vault.Renamed},
	}
	var plain, colour strings.Builder
	writeDiffs(&plain, files, styles{})
	writeDiffs(&colour, files, styles{on: true})
	want := "--- /memories/a\n+++ /memories/a\n@@ -1 +1 @@\n-old\n+new\nrename from /memories/b\nrename to /memories/c\n"
	if plain.String() != want {
		t.Errorf("plain diff =\n%q\nwant\n%q", plain.String(), want)
	}
	for _, s := range []string{"\x1b[31m-old\x1b[0m", "\x1b[32m+new\x1b[0m", "\x1b[36m@@ -1 +1 @@\x1b[0m", "\x1b[1m--- /memories/a\x1b[0m"} {
		if !strings.Contains(colour.String(), s) {
			t.Errorf("coloured diff %q lacks %q", colour.String(), s)
		}
	}
}
