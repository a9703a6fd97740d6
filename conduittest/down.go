package conduittest

import (
	"context"
	"errors"
	"net"
	"net/http"
)

// errDown is the in-memory transport's refusal while the server is down.
var errDown = &net.OpError{Op: "dial", Net: "memory", Err: errors.New("conduittest: server is down")}

// SetDown takes the server down (true) or brings it back (false), as a
// server that crashed and cannot be restarted, then came back: while it
// is down, every live connection is ended (stdio processes exit, HTTP
// connections are closed), the HTTP listener is closed (a dial is
// refused), in-memory connects fail and every process [Server.Command]
// starts exits at once. Bringing it back listens again on the same
// address. What the server holds (legacy sessions, faults, the record)
// is kept.
func (s *Server) SetDown(down bool) error {
	s.mu.Lock()
	if s.down == down {
		s.mu.Unlock()
		return nil
	}
	s.down = down
	hs := s.hs
	if down {
		if hs != nil {
			hs.Listener.Close()
			hs.CloseClientConnections()
		}
		s.mu.Unlock()
		s.conns.closeEnds()
		return nil
	}
	defer s.mu.Unlock()
	if hs == nil {
		return nil
	}
	ln, err := net.Listen("tcp", hs.Listener.Addr().String())
	if err != nil {
		return err
	}
	hs.Listener = ln
	s.serving.Add(1)
	go func() {
		defer s.serving.Done()
		_ = hs.Config.Serve(ln) // until Close closes ln
	}()
	return nil
}

func (s *Server) isDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down
}

// Executions returns how many times tool name ran on the server, over
// every transport, connection and session: counted when the tool starts,
// so a request that a fault ends before it runs ([FaultExit],
// [FaultReset], [FaultExpireSession]) is not counted, and one that a
// fault ends after it ran ([FaultExitAfter], [FaultBreakStream],
// [FaultBreakExpire]) is. [Server.Reset] clears it.
func (s *Server) Executions(name string) int { return s.srv.Executions(name) }

// endable serves h (the WebSocket handler, whose connections outlive the
// HTTP server's tracking once upgraded) with a context that Close and
// SetDown(true) cancel, which ends the connection.
func (s *Server) endable(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		end := &canceler{cancel}
		if !s.conns.hold(end) {
			http.Error(w, "server closed", http.StatusServiceUnavailable)
			return
		}
		defer s.conns.release(end)
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// canceler is a cancel func as an io.Closer; a pointer to it can be a
// map key.
type canceler struct{ cancel context.CancelFunc }

func (c *canceler) Close() error {
	c.cancel()
	return nil
}
