//go:build race

package conduittest_test

// raceEnabled skips the tests of large transcripts: the race detector
// slows them tenfold.
const raceEnabled = true
