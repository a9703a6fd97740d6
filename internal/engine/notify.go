package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// Notify sends a notification on the current connection. In the modern
// era params are sent as given (notifications have no required _meta).
// While the session reconnects after a lost connection, Notify waits,
// bounded by ctx, until the new connection's negotiation completed, as
// new calls do; after the session ended it returns [Session.Err].
//
// A notification answered HTTP 401 or 403 calls Config.Authorize and is
// sent again, as a request is (at most 2 Authorize calls); without
// Authorize, or when it did not help, the error is an
// [*AuthRequiredError].
func (s *Session) Notify(ctx context.Context, method string, params any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return fmt.Errorf("encoding the params: %w", err)
	}
	return s.noteThrough(ctx, method, raw, false, s.notify)
}

// notify writes one notification, authorizing again on 401/403.
func (s *Session) notify(ctx context.Context, method string, raw json.RawMessage) error {
	auths := 0
	for {
		ref, err := s.readyRef(ctx)
		if err != nil {
			return err
		}
		err = s.write(ctx, ref, &jsonrpc.Request{Method: method, Params: raw})
		if err == nil {
			return nil
		}
		retry, aerr := s.authorize(ctx, method, err, &auths)
		if aerr != nil {
			return aerr
		}
		if !retry {
			return err
		}
	}
}

// readyRef returns the current connection once the session may send on
// it. While the session reconnects it waits, as new calls do, until the
// new connection's negotiation completed: the new connection is
// published before its handshake (install), and a legacy server must see
// initialize before anything else. It returns Session.Err once the
// session ended, and ctx.Err() when ctx ends first.
func (s *Session) readyRef(ctx context.Context) (*connRef, error) {
	for {
		v := s.pub.Load()
		switch {
		case v.err != nil:
			return nil, v.err
		case v.st.ready() || v.gen == 0:
			// gen 0: Connect's own negotiation, which a heal does not
			// close Reconnected for, is under way; as before it.
			if v.ref == nil {
				return nil, ErrClosed
			}
			return v.ref, nil
		}
		// Take the channel before looking again: a heal that completes
		// after the look closes it (becomeReady publishes and takes it
		// under reconnMu).
		healed := s.Reconnected()
		if v := s.pub.Load(); v.err != nil || v.st.ready() {
			continue
		}
		select {
		case <-healed:
		case <-s.Done():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
