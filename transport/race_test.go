//go:build race

package transport_test

// raceEnabled skips the allocation tests: the race detector allocates.
const raceEnabled = true
