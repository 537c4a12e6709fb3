package exchange

import (
	"reflect"
	"testing"
)

// TestLentComplete guards against a field package vault forgets to fill in
// storehook.Lent: a nil func there would panic in the middle of a sync.
func TestLentComplete(t *testing.T) {
	rv := reflect.ValueOf(lent).Elem()
	for i := range rv.NumField() {
		if rv.Field(i).IsZero() {
			t.Errorf("storehook.Lent.%s is not filled in by package vault", rv.Type().Field(i).Name)
		}
	}
}
