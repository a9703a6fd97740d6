package engine

// What a connect allocates up front (issue 16; BenchmarkConnect).

// eventBuffer is the loop's event queue: senders (readers, callers,
// handlers) block while it is full, so it only smooths bursts; a session
// rarely has more than a few events queued, and the loop moves each
// notification on to its own queue at once (an event is 152 bytes on
// amd64: 64 slots cost 9.5 KiB per session, 16 cost 2.4 KiB, 8 cost
// 1.2 KiB, held by every connected session).
const eventBuffer = 8
