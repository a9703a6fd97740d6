//go:build race

package client

// raceEnabled skips the allocation tests: the race detector allocates.
const raceEnabled = true
