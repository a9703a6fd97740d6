package testserver

import (
	"context"
	"net/http"

	"github.com/coder/websocket"
)

// WebSocketHandler returns a handler that upgrades to WebSocket with the
// subprotocol "mcp" and serves one JSON-RPC message per text frame, with
// the same semantics as [Server.ServeStream]. Clients that do not offer
// the "mcp" subprotocol are refused.
func (s *Server) WebSocketHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			return
		}
		if c.Subprotocol() != "mcp" {
			c.Close(websocket.StatusPolicyViolation, `subprotocol "mcp" required`)
			return
		}
		c.SetReadLimit(int64(s.opts.MaxMessageSize))
		_ = s.serveConn(r.Context(), &wsConn{c: c}, TransportWebSocket, r.Header.Clone())
	})
}

type wsConn struct {
	c *websocket.Conn
}

func (w *wsConn) readMsg(ctx context.Context) ([]byte, error) {
	typ, b, err := w.c.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		// A binary frame is answered like any undecodable message.
		return []byte("\x00binary"), nil
	}
	return b, nil
}

func (w *wsConn) writeMsg(ctx context.Context, b []byte) error {
	return w.c.Write(ctx, websocket.MessageText, b)
}

func (w *wsConn) close() error { return w.c.CloseNow() }
