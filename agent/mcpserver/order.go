package mcpserver

import (
	"context"
	"sync"
)

// lineup keeps one line of requests per client, so that a client's requests
// run in the order they arrived, each after the one before it has finished,
// however many it sends at once. The SDK alone runs them concurrently, and a
// view sent right behind a create could find no file.
type lineup struct {
	mu    sync.Mutex
	tails map[string]chan struct{} // closed once the last request in the line is done
}

// join puts a request at the end of key's line. It waits until the requests
// ahead are done, or ctx ends (then it returns ctx's error), and returns the
// function to call when this request is done, which lets the next one go.
// done must be called even after an error, and may be called more than once.
func (l *lineup) join(ctx context.Context, key string) (done func(), err error) {
	mine := make(chan struct{})
	l.mu.Lock()
	if l.tails == nil {
		l.tails = map[string]chan struct{}{}
	}
	ahead := l.tails[key]
	l.tails[key] = mine
	l.mu.Unlock()

	var once sync.Once
	finish := func() {
		l.mu.Lock()
		if l.tails[key] == mine {
			delete(l.tails, key)
		}
		l.mu.Unlock()
		close(mine)
	}
	if ahead == nil {
		return func() { once.Do(finish) }, nil
	}
	select {
	case <-ahead:
		return func() { once.Do(finish) }, nil
	case <-ctx.Done():
		// Those behind still wait for those ahead: the line holds its order
		// even when one in it gives up.
		return func() {
			once.Do(func() {
				go func() {
					<-ahead
					finish()
				}()
			})
		}, ctx.Err()
	}
}
