// Package testrecord holds what the tests of several packages share to
// record what goroutines observe. It is imported by tests only.
package testrecord

import (
	"slices"
	"sync"
)

// Record is a list that goroutines add to under its lock. Its zero value
// is empty and ready to use.
type Record[T any] struct {
	mu  sync.Mutex
	got []T // guarded by mu
}

// Add appends v. It may be called concurrently.
func (r *Record[T]) Add(v T) {
	r.mu.Lock()
	r.got = append(r.got, v)
	r.mu.Unlock()
}

// All returns a copy of what was added so far.
func (r *Record[T]) All() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}
