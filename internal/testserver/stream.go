package testserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// msgConn is a message-framed connection: lines (stdio) or WebSocket
// frames.
type msgConn interface {
	// readMsg returns the next message; errTooLarge for an oversized one
	// (the connection stays usable).
	readMsg(ctx context.Context) ([]byte, error)
	// writeMsg writes one message; the caller serializes writes.
	writeMsg(ctx context.Context, b []byte) error
	// close unblocks readMsg and writeMsg.
	close() error
}

var errTooLarge = errors.New("testserver: message too large")

// eofGrace bounds how long a stream whose input ended waits for its
// in-flight requests to answer before it closes.
const eofGrace = 5 * time.Second

// ServeStream serves newline-delimited JSON-RPC read from r and written to
// w, as on stdio, until r ends, ctx ends or a [FaultExit] fires (then it
// returns [ErrExit]). Banner lines of [Options] are written first. On return
// r and w are closed if they implement io.Closer, which stops the reader;
// every goroutine ServeStream started has exited when it returns.
func (s *Server) ServeStream(ctx context.Context, r io.Reader, w io.Writer) error {
	lc := &lineConn{br: bufio.NewReaderSize(r, 64<<10), r: r, w: w, max: s.opts.MaxMessageSize}
	for _, line := range s.opts.Banner {
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			return err
		}
	}
	return s.serveConn(ctx, lc, TransportStdio, nil)
}

// Pipe serves a fresh in-memory connection with [Server.ServeStream] and
// returns the client's ends: r reads what the server writes, w writes to the
// server. Closing w (or canceling ctx, or closing the server) ends serving;
// wait blocks until ServeStream has returned and returns its error. Callers
// must eventually close w or cancel ctx and then call wait.
func (s *Server) Pipe(ctx context.Context) (r io.ReadCloser, w io.WriteCloser, wait func() error) {
	cr, cw := io.Pipe() // client -> server
	sr, sw := io.Pipe() // server -> client
	done := make(chan error, 1)
	go func() { done <- s.ServeStream(ctx, cr, sw) }()
	return sr, cw, func() error { return <-done }
}

type lineConn struct {
	br  *bufio.Reader
	r   io.Reader
	w   io.Writer
	max int
}

func (l *lineConn) readMsg(ctx context.Context) ([]byte, error) {
	var buf []byte
	tooLarge := false
	for {
		chunk, err := l.br.ReadSlice('\n')
		if !tooLarge {
			if len(buf)+len(chunk) > l.max+1 {
				tooLarge, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLarge {
				return nil, errTooLarge
			}
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(bytes.TrimSpace(buf)) > 0 && !tooLarge:
			return buf, nil
		default:
			return nil, err
		}
	}
}

func (l *lineConn) writeMsg(_ context.Context, b []byte) error {
	_, err := l.w.Write(append(b, '\n'))
	return err
}

func (l *lineConn) close() error {
	var err error
	if c, ok := l.r.(io.Closer); ok {
		err = c.Close()
	}
	if c, ok := l.w.(io.Closer); ok {
		if e := c.Close(); err == nil {
			err = e
		}
	}
	return err
}

// streamConn serves one message-framed connection: both eras, with a
// legacy session created on the first legacy request.
type streamConn struct {
	s         *Server
	transport string
	headers   http.Header // the WebSocket upgrade request's headers; nil for streams
	mc        msgConn
	ctx       context.Context // canceled when serving ends
	wmu       sync.Mutex      // serializes writes to mc

	mu       sync.Mutex
	sess     *session                          // guarded by mu; nil until a legacy request
	inflight map[jsonrpc.ID]context.CancelFunc // guarded by mu
	listens  map[jsonrpc.ID]bool               // in-flight subscriptions/listen ids; guarded by mu
	exit     chan struct{}                     // closed by the first FaultExit
	exitOnce sync.Once
}

type readResult struct {
	b   []byte
	err error
}

func (s *Server) serveConn(ctx context.Context, mc msgConn, transport string, headers http.Header) error {
	ctx, cancel := s.serverCtx(ctx)
	defer cancel()
	c := &streamConn{s: s, transport: transport, headers: headers, mc: mc, ctx: ctx, inflight: map[jsonrpc.ID]context.CancelFunc{}, listens: map[jsonrpc.ID]bool{}, exit: make(chan struct{})}
	var handlers sync.WaitGroup
	reads := make(chan readResult)
	readerDone := make(chan struct{})
	// The reader goroutine turns the blocking reads into channel sends so
	// the loop below can also watch ctx and the exit fault; it ends when
	// the connection is closed.
	go func() {
		defer close(readerDone)
		for {
			b, err := mc.readMsg(ctx)
			select {
			case reads <- readResult{b, err}:
			case <-ctx.Done():
				return
			}
			if err != nil && !errors.Is(err, errTooLarge) {
				return
			}
		}
	}()
	var result error
	eof := false
loop:
	for {
		select {
		case rr := <-reads:
			if errors.Is(rr.err, errTooLarge) {
				c.writeMessage(jsonrpc.NewErrorResponse(jsonrpc.ID{}, jsonrpc.ErrInvalidRequest.WithMessage("message too large")))
				continue
			}
			if rr.err != nil {
				if !errors.Is(rr.err, io.EOF) {
					result = rr.err
				} else {
					eof = true
				}
				break loop
			}
			c.handleRaw(rr.b, &handlers)
		case <-c.exit:
			result = ErrExit
			break loop
		case <-ctx.Done():
			result = ctx.Err()
			break loop
		}
	}
	// drained is closed when every request handler has returned.
	drained := make(chan struct{})
	go func() {
		handlers.Wait()
		close(drained)
	}()
	if eof && c.drainAfterEOF(ctx, drained) {
		result = ErrExit
	}
	cancel()
	_ = mc.close() // unblocks the reader and any blocked write
	<-readerDone
	<-drained
	c.mu.Lock()
	ss := c.sess
	c.mu.Unlock()
	if ss != nil {
		s.dropSession(ss)
	}
	return result
}

// drainAfterEOF runs when the client closed its side: it lets the requests
// that can still finish write their responses (bounded by eofGrace), but
// ends the ones that wait for the client: listens and server-to-client
// requests. It reports whether an exit fault fired meanwhile (by a request
// read before the end of input).
func (c *streamConn) drainAfterEOF(ctx context.Context, drained <-chan struct{}) bool {
	c.mu.Lock()
	for id := range c.listens {
		c.inflight[id]()
	}
	if c.sess != nil {
		c.sess.cancel()
	}
	c.mu.Unlock()
	grace := time.NewTimer(eofGrace)
	defer grace.Stop()
	select {
	case <-drained:
	case <-ctx.Done():
	case <-grace.C:
	case <-c.exit:
	}
	select {
	case <-c.exit:
		return true
	default:
		return false
	}
}

// send implements outbound: it writes a message on the connection.
func (c *streamConn) send(m jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	return c.writeRaw(b)
}

func (c *streamConn) writeRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.ctx.Err() != nil {
		return c.ctx.Err()
	}
	return c.mc.writeMsg(c.ctx, b)
}

func (c *streamConn) writeMessage(m jsonrpc.Message) {
	if err := c.send(m); err != nil {
		c.s.logger.Debug("testserver: write", "err", err)
	}
}

// session returns the connection's legacy session, creating it.
func (c *streamConn) session() *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil {
		c.sess = c.s.newSession("", c.transport, c)
	}
	return c.sess
}

func (c *streamConn) cancelByID(id jsonrpc.ID) {
	c.mu.Lock()
	cancel := c.inflight[id]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (c *streamConn) handleRaw(b []byte, handlers *sync.WaitGroup) {
	c.s.enter()
	defer c.s.leave()
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	raw := append([]byte(nil), b...)
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		c.s.record(Recorded{Transport: c.transport, Raw: raw, Headers: c.headers})
		code := jsonrpc.ErrInvalidRequest
		if errors.Is(err, jsonrpc.ErrParse) {
			code = jsonrpc.ErrParse
		}
		c.writeMessage(jsonrpc.NewErrorResponse(jsonrpc.ID{}, code.WithMessage(err.Error())))
		return
	}
	c.mu.Lock()
	ss := c.sess
	c.mu.Unlock()
	sid := ""
	if ss != nil {
		sid = ss.id
	}
	switch m := msg.(type) {
	case *jsonrpc.Response:
		c.s.record(Recorded{Transport: c.transport, ID: m.ID, Raw: raw, SessionID: sid, Headers: c.headers})
		if ss != nil {
			ss.deliver(m)
		}
	case *jsonrpc.Request:
		c.s.record(Recorded{Transport: c.transport, Method: m.Method, ID: m.ID, Params: m.Params, Raw: raw, SessionID: sid, Headers: c.headers})
		if m.IsNotification() {
			c.s.legacyNotification(ss, m, c.cancelByID)
			return
		}
		c.startRequest(m, handlers)
	}
}

func (c *streamConn) startRequest(req *jsonrpc.Request, handlers *sync.WaitGroup) {
	cl := &call{s: c.s, transport: c.transport, req: req, out: c, modern: c.s.wantsModern(req)}
	if !cl.modern {
		cl.sess = c.session()
	}
	cl.fault = c.s.takeFault(c.transport, req.Method, false)
	ctx, cancel := context.WithCancel(c.ctx)
	cl.ctx = ctx
	c.mu.Lock()
	c.inflight[req.ID] = cancel
	if req.Method == protocol.MethodSubscriptionsListen {
		c.listens[req.ID] = true
	}
	c.mu.Unlock()
	c.s.enter() // left by runRequest
	if req.Method == protocol.MethodInitialize && !cl.modern {
		// initialize runs inline so requests pipelined after it see the
		// negotiated session; it never blocks.
		handlers.Add(1)
		c.runRequest(cl, req, cancel, handlers)
		return
	}
	handlers.Add(1)
	// Each request runs on its own goroutine so that slow tools, listens
	// and server-to-client requests do not block the reader.
	go c.runRequest(cl, req, cancel, handlers)
}

// runRequest dispatches one request and writes its response.
func (c *streamConn) runRequest(cl *call, req *jsonrpc.Request, cancel context.CancelFunc, handlers *sync.WaitGroup) {
	ctx := cl.ctx
	defer handlers.Done()
	defer c.s.leave()
	defer func() {
		c.mu.Lock()
		delete(c.inflight, req.ID)
		delete(c.listens, req.ID)
		c.mu.Unlock()
		cancel()
	}()
	rep := c.s.dispatch(cl)
	if rep.exit {
		c.exitOnce.Do(func() { close(c.exit) })
		return
	}
	if rep.silent || ctx.Err() != nil {
		// Cancelled requests get no response (both eras).
		return
	}
	if f := cl.fault; f != nil && f.Kind == FaultNoise {
		body := f.Body
		if body == "" {
			body = "conduit-testserver starting...\nlistening on stdio"
		}
		for _, line := range strings.Split(body, "\n") {
			_ = c.writeRaw([]byte(line))
		}
	}
	c.writeMessage(response(req.ID, rep))
}
