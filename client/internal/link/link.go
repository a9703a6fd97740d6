// Package link lets the packages under client (client/events) reach the
// few parts of a [client.Client] that are not exported API: the
// connection's long-lived streams, its notifications and its goroutine
// accounting. Package client fills in the functions at init; they are
// nil only if client was not linked, which cannot happen for a caller
// holding a *client.Client.
package link

import (
	"context"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// Stream is a long-lived request's stream of notifications (an
// *engine.Stream).
type Stream interface {
	Notifications() <-chan *jsonrpc.Request
	Done() <-chan struct{}
	Err() error
	Close() error
}

var (
	// OpenStream opens a long-lived modern request of method on client c
	// (see engine.Session.OpenStream). The error is the client's *Error.
	OpenStream func(ctx context.Context, c any, method string, params any) (Stream, error)
	// Observe calls f for every notification the client's dispatcher
	// delivers (those not tagged for a stream), in order, on the
	// dispatcher goroutine: f must not block. remove stops it.
	Observe func(c any, f func(*jsonrpc.Request)) (remove func())
	// Track counts a goroutine the caller is about to start in the
	// client's wait group, so that Client.Close waits for it; ok is false
	// when the client is closing (start nothing then). done must be
	// called when the goroutine ends.
	Track func(c any) (done func(), ok bool)
	// Modern reports whether the client negotiated the modern era.
	Modern func(c any) bool
)
