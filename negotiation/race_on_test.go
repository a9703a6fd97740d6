//go:build race

package negotiation_test

// raceEnabled: the race detector adds allocations of its own.
const raceEnabled = true
