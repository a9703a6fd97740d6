package transport

import (
	"context"
	"log/slog"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// Protocol version 2025-03-26 allowed JSON-RPC batches: a JSON array of
// messages where one message was expected, in a stdio line, a WebSocket
// message, a JSON body or an event's data. Every reader hands a batch to
// batchInbound, which splits it into the messages Read returns one by one
// (the engine answers the requests among them one by one, as if they had
// come alone). A single message keeps each reader's own fast path.

// batchInbound decodes a batch array into what Read returns: each message,
// and the *jsonrpc.DecodeError of each broken element that names the call
// it answers. Elements that are neither are logged and skipped, as a lone
// message would be.
func batchInbound(data []byte, log *slog.Logger, where string) []inbound {
	var out []inbound
	for m, err := range jsonrpc.DecodeMessages(data) {
		switch {
		case err == nil:
			out = append(out, inbound{msg: m})
		case answerError(err) != nil:
			log.Warn("transport: a malformed answer in a batch", "where", where, "err", err)
			out = append(out, inbound{err: answerError(err)})
		default:
			log.Warn("transport: skipping a batch element that is not a JSON-RPC message", "where", where, "err", err)
		}
	}
	return out
}

// isBatchEvent reports whether ev is a message event whose data is a batch
// array.
func isBatchEvent(ev event) bool {
	return (ev.Type == "" || ev.Type == "message") && jsonrpc.IsBatch(ev.Data)
}

// deliverAll queues ins for Read in order. It reports false when the
// connection is closing instead.
func (b *inbox) deliverAll(ins []inbound) bool {
	for _, in := range ins {
		if !b.put(in) {
			return false
		}
	}
	return true
}

// enqueueBatch queues the messages of a batch in a JSON body and reports
// whether one of them is the response to id (always true without an id:
// a notification or a response expects none).
func (c *httpConn) enqueueBatch(data []byte, id jsonrpc.ID) bool {
	got := !id.IsValid()
	for _, in := range batchInbound(data, c.log, c.url) {
		in.on = id
		c.enqueue(in)
		if r, ok := in.msg.(*jsonrpc.Response); ok && r.ID == id {
			got = true
		}
		if de, ok := in.err.(*jsonrpc.DecodeError); ok && de.ID == id {
			got = true // its error fails the call
		}
	}
	return got
}

// deliverBatch delivers the messages of a batch event in order and sets
// *got when one of them is the response to want. It reports whether the
// stream should go on: false when the connection is closing or the
// response to want came.
func (c *httpConn) deliverBatch(ctx context.Context, data []byte, want jsonrpc.ID, got *bool) bool {
	for _, in := range batchInbound(data, c.log, c.url) {
		in.on = want
		if !c.deliver(ctx, in) {
			return false
		}
		if r, ok := in.msg.(*jsonrpc.Response); ok && want.IsValid() && r.ID == want {
			*got = true
		}
	}
	return !*got
}
