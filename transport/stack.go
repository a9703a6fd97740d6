package transport

// presizeStack grows the calling goroutine's stack, once, to what
// reading an answer's event stream needs. A goroutine starts with a small
// stack, and the runtime doubles it each time a call runs out of room,
// copying it and adjusting every frame on it. Reading one answer through
// net/http's body, the event parser and the JSON scanner grew the stack
// twice, deep in those calls, and the copies were about a ninth of the
// instructions of a legacy Streamable HTTP connect against a server that
// answers with event streams (interop/bench/RESULTS.md, session 14). A
// frame of streamFrame bytes, taken while the goroutine holds only a few
// frames, makes the runtime grow the stack at once to 8 KiB, where the
// copy is cheap; a deeper answer still grows it further, as before. A
// goroutine that waits for long (a legacy GET stream, a stdio or
// WebSocket reader) is not presized: it would keep the larger stack until
// the collector shrinks it.
//
//go:noinline
func presizeStack() {
	var pad [streamFrame]byte
	keep(pad[:])
}

// streamFrame is presizeStack's frame: with the runtime's guard and the
// few frames below it, it does not fit in 4 KiB and fits in 8 KiB.
const streamFrame = 6 << 10

// keep uses b so that the compiler keeps presizeStack's frame.
//
//go:noinline
func keep(b []byte) {
	if b[0] != 0 {
		panic("transport: presizeStack's frame is not zeroed")
	}
}
