package mcpserver

import (
	"context"
	"testing"
	"time"
)

// joined runs a.join in the background and reports on the channel it
// returns once it has returned.
func joined(a *arrival, key string, id int64) <-chan func() {
	ch := make(chan func(), 1)
	go func() {
		done, _ := a.join(context.Background(), call{key: key, id: id, hasID: true})
		ch <- done
	}()
	return ch
}

func waiting(t *testing.T, ch <-chan func(), what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s ran, want it waiting", what)
	case <-time.After(5 * time.Millisecond):
	}
}

func ran(t *testing.T, ch <-chan func(), what string) func() {
	t.Helper()
	select {
	case done := <-ch:
		return done
	case <-time.After(5 * time.Second):
		t.Fatalf("%s still waiting after 5s", what)
		return nil
	}
}

// A request that reached the server first runs first, though it is read
// after one that came a moment later: its connection came first.
func TestLineupEarlierArrivalReadLater(t *testing.T) {
	l := &lineup{}
	t0 := time.Now()
	first := l.arrive(t0, true)
	second := l.arrive(t0.Add(300*time.Microsecond), false)
	second.place("g")
	ch2 := joined(second, "k", 1)
	waiting(t, ch2, "the later request, with an earlier one not yet placed")
	first.place("g")
	ch1 := joined(first, "k", 0)
	done1 := ran(t, ch1, "the earlier request")
	waiting(t, ch2, "the later request, with the earlier one running")
	done1()
	ran(t, ch2, "the later request")()
}

// Two requests of a line that came within window of each other run in the
// order of their ids: the first went on a connection the client was still
// opening.
func TestLineupIDsOrderCloseArrivals(t *testing.T) {
	l := &lineup{}
	t0 := time.Now()
	l.seed("k", 7)
	view := l.arrive(t0, false)
	create := l.arrive(t0.Add(2*time.Millisecond), false)
	view.place("g")
	create.place("g")
	chView := joined(view, "k", 8)
	// The view waits for the create, whose line is not yet known, since
	// it came within window.
	waiting(t, chView, "id 8, with id 7 of its group placed but not keyed")
	chCreate := joined(create, "k", 7)
	doneCreate := ran(t, chCreate, "id 7")
	waiting(t, chView, "id 8 while id 7 runs")
	doneCreate()
	ran(t, chView, "id 8")()
}

// Other lines do not wait for each other, and a request far apart in time
// keeps its place whatever its id.
func TestLineupLinesIndependent(t *testing.T) {
	l := &lineup{}
	t0 := time.Now()
	a := l.arrive(t0, false)
	b := l.arrive(t0.Add(time.Millisecond), false)
	a.place("g")
	b.place("g")
	chA := joined(a, "one", 0)
	chB := joined(b, "two", 0)
	doneA := ran(t, chA, "the first line's request")
	ran(t, chB, "the other line's request, while the first runs")()
	doneA()

	c := l.arrive(t0.Add(time.Second), false)
	d := l.arrive(t0.Add(2*time.Second), false)
	c.place("g")
	d.place("g")
	chC := joined(c, "one", 2)
	chD := joined(d, "one", 1)
	doneC := ran(t, chC, "id 2")
	waiting(t, chD, "id 1, a second after id 2")
	doneC()
	ran(t, chD, "id 1")()
}

// A connection that comes and sends nothing holds the others back only
// for window; one whose request is read but never placed, for settle.
func TestLineupSilentConnectionBounded(t *testing.T) {
	for _, fresh := range []bool{true, false} {
		l := &lineup{}
		t0 := time.Now()
		silent := l.arrive(t0, fresh)
		defer silent.leave()
		a := l.arrive(t0.Add(time.Millisecond), false)
		a.place("g")
		start := time.Now()
		ran(t, joined(a, "k", 0), "a request behind a silent connection")()
		limit := settle
		if fresh {
			limit = window
		}
		if took := time.Since(start); took > limit+time.Second {
			t.Errorf("fresh %v: a request behind a silent connection waited %v, want about %v", fresh, took, limit)
		}
	}
}

// A request that gives up leaves those behind it in order.
func TestLineupCancelKeepsOrder(t *testing.T) {
	l := &lineup{}
	t0 := time.Now()
	a := l.arrive(t0, false)
	b := l.arrive(t0.Add(time.Millisecond), false)
	c := l.arrive(t0.Add(2*time.Millisecond), false)
	for _, x := range []*arrival{a, b, c} {
		x.place("g")
	}
	chA := joined(a, "k", 0)
	ctx, cancel := context.WithCancel(context.Background())
	chB := make(chan error, 1)
	go func() {
		_, err := b.join(ctx, call{key: "k", id: 1, hasID: true})
		chB <- err
	}()
	chC := joined(c, "k", 2)
	doneA := ran(t, chA, "the first")
	waiting(t, chC, "the third")
	cancel()
	if err := <-chB; err == nil {
		t.Fatal("join of a cancelled request = nil, want the context's error")
	}
	b.leave()
	waiting(t, chC, "the third while the first runs")
	doneA()
	ran(t, chC, "the third")()
}

// A request whose id is past the one its line expects waits for the ones
// between, which a client under load may not have begun to send: a view
// (id 2) came, and the create before it (id 1) came later, with no trace
// of it at the server before.
func TestLineupWaitsForMissingID(t *testing.T) {
	l := &lineup{}
	l.seed("k", 1) // the session's initialize was id 0
	t0 := time.Now()
	view := l.arrive(t0, false)
	view.place("g")
	chView := joined(view, "k", 2)
	waiting(t, chView, "id 2, with id 1 not come yet")
	create := l.arrive(t0.Add(3*time.Millisecond), false)
	create.place("g")
	doneCreate := ran(t, joined(create, "k", 1), "id 1")
	waiting(t, chView, "id 2 while id 1 runs")
	doneCreate()
	ran(t, chView, "id 2")()
}

// A line whose missing id never comes waits for it once, for window, and
// not again: a client may number requests it sends elsewhere.
func TestLineupGappyLine(t *testing.T) {
	l := &lineup{}
	l.seed("k", 1)
	a := l.arrive(time.Now(), false)
	a.place("g")
	start := time.Now()
	ran(t, joined(a, "k", 3), "id 3, with 1 and 2 never sent here")()
	if took := time.Since(start); took < window/2 {
		t.Errorf("id 3 ran after %v, want it to wait about %v for ids 1 and 2", took, window)
	}
	b := l.arrive(time.Now(), false)
	b.place("g")
	start = time.Now()
	ran(t, joined(b, "k", 7), "id 7")()
	if took := time.Since(start); took > window/2 {
		t.Errorf("id 7 of a line known for gaps waited %v", took)
	}
}
