package transport

// Class is the transport class the probe classifier reads (see package
// negotiation and seed 003): only the stdio child-process transport is
// stdio-like; anything else — Streamable HTTP, HTTP+SSE, WebSocket, an
// in-memory pipe — is treated like HTTP, so that, for instance, a probe
// that times out there is retried instead of read as a legacy server.
type Class uint8

const (
	// ClassHTTP is every connection but a stdio child process's.
	ClassHTTP Class = iota
	// ClassStdio is the connection to a stdio child process ([Stdio]).
	ClassStdio
)

// String returns "http" or "stdio".
func (c Class) String() string {
	if c == ClassStdio {
		return "stdio"
	}
	return "http"
}

// ClassOf returns the class of c: [ClassStdio] for a connection made by
// [Stdio] (its [Kinder] kind is [KindStdio]), [ClassHTTP] for anything
// else, including connections that do not implement Kinder.
func ClassOf(c Conn) Class {
	if k, ok := c.(Kinder); ok && k.Kind() == KindStdio {
		return ClassStdio
	}
	return ClassHTTP
}
