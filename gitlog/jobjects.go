package gitlog

import (
	"context"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

func memoryObject(o rawObject) plumbing.EncodedObject {
	mo := &plumbing.MemoryObject{}
	mo.SetType(o.Type)
	mo.Write(o.Data)
	return mo
}

// idleFlush is how long after its last commit a process flushes the journal, so
// that plain git finds every object while the process stays open.
const idleFlush = 2 * time.Second

// armIdleFlush (re)starts the wait for a pause in writing.
func (r *Repo) armIdleFlush() {
	r.bgMu.Lock()
	defer r.bgMu.Unlock()
	if r.closed {
		return
	}
	if r.flushTimer == nil {
		r.flushTimer = time.AfterFunc(idleFlush, r.flushIdle)
		return
	}
	r.flushTimer.Reset(idleFlush)
}

// flushIdle flushes the journal if no other writer holds the lock; a writer that
// does will arm the wait again.
func (r *Repo) flushIdle() {
	r.bgMu.Lock()
	if r.closed {
		r.bgMu.Unlock()
		return
	}
	r.background.Add(1)
	r.bgMu.Unlock()
	defer r.background.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	unlock, err := r.lock(ctx)
	if err != nil {
		return
	}
	defer unlock()
	r.flushJournal(context.Background(), true) // best effort: the journal keeps what it holds
}
