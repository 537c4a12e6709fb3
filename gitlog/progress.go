package gitlog

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

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

func newMeter(w io.Writer, verb string) *meter { return &meter{w: w, verb: verb} }

// count notes p, the next bytes of the pack.
func (m *meter) count(p []byte) {
	if m == nil || m.w == nil {
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

func (m *meter) draw() {
	m.last = time.Now()
	fmt.Fprintf(m.w, "\r%s %d objects: %s", m.verb, m.objects, sizeString(m.n))
	m.drawn = true
}

// done draws the final count and ends the line, if anything was counted.
func (m *meter) done() {
	if m == nil || m.w == nil || m.n == 0 {
		return
	}
	m.draw()
	fmt.Fprintln(m.w, ", done.")
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
	mw.m.count(p[:n])
	return n, err
}
