package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// WebSocketSubprotocol is the subprotocol a [WebSocket] asks for.
const WebSocketSubprotocol = "mcp"

// WebSocket connects to an MCP server over a WebSocket, one JSON-RPC
// message per text message, with subprotocol "mcp". Apart from URL every
// field is optional.
//
// Connect may be called again after a connection ended; each call dials a
// new WebSocket.
type WebSocket struct {
	// URL is the endpoint: ws://, wss://, http:// or https://.
	URL string
	// Header is added to the handshake request (for example
	// Authorization). It is not modified.
	Header http.Header
	// HTTPClient makes the handshake; nil means one over [DefaultPool]. It
	// is copied and its CheckRedirect wrapped: a redirect of the handshake
	// to another origin is not followed (the dial fails with a
	// [*RedirectError] matching [ErrCrossOriginRedirect]), so that no
	// credential — Header, or whatever HTTPClient's own transport adds —
	// reaches that origin; same-origin redirects are followed, at most 10.
	HTTPClient *http.Client
	// CrossOriginRedirects follows a handshake redirected to another
	// origin, without Header's headers and credentials (see
	// [StreamableHTTP.CrossOriginRedirects]); headers that HTTPClient's
	// own Transport adds on every request are beyond its reach. Never
	// from https (wss) to http (ws).
	CrossOriginRedirects bool
	// MaxMessageSize is the largest message accepted from the server, in
	// bytes; 0 or negative means 16 MiB. A larger message ends the
	// connection with a [*MessageTooLargeError].
	MaxMessageSize int64
	// PingInterval, if positive, makes the connection send a WebSocket
	// ping at that interval; a ping not answered within the interval ends
	// the connection with a [*NetworkError] whose Op is "ping". 0 or
	// negative means no pings.
	PingInterval time.Duration
	// Logger receives warnings (skipped messages, ping failures); nil
	// discards them.
	Logger *slog.Logger
}

// Kind returns [KindWebSocket].
func (w *WebSocket) Kind() string { return KindWebSocket }

// Connect dials the server. A handshake answered with an HTTP status other
// than 101 fails with an [*HTTPError] (status, content type, the start of
// the body, WWW-Authenticate); a failure to reach the server with a
// [*NetworkError] whose Op is "dial".
func (w *WebSocket) Connect(ctx context.Context) (Conn, error) {
	if w.URL == "" {
		return nil, errors.New("transport: WebSocket.URL is empty")
	}
	opts := &websocket.DialOptions{
		HTTPClient:   handshakeClient(w.HTTPClient, w.CrossOriginRedirects, w.Header),
		HTTPHeader:   w.Header.Clone(),
		Subprotocols: []string{WebSocketSubprotocol},
	}
	ws, resp, err := websocket.Dial(ctx, w.URL, opts)
	if err != nil {
		return nil, wsDialError(w.URL, resp, err)
	}
	limit := w.MaxMessageSize
	if limit <= 0 {
		limit = defaultMaxLine
	}
	ws.SetReadLimit(limit)
	// pingCtx lives as long as the connection; Close cancels it to stop
	// a ping waiting for its pong.
	pingCtx, cancelPing := context.WithCancel(context.Background())
	c := &wsConn{
		inbox:      newInbox(),
		ws:         ws,
		url:        w.URL,
		limit:      limit,
		logger:     loggerOrDiscard(w.Logger),
		pingCtx:    pingCtx,
		cancelPing: cancelPing,
		wlock:      make(chan struct{}, 1),
	}
	c.wg.Add(1)
	// The reader goroutine: messages to Read; it also answers pings and
	// the close handshake, which coder/websocket handles while reading.
	go func() { defer c.wg.Done(); c.readLoop() }()
	if w.PingInterval > 0 {
		c.wg.Add(1)
		// The keepalive goroutine; joined by Close.
		go func() { defer c.wg.Done(); c.pingLoop(w.PingInterval) }()
	}
	return c, nil
}

// handshakeClient returns a copy of user (or of a zero client) whose
// redirects keep to the origin of the first request (see redirectPolicy).
// Browsers follow no redirect of a WebSocket handshake at all; a
// same-origin one is harmless. Refusing rather than stripping headers is
// what keeps credentials away: a RoundTripper of user's (such as one that
// adds a bearer token to every request) would attach them again on the
// next hop.
func handshakeClient(user *http.Client, crossOrigin bool, static http.Header) *http.Client {
	if user == nil && !crossOrigin {
		return sameOriginClient
	}
	c := http.Client{Transport: pool}
	if user != nil {
		c = *user
	}
	c.CheckRedirect = redirectPolicy(c.CheckRedirect, crossOrigin, static)
	return &c
}

// wsDialError turns a failed dial into an [*HTTPError] when the server
// answered the handshake, or a [*NetworkError].
func wsDialError(url string, resp *http.Response, err error) error {
	if re, ok := errors.AsType[*RedirectError](err); ok {
		return re
	}
	if resp == nil || resp.StatusCode == http.StatusSwitchingProtocols {
		op := "dial"
		if resp != nil {
			op = "handshake"
		}
		return &NetworkError{Op: op, URL: url, Err: err}
	}
	he := &HTTPError{
		Method:          http.MethodGet,
		URL:             url,
		StatusCode:      resp.StatusCode,
		ContentType:     resp.Header.Get("Content-Type"),
		WWWAuthenticate: resp.Header.Get("WWW-Authenticate"),
		RetryAfter:      ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
	}
	if resp.Body != nil {
		// coder/websocket keeps the first KiB of the body.
		he.Body, _ = io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
		resp.Body.Close()
	}
	if len(he.Body) > 0 {
		if m, err := jsonrpc.DecodeMessage(he.Body); err == nil {
			if r, ok := m.(*jsonrpc.Response); ok {
				he.Response = r
			}
		}
	}
	return he
}

// wsConn is a WebSocket connection. Its goroutines (reader, optional
// keepalive) are joined by Close.
type wsConn struct {
	inbox

	ws     *websocket.Conn
	url    string
	limit  int64
	logger *slog.Logger

	pingCtx    context.Context
	cancelPing context.CancelFunc

	// wlock is a channel lock serializing Writes so that the encoding
	// buffer can be reused and a waiting Write can give up on its
	// context without touching the connection (coder/websocket closes
	// the connection when a write's context ends, even while waiting).
	wlock chan struct{}
	wbuf  []byte // guarded by wlock

	version atomic.Pointer[string]
	pingErr atomic.Pointer[error] // set by the keepalive goroutine before it drops the connection

	wg        sync.WaitGroup
	closeOnce sync.Once
}

var (
	_ ProtocolVersionSetter = (*wsConn)(nil)
	_ Kinder                = (*wsConn)(nil)
)

// Kind implements [Kinder].
func (c *wsConn) Kind() string { return KindWebSocket }

// SetProtocolVersion implements [ProtocolVersionSetter]. The WebSocket
// transport has no per-message headers; the version is only recorded.
func (c *wsConn) SetProtocolVersion(version string) { c.version.Store(&version) }

// readLoop is the reader goroutine. Each message is read straight into
// pooled pieces (see [assembler]); one that fits in a piece is decoded from
// it, a larger one is copied once into a buffer of its exact length that
// the decoded message keeps ([jsonrpc.DecodeMessageOwned]) instead of
// copying its result again.
func (c *wsConn) readLoop() {
	defer close(c.readDone)
	var a assembler
	// coder/websocket enforces c.limit (SetReadLimit); the assembler's
	// own bound, a piece more, is a backstop. min first, so that a limit
	// near the largest int cannot wrap.
	backstop := int(min(c.limit, math.MaxInt-chunkSize)) + chunkSize
	for {
		// context.Background, not Read's context: coder/websocket drops
		// the connection when a read's context ends, and a context
		// without Done costs no timer per read. Close ends the read by
		// closing the connection.
		_, r, err := c.ws.Reader(context.Background())
		if err == nil {
			err = a.readFrom(r, backstop)
		}
		if err != nil {
			a.reset()
			c.readErr = c.mapReadErr(err)
			return
		}
		// Text is what the transport specifies; a binary message is
		// decoded all the same, since it can only be JSON here.
		data, owned := a.small(), false
		if data == nil {
			data, owned = a.bytes(nil), true
		}
		if jsonrpc.IsBatch(data) {
			ins := batchInbound(data, c.logger, c.url)
			a.reset()
			if !c.deliverAll(ins) {
				c.readErr = ErrClosed
				return
			}
			continue
		}
		var msg jsonrpc.Message
		if owned {
			msg, err = jsonrpc.DecodeMessageOwned(data)
		} else {
			msg, err = jsonrpc.DecodeMessage(data)
			a.reset()
		}
		if de := answerError(err); de != nil {
			c.logger.Warn("transport: a malformed answer", "url", c.url, "id", de.ID, "err", err)
			if !c.deliverBroken(de) {
				c.readErr = ErrClosed
				return
			}
			continue
		}
		if err != nil {
			c.logger.Warn("transport: skipping a WebSocket message that is not JSON-RPC", "url", c.url, "err", err)
			continue
		}
		if !c.deliver(msg) {
			c.readErr = ErrClosed
			return
		}
	}
}

func (c *wsConn) mapReadErr(err error) error {
	select {
	case <-c.closing:
		return ErrClosed
	default:
	}
	if _, ok := errors.AsType[*MessageTooLargeError](err); ok || errors.Is(err, websocket.ErrMessageTooBig) {
		return &MessageTooLargeError{Limit: int(c.limit)}
	}
	if p := c.pingErr.Load(); p != nil {
		return &NetworkError{Op: "ping", URL: c.url, Err: *p}
	}
	if ce, ok := errors.AsType[websocket.CloseError](err); ok {
		if ce.Reason != "" {
			return fmt.Errorf("%w: the server closed the WebSocket with status %d (%q)", ErrClosed, int(ce.Code), ce.Reason)
		}
		return fmt.Errorf("%w: the server closed the WebSocket with status %d", ErrClosed, int(ce.Code))
	}
	return &NetworkError{Op: "read", URL: c.url, Err: err}
}

// pingLoop is the keepalive goroutine.
func (c *wsConn) pingLoop(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.closing:
			return
		case <-c.readDone:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(c.pingCtx, interval)
		err := c.ws.Ping(ctx)
		cancel()
		if err == nil {
			continue
		}
		select {
		case <-c.closing:
			return
		case <-c.readDone:
			return
		default:
		}
		c.logger.Warn("transport: WebSocket ping failed; dropping the connection", "url", c.url, "err", err)
		c.pingErr.Store(&err)
		// Dropping the connection ends the reader with an error that
		// mapReadErr turns into the ping failure.
		c.ws.CloseNow()
		return
	}
}

// Write implements [Conn]: one text message per JSON-RPC message. If ctx
// ends while the message is being sent, coder/websocket drops the
// connection (a half-sent message cannot be taken back). Once the reader
// saw the connection end, Write sends nothing and fails with an error
// matching [ErrClosed] that wraps no [*NetworkError].
func (c *wsConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case c.wlock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closing:
		return ErrClosed
	}
	defer func() { <-c.wlock }()
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-c.readDone:
		// The connection failed before this write: nothing of it leaves.
		return &endedError{end: c.readErr}
	default:
	}
	b, err := jsonrpc.AppendMessage(c.wbuf[:0], msg)
	if err != nil {
		return fmt.Errorf("transport: encoding message: %w", err)
	}
	if cap(b) <= retainBufferLimit {
		c.wbuf = b
	} else {
		c.wbuf = nil
	}
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		select {
		case <-c.closing:
			return ErrClosed
		case <-c.readDone:
			return c.readErr
		default:
		}
		return &NetworkError{Op: "write", URL: c.url, Err: err}
	}
	return nil
}

// Close runs the close handshake, drops the connection and joins its
// goroutines. The handshake is bounded by coder/websocket: 5 s to send the
// close frame and 5 s for the server's answer, after which the connection
// is dropped anyway. Close returns nil; it is idempotent and safe to call
// concurrently.
func (c *wsConn) Close() error {
	c.closeOnce.Do(func() {
		c.beginClose()
		c.cancelPing()
		// The reader goroutine keeps reading during the handshake: it
		// is what receives the server's close frame.
		if err := c.ws.Close(websocket.StatusNormalClosure, ""); err != nil {
			c.logger.Debug("transport: WebSocket close handshake", "url", c.url, "err", err)
		}
		c.ws.CloseNow()
		c.wg.Wait()
	})
	return nil
}
