package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// styles colours human-readable output, mildly, and only on a terminal: a pipe, a
// file, NO_COLOR or TERM=dumb gets plain text.
type styles struct{ on bool }

// stylesFor returns the styles fit for writing to w.
func stylesFor(w io.Writer) styles {
	return styles{on: os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && isTerminal(w)}
}

// isTerminal tells whether f is a terminal. (Not any character device:
// /dev/null is one.)
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

func (s styles) paint(code, text string) string {
	if !s.on || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s styles) bold(t string) string   { return s.paint("1", t) }
func (s styles) dim(t string) string    { return s.paint("2", t) }
func (s styles) red(t string) string    { return s.paint("31", t) }
func (s styles) green(t string) string  { return s.paint("32", t) }
func (s styles) yellow(t string) string { return s.paint("33", t) }
func (s styles) cyan(t string) string   { return s.paint("36", t) }
