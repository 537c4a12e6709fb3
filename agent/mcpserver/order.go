package mcpserver

import (
	"context"
	"slices"
	"sync"
	"time"
)

// lineup keeps one line of requests per client, so that a client's requests
// run in the order they reached the server, each after the one before it has
// finished, however many it sends at once. The SDK alone runs them
// concurrently, and a view sent right behind a create could find no file.
//
// The SDKs send each request on a connection of their own, a fraction of a
// millisecond after the one before, and Go reads the connections in whatever
// order it schedules them: a request read first may have come last. So a
// request's place is the time it reached the server, as the kernel saw it
// (see arrivalListener), and a request waits, before it runs, until what
// reached the server before it has been read and placed.
//
// Which client a request belongs to may be known only from its body (a client
// of 2026-07-28 names itself in _meta). So an arrival is first placed in a
// group its headers name (a session, or a host and its credentials), and
// learns its line within that group once its body is read (join). It then
// waits for every earlier arrival of its group to have learnt its line, and
// for those ahead of it in its line to be done.
//
// A client that sends a request while a connection of its own is still being
// opened for the one before puts the later one on the wire first, and a busy
// one (Node under load) may not even have begun to open it. So within a
// line, two requests that came less than window apart run in the order of
// their JSON-RPC ids when both are numbers: every SDK numbers a client's
// requests in the order they are made. And a request whose id is past the
// next one its line expects waits, up to window, for the ones between; a
// line whose missing ids never come (a client that numbers its requests to
// other servers from the same count) is not made to wait again.
type lineup struct {
	mu       sync.Mutex
	arrivals []*arrival            // not yet left
	lines    map[string][]*arrival // each line's keyed arrivals not yet left, in the order they run
	ids      map[string]*lineIDs   // each line's next id, by line, the newest maxLines
	changed  chan struct{}         // closed, and replaced, whenever an arrival changes
	// unread reports whether a request has reached the server that no
	// connection has read yet: then an arrival is still to come that may be
	// earlier than those waiting. It is nil when that cannot be known.
	unread func() bool
}

const (
	// settle bounds how long a request waits for what reached the server
	// before it to be read and placed: a client that sends its headers
	// slowly holds the others back no longer than this. Requests that are
	// read and placed are waited for as long as they run.
	settle = 20 * time.Millisecond
	// window is how long a request waits for one on a connection opened
	// before it that has sent nothing yet: a client opens a connection to
	// send a request on it, and a busy one (Node under load) may write it
	// tens of milliseconds later, behind later requests it sent on
	// connections it already had. Two requests of a line that came within
	// window of each other are ordered by their ids.
	window = 250 * time.Millisecond
)

// lineIDs is what a line knows of its client's request ids.
type lineIDs struct {
	next  int64 // the id expected next: one past the highest that ran
	gappy bool  // ids went missing for good once: a gap is not waited on
	used  time.Time
}

// maxLines bounds the lines whose ids the lineup keeps: of a line
// forgotten, no id is expected until one runs.
const maxLines = 4096

// call is what a request's body tells the lineup.
type call struct {
	key   string // its line
	id    int64  // its JSON-RPC id, when hasID
	hasID bool
	opens bool // initialize or server/discover, which a client sends first
}

// arrival is one request's place: when it reached the server, and, once
// known, its group, its line and its id.
type arrival struct {
	l      *lineup
	at     int64     // when it reached the server, in Unix nanoseconds
	seen   time.Time // when the server learnt of it
	fresh  bool      // a connection came, and nothing on it yet
	group  string    // set once placed
	key    string    // its line, set once keyed
	id     int64     // its JSON-RPC id, when hasID
	hasID  bool
	opens  bool // it may start its line: no id is expected before it
	placed bool
	keyed  bool
	begun  bool // it runs, or ran: nothing goes ahead of it any more
	done   bool
	left   bool
}

// arrive records a request that reached the server at at; fresh says only
// its connection came so far. Every arrival must be left (leave) once its
// request is over or turns out not to be one.
func (l *lineup) arrive(at time.Time, fresh bool) *arrival {
	a := &arrival{l: l, at: at.UnixNano(), seen: time.Now(), fresh: fresh}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.arrivals = append(l.arrivals, a)
	l.changedLocked()
	return a
}

// changedLocked wakes every request waiting for the lineup to change.
func (l *lineup) changedLocked() {
	if l.changed != nil {
		close(l.changed)
	}
	l.changed = make(chan struct{})
}

// retime says when the arrival's request reached the server, now that its
// first bytes were read.
func (a *arrival) retime(at time.Time) {
	a.l.mu.Lock()
	defer a.l.mu.Unlock()
	a.at, a.seen, a.fresh = at.UnixNano(), time.Now(), false
	a.l.changedLocked()
}

// place puts the arrival in group, which its request's headers name.
func (a *arrival) place(group string) {
	a.l.mu.Lock()
	defer a.l.mu.Unlock()
	a.group, a.placed = group, true
	a.l.changedLocked()
}

// join names the line the arrival's request belongs to and its JSON-RPC id
// (c), and waits until every request ahead of it in that line is done, or
// ctx ends (then it returns ctx's error). It returns the function to call
// when this request is done, which lets the next one go; it may be called
// more than once, and leave calls it too. The arrival must have been placed.
func (a *arrival) join(ctx context.Context, c call) (done func(), err error) {
	l := a.l
	l.mu.Lock()
	a.key, a.keyed, a.id, a.hasID, a.opens = c.key, true, c.id, c.hasID, c.opens
	l.enterLocked(a)
	l.changedLocked()
	l.mu.Unlock()

	deadline := time.Now().Add(settle)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		now := time.Now()
		l.mu.Lock()
		wait, poll := l.waitLocked(a, now)
		changed := l.changed
		l.mu.Unlock()
		// unread looks at the connections, which take their own locks and
		// then the lineup's: it is called without the lineup's lock.
		if !wait && !poll && now.Before(deadline) && l.unread != nil && l.unread() {
			poll = true // what is unread may come before a: wait until it is read
		}
		if !wait && !poll {
			l.mu.Lock()
			wait, poll = l.waitLocked(a, now)
			if !wait && !poll {
				l.beginLocked(a, now)
				l.mu.Unlock()
				return a.finish, nil
			}
			changed = l.changed
			l.mu.Unlock()
		}
		var tick <-chan time.Time
		if poll {
			// What is not yet read or placed is looked for again shortly:
			// its coming changes nothing here.
			if timer == nil {
				timer = time.NewTimer(100 * time.Microsecond)
			} else {
				timer.Reset(100 * time.Microsecond)
			}
			tick = timer.C
		}
		select {
		case <-changed:
		case <-tick:
		case <-ctx.Done():
			// Those behind wait for every request ahead of them in their
			// line, not only for this one: giving up keeps their order.
			l.mu.Lock()
			l.beginLocked(a, time.Now())
			l.mu.Unlock()
			return a.finish, ctx.Err()
		}
	}
}

// beginLocked lets a go: nothing goes ahead of it any more, and its line
// expects the id after its own. A line is known from its first
// server/discover on (whose id may be no number: the TypeScript SDK's v2
// numbers the requests after it from 0), or from the id of a request that
// ran.
func (l *lineup) beginLocked(a *arrival, now time.Time) {
	a.begun = true
	switch {
	case a.hasID:
		li := l.lineIDsLocked(a.key, now)
		li.next = max(li.next, a.id+1)
	case a.opens:
		l.lineIDsLocked(a.key, now)
	}
}

// seed says line key expects next as its first id: the id after that of
// the initialize that made its session.
func (l *lineup) seed(key string, next int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	li := l.lineIDsLocked(key, time.Now())
	li.next = max(li.next, next)
	l.changedLocked()
}

// lineIDsLocked returns what line key knows of its ids, made anew when there
// is none, forgetting the least recently used line beyond maxLines.
func (l *lineup) lineIDsLocked(key string, now time.Time) *lineIDs {
	if l.ids == nil {
		l.ids = map[string]*lineIDs{}
	}
	li := l.ids[key]
	if li == nil {
		if len(l.ids) >= maxLines {
			oldest := ""
			for k, x := range l.ids {
				if oldest == "" || x.used.Before(l.ids[oldest].used) {
					oldest = k
				}
			}
			delete(l.ids, oldest)
		}
		li = &lineIDs{}
		l.ids[key] = li
	}
	li.used = now
	return li
}

// missingLocked tells whether a's id is past the one its line expects next
// and that one is not in the line: a request sent before a that has not
// come yet. Nothing is expected of a line not known yet.
func (l *lineup) missingLocked(a *arrival) (line *lineIDs, missing bool) {
	if !a.hasID || a.opens {
		return nil, false
	}
	li := l.ids[a.key]
	if li == nil || li.gappy || a.id <= li.next {
		return li, false
	}
	next := li.next
	for _, b := range l.lines[a.key] {
		if b.hasID && b.id == next {
			return li, false // it is here: it goes first by its id
		}
	}
	return li, true
}

// enterLocked puts a keyed arrival in its line: after those that began,
// and ahead of those it came before.
func (l *lineup) enterLocked(a *arrival) {
	if l.lines == nil {
		l.lines = map[string][]*arrival{}
	}
	line := l.lines[a.key]
	i := len(line)
	for i > 0 && !line[i-1].begun && before(a, line[i-1]) {
		i--
	}
	l.lines[a.key] = slices.Insert(line, i, a)
}

// before tells whether a comes before b in their line: by their ids when
// both have numbers and came within window of each other, else by when they
// came.
func before(a, b *arrival) bool {
	if a.hasID && b.hasID && max(a.at-b.at, b.at-a.at) < int64(window) {
		return a.id < b.id
	}
	return a.at < b.at
}

// waitLocked tells whether a must wait: for one ahead of it in its line that
// is not done, or for an earlier arrival of its group whose line is not
// known yet. poll says a should also wait, a short while, for an arrival
// around its time not yet placed in any group, or one of its group within
// window after it (which may have a lower id) whose line is not known yet.
func (l *lineup) waitLocked(a *arrival, now time.Time) (wait, poll bool) {
	for _, b := range l.lines[a.key] {
		if b == a {
			break
		}
		if !b.done {
			return true, false
		}
	}
	for _, b := range l.arrivals {
		if b == a || b.at >= a.at+int64(window) {
			continue
		}
		since := now.Sub(b.seen)
		switch {
		case !b.placed:
			if since < settle || b.fresh && since < window {
				poll = true
			}
		case b.group != a.group || b.keyed:
		case b.at < a.at:
			return true, poll
		case since < window:
			poll = true
		}
	}
	if li, missing := l.missingLocked(a); missing {
		if now.Sub(a.seen) < window {
			poll = true
		} else {
			// Gone for good: the line's ids have gaps, which are not
			// waited on again.
			li.gappy = true
		}
	}
	return false, poll
}

// finish lets those behind the arrival in its line go.
func (a *arrival) finish() {
	a.l.mu.Lock()
	defer a.l.mu.Unlock()
	if !a.done {
		a.done = true
		a.l.changedLocked()
	}
}

// leave ends the arrival: its request is over, or was never one (a GET, a
// refused request, a connection that closed before sending a whole one).
func (a *arrival) leave() {
	l := a.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.left {
		return
	}
	a.left, a.done, a.begun = true, true, true
	if i := slices.Index(l.arrivals, a); i >= 0 {
		l.arrivals = slices.Delete(l.arrivals, i, i+1)
	}
	if a.keyed {
		line := l.lines[a.key]
		if i := slices.Index(line, a); i >= 0 {
			line = slices.Delete(line, i, i+1)
		}
		if len(line) == 0 {
			delete(l.lines, a.key)
		} else {
			l.lines[a.key] = line
		}
	}
	l.changedLocked()
}
