//go:build !race

package protocol_test

// raceEnabled skips the allocation tests: the race detector allocates.
const raceEnabled = false
