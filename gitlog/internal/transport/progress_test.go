package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// TestProgressLines: a transfer's meter and the server's messages write to one
// terminal. Each line is ended before another writer's message, and at the end
// of the transfer, failed or not: the meter's line once ran into the server's
// ("Receiving 20109 objects: 32.0 KiBTotal 20109 (delta 0)...") and into the
// error that ended a push ("Sending 0 objects: 0 bytesmemvault: interrupted").
func TestProgressLines(t *testing.T) {
	var out bytes.Buffer
	lines := newProgressLines(&out)
	var head [12]byte
	copy(head[:], "PACK")
	binary.BigEndian.PutUint32(head[4:], 2)
	binary.BigEndian.PutUint32(head[8:], 3)

	recv := newMeter(lines.source(), "Receiving")
	server := lines.source()
	recv.Count(head[:])
	server.Write([]byte("Total 3 (delta 0), reused 0 (delta 0)\n"))
	recv.Count(make([]byte, 20))
	recv.Done()

	// A push stopped before a byte went out: its write failed, and the
	// transfer's end closes what was drawn.
	send := newMeter(lines.source(), "Sending")
	server.Write([]byte("Counting objects: 50%\r"))
	meteredWriter{failingWriter{}, send}.Write(head[:])
	lines.end()

	want := "\rReceiving 3 objects: 12 bytes\n" +
		"Total 3 (delta 0), reused 0 (delta 0)\n" +
		"\rReceiving 3 objects: 32 bytes, done.\n" +
		"Counting objects: 50%\r\n"
	if got := out.String(); got != want {
		t.Errorf("progress = %q\nwant       %q", got, want)
	}

	// None at all when there is nowhere to show it, as on a pipe.
	var none *progressLines = newProgressLines(nil)
	if w := none.source(); w != nil {
		t.Errorf("newProgressLines(nil).source() = %v, want nil", w)
	}
	none.end()
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("interrupted") }
