package testserver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// session is one legacy (initialize-era) session: a stream connection after
// initialize, or an HTTP/SSE session identified by its id.
type session struct {
	s         *Server
	id        string          // HTTP/SSE session id; "" for stream connections
	transport string          // written once
	ctx       context.Context // canceled by end
	cancel    context.CancelFunc
	notifyOut outbound // session-wide notifications; written once

	mu          sync.Mutex
	version     string                                // guarded by mu
	caps        protocol.ClientCapabilities           // guarded by mu
	initialized bool                                  // guarded by mu
	logLevel    protocol.LoggingLevel                 // guarded by mu
	subs        map[string]bool                       // resources/subscribe URIs; guarded by mu
	pending     map[jsonrpc.ID]chan *jsonrpc.Response // server-to-client requests; guarded by mu
	inflight    map[jsonrpc.ID]context.CancelFunc     // HTTP requests by id; guarded by mu
	streams     map[string]*eventStream               // HTTP resumable streams; guarded by mu
	standalone  *eventStream                          // HTTP GET stream; guarded by mu
	nextReq     int64                                 // guarded by mu
	ended       bool                                  // guarded by mu
}

func (s *Server) newSession(id, transport string, out outbound) *session {
	ctx, cancel := context.WithCancel(s.base)
	ss := &session{
		s: s, id: id, transport: transport, ctx: ctx, cancel: cancel, notifyOut: out,
		version:  s.opts.LegacyVersions[0],
		subs:     map[string]bool{},
		pending:  map[jsonrpc.ID]chan *jsonrpc.Response{},
		inflight: map[jsonrpc.ID]context.CancelFunc{},
		streams:  map[string]*eventStream{},
	}
	s.mu.Lock()
	s.conns[ss] = true
	if id != "" {
		s.sessions[id] = ss
	}
	s.mu.Unlock()
	return ss
}

// dropSession removes ss from the server and ends it.
func (s *Server) dropSession(ss *session) {
	s.mu.Lock()
	delete(s.conns, ss)
	if ss.id != "" && s.sessions[ss.id] == ss {
		delete(s.sessions, ss.id)
	}
	s.mu.Unlock()
	ss.end()
}

// end cancels the session's context, which ends its requests and streams.
func (ss *session) end() {
	ss.mu.Lock()
	ss.ended = true
	streams := make([]*eventStream, 0, len(ss.streams)+1)
	for _, st := range ss.streams {
		streams = append(streams, st)
	}
	if ss.standalone != nil {
		streams = append(streams, ss.standalone)
	}
	ss.mu.Unlock()
	ss.cancel()
	for _, st := range streams {
		st.closeStream()
	}
}

func (ss *session) level() protocol.LoggingLevel {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.logLevel
}

func (ss *session) snapshot() (version string, caps protocol.ClientCapabilities) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.version, ss.caps
}

// deliver routes a client response to the server-to-client request waiting
// for it. It reports whether one was waiting.
func (ss *session) deliver(resp *jsonrpc.Response) bool {
	ss.mu.Lock()
	ch := ss.pending[resp.ID]
	delete(ss.pending, resp.ID)
	ss.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- resp // buffered, one response per request
	return true
}

// sendNotification sends a session-wide notification (list_changed,
// resources/updated, tasks/status).
func (ss *session) sendNotification(method string, params any) {
	n, err := jsonrpc.NewNotification(method, params)
	if err != nil || ss.notifyOut == nil {
		return
	}
	_ = ss.notifyOut.send(n)
}

var errNoSession = errors.New("testserver: no legacy session")

// ask sends a server-to-client request on the call's stream and waits for
// the client's response.
func (c *call) ask(method string, params any) (json.RawMessage, *jsonrpc.Error) {
	if c.sess == nil {
		return nil, jsonrpc.ErrInternal.WithMessage(errNoSession.Error())
	}
	return c.sess.request(c.ctx, c.out, method, params)
}

// request sends a server-to-client request on out and waits for the
// client's response, ctx or the end of the session.
func (ss *session) request(ctx context.Context, out outbound, method string, params any) (json.RawMessage, *jsonrpc.Error) {
	ss.mu.Lock()
	ss.nextReq++
	id := jsonrpc.StringID("srv-" + itoa(ss.nextReq))
	ch := make(chan *jsonrpc.Response, 1)
	ss.pending[id] = ch
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		delete(ss.pending, id)
		ss.mu.Unlock()
	}()
	req, err := jsonrpc.NewRequest(id, method, params)
	if err != nil {
		return nil, jsonrpc.ErrInternal.WithMessage(err.Error())
	}
	if out == nil {
		return nil, jsonrpc.ErrInternal.WithMessage("no stream to send " + method)
	}
	if err := out.send(req); err != nil {
		return nil, jsonrpc.ErrInternal.WithMessage("sending " + method + ": " + err.Error())
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			return nil, resp.Error
		}
		return resp.Result, nil
	case <-ctx.Done():
		return nil, jsonrpc.ErrRequestCancelled.WithMessage("request ended while waiting for " + method)
	case <-ss.ctx.Done():
		return nil, jsonrpc.ErrRequestCancelled.WithMessage("session ended while waiting for " + method)
	}
}

// PingClients sends a legacy ping request to every live legacy session
// (on the stream connection, or on the standalone GET or HTTP+SSE stream)
// at once and waits for the answers. It returns the first error: a JSON-RPC error
// the client answered, or ctx's error if a client did not answer in time.
func (s *Server) PingClients(ctx context.Context) error {
	s.mu.Lock()
	targets := make([]*session, 0, len(s.conns))
	for ss := range s.conns {
		targets = append(targets, ss)
	}
	s.mu.Unlock()
	errs := make(chan error, len(targets))
	var wg sync.WaitGroup
	for _, ss := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ss.request(ctx, ss.notifyOut, protocol.MethodPing, nil)
			if err != nil {
				if ctx.Err() != nil {
					errs <- ctx.Err()
					return
				}
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// dispatchLegacy handles a request of the initialize era.
func (s *Server) dispatchLegacy(c *call) reply {
	if c.sess != nil {
		c.version, c.caps = c.sess.snapshot()
	} else {
		c.version = s.opts.LegacyVersions[0]
	}
	switch c.req.Method {
	case protocol.MethodInitialize:
		return s.initialize(c)
	case protocol.MethodPing:
		return okReply(map[string]any{})
	case protocol.MethodLoggingSetLevel:
		var lvl protocol.LoggingLevel
		if !c.param("level", &lvl) {
			return errReply(jsonrpc.ErrInvalidParams.WithMessage("missing level"))
		}
		if _, ok := levelRank[lvl]; !ok {
			return errReply(jsonrpc.ErrInvalidParams.WithMessage("unknown level"))
		}
		if c.sess != nil {
			c.sess.mu.Lock()
			c.sess.logLevel = lvl
			c.sess.mu.Unlock()
		}
		return okReply(map[string]any{})
	case protocol.MethodResourcesSubscribe, protocol.MethodResourcesUnsubscribe:
		var uri string
		if !c.param("uri", &uri) || uri == "" {
			return errReply(jsonrpc.ErrInvalidParams.WithMessage("missing uri"))
		}
		if c.sess != nil {
			c.sess.mu.Lock()
			if c.req.Method == protocol.MethodResourcesSubscribe {
				c.sess.subs[uri] = true
			} else {
				delete(c.sess.subs, uri)
			}
			c.sess.mu.Unlock()
		}
		return okReply(map[string]any{})
	case protocol.MethodTasksGet, protocol.MethodTasksResult, protocol.MethodTasksList, protocol.MethodTasksCancel:
		if c.version != protocol.Version20251125 {
			return errReply(jsonrpc.ErrMethodNotFound.WithMessage("tasks need 2025-11-25"))
		}
		return s.legacyTaskMethod(c)
	}
	h := commonMethods[c.req.Method]
	if h == nil {
		return errReply(jsonrpc.ErrMethodNotFound.WithMessage("method not found: " + c.req.Method))
	}
	res, err := h(s, c)
	if err != nil {
		return errReply(err)
	}
	return okReply(olderShape(c.version, c.req.Method, res))
}

// initialize negotiates a legacy version and fills the session.
func (s *Server) initialize(c *call) reply {
	var p protocol.InitializeParams
	if len(c.req.Params) == 0 || json.Unmarshal(c.req.Params, &p) != nil {
		return errReply(jsonrpc.ErrInvalidParams.WithMessage("invalid initialize params"))
	}
	version := s.opts.LegacyVersions[0]
	if slices.Contains(s.opts.LegacyVersions, p.ProtocolVersion) ||
		c.transport == TransportSSE && p.ProtocolVersion == protocol.Version20241105 {
		version = p.ProtocolVersion
	}
	if f := c.fault; f != nil && f.Kind == FaultLegacyVersion {
		version = f.Version
		if version == "" {
			version = protocol.Version20241105
		}
	}
	if c.sess != nil {
		c.sess.mu.Lock()
		c.sess.version = version
		c.sess.caps = p.Capabilities
		c.sess.mu.Unlock()
	}
	c.version = version
	return okReply(map[string]any{
		"protocolVersion": version,
		"capabilities":    s.serverCapabilities(false, version),
		"serverInfo":      s.opts.ServerInfo,
		"instructions":    s.opts.Instructions,
	})
}

// legacyNotification handles a client notification in the legacy era (and
// notifications/cancelled in both).
func (s *Server) legacyNotification(ss *session, req *jsonrpc.Request, cancelByID func(jsonrpc.ID)) {
	switch req.Method {
	case protocol.NotificationInitialized:
		if ss != nil {
			ss.mu.Lock()
			ss.initialized = true
			ss.mu.Unlock()
		}
	case protocol.NotificationCancelled:
		var p struct {
			RequestID jsonrpc.ID `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil && p.RequestID.IsValid() && cancelByID != nil {
			cancelByID(p.RequestID)
		}
	case protocol.NotificationRootsListChanged:
		s.rootsChanged(ss)
	}
}

// broadcastLegacy sends a notification to every legacy session whose
// filter accepts it.
func (s *Server) broadcastLegacy(method string, params any, accept func(*session) bool) {
	s.mu.Lock()
	targets := make([]*session, 0, len(s.conns))
	for ss := range s.conns {
		targets = append(targets, ss)
	}
	s.mu.Unlock()
	for _, ss := range targets {
		if accept == nil || accept(ss) {
			ss.sendNotification(method, params)
		}
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
