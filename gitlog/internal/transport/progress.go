package transport

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"time"
)

// progressLines keeps the progress of one transfer in lines: its meters and the
// server's own messages (which go-git passes on as they come, between pack
// data) write to one terminal, each redrawing its own line with carriage
// returns. A source that writes while another's line is open ends that line
// first, and end ends the last one, so that no message (the next phase, the
// server's "Total ...", an error) is written onto the end of another's line.
type progressLines struct {
	mu   sync.Mutex
	w    io.Writer
	open *progressSource // whose line is open: the last byte it wrote ended none
}

// progressSource is one writer of progressLines.
type progressSource struct{ l *progressLines }

// newProgressLines starts the progress of a transfer to w; nil for none.
func newProgressLines(w io.Writer) *progressLines {
	if w == nil {
		return nil
	}
	return &progressLines{w: w}
}

// source returns a new writer of l's lines, or nil (no progress) if l is nil.
func (l *progressLines) source() io.Writer {
	if l == nil {
		return nil
	}
	return &progressSource{l}
}

func (s *progressSource) Write(p []byte) (int, error) {
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	if l.open != nil && l.open != s {
		if _, err := io.WriteString(l.w, "\n"); err != nil {
			return 0, err
		}
		l.open = nil
	}
	n, err := l.w.Write(p)
	if n > 0 {
		l.open = nil
		if p[n-1] != '\n' {
			l.open = s
		}
	}
	return n, err
}

// end ends the open line, if any: the transfer is over, whether it succeeded
// or not.
func (l *progressLines) end() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open != nil {
		io.WriteString(l.w, "\n")
		l.open = nil
	}
}

// meter counts the bytes of a pack going through it and, when w is not nil,
// reports them with the pack's object count (read from its header) on one line
// redrawn at most ten times a second, as git does: "Receiving 5000 objects:
// 1.2 MiB". Done ends the line.
type meter struct {
	w       io.Writer
	verb    string
	head    []byte // the first 12 bytes of the pack, until the count is known
	objects uint32
	n       int64
	last    time.Time
	drawn   bool
}

// newMeter starts a meter reporting to w (nil: counting nothing) as verb:
// "Receiving", "Sending".
func newMeter(w io.Writer, verb string) *meter { return &meter{w: w, verb: verb} }

// Count implements pack.Meter: it notes p, the next bytes of the pack.
func (m *meter) Count(p []byte) {
	if m == nil || m.w == nil || len(p) == 0 {
		return
	}
	if len(m.head) < 12 {
		m.head = append(m.head, p[:min(len(p), 12-len(m.head))]...)
		if len(m.head) == 12 && string(m.head[:4]) == "PACK" {
			m.objects = binary.BigEndian.Uint32(m.head[8:])
		}
	}
	m.n += int64(len(p))
	if time.Since(m.last) >= 100*time.Millisecond {
		m.draw()
	}
}

func (m *meter) draw() { m.drawEnding("") }

// drawEnding draws the line with end after it, in one write: another writer
// of the same lines (see progressLines) cannot come between.
func (m *meter) drawEnding(end string) {
	m.last = time.Now()
	fmt.Fprintf(m.w, "\r%s %d objects: %s%s", m.verb, m.objects, sizeString(m.n), end)
	m.drawn = true
}

// Done implements pack.Meter: it draws the final count and ends the line,
// if anything was counted.
func (m *meter) Done() {
	if m == nil || m.w == nil || m.n == 0 {
		return
	}
	m.drawEnding(", done.\n")
}

func sizeString(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// meteredWriter passes writes to w, counting them on m.
type meteredWriter struct {
	w io.Writer
	m *meter
}

func (mw meteredWriter) Write(p []byte) (int, error) {
	n, err := mw.w.Write(p)
	mw.m.Count(p[:n])
	return n, err
}
