package transport

import "time"

// NameHeader exposes nameHeader to the tests.
var NameHeader = nameHeader

// MediaType exposes mediaType to the tests.
var MediaType = mediaType

// SetStreamDrainWait sets how long a response stream is read on after its
// response (streamDrainWait) and returns the function that restores it.
// No connection may be reading meanwhile.
func SetStreamDrainWait(d time.Duration) (restore func()) {
	old := streamDrainWait
	streamDrainWait = d
	return func() { streamDrainWait = old }
}
