//go:build race

package transport

// raceOn skips the internal allocation tests: the race detector allocates.
const raceOn = true
