package memstoreapi

import "time"

// SetListTimeout lowers the time bound of a listing for a test, and returns
// the function that puts it back.
func SetListTimeout(d time.Duration) (restore func()) {
	old := listTimeout
	listTimeout = d
	return func() { listTimeout = old }
}
