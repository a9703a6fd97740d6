package testrecord_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/conduitmcp/conduit/internal/testrecord"
)

// TestRecord: concurrent adds all land, and All is a copy.
func TestRecord(t *testing.T) {
	var r testrecord.Record[int]
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { r.Add(i) })
	}
	wg.Wait()
	got := r.All()
	slices.Sort(got)
	if !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("All = %v, want 0…7", got)
	}
	got[0] = 99
	if r.All()[0] == 99 {
		t.Error("All shares its slice with the Record")
	}
}
