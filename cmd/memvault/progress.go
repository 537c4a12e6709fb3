package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progressBar draws re-encryption progress on a terminal, at most ten times a
// second; elsewhere it draws nothing.
type progressBar struct {
	label string // what is being done: "re-encrypting" unless set
	unit  string // what is counted: "files" unless set
	w     io.Writer
	on    bool
	last  time.Time
	drawn bool
}

func newProgressBar(w io.Writer) *progressBar {
	return &progressBar{label: "re-encrypting", unit: "files", w: w, on: os.Getenv("TERM") != "dumb" && isTerminal(w)}
}

func (b *progressBar) update(done, total int) {
	if !b.on || total == 0 || (done < total && time.Since(b.last) < 100*time.Millisecond) {
		return
	}
	b.last = time.Now()
	const width = 30
	fill := width * done / total
	fmt.Fprintf(b.w, "\r%s [%s%s] %d/%d %s", b.label, strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total, b.unit)
	b.drawn = true
}

// done ends the bar's line; once is enough, whatever the number of calls.
func (b *progressBar) done() {
	if b.drawn {
		fmt.Fprintln(b.w)
		b.drawn = false
	}
}
