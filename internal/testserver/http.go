package testserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// Handler returns the Streamable HTTP handler serving both eras on one
// endpoint (according to [Options.Era]):
//
//   - modern: stateless POSTs answered with JSON or an event stream
//     (progress and log notifications on the request's stream,
//     subscriptions/listen as a long-lived stream); GET and DELETE are 405
//     on a modern-only server.
//   - legacy: initialize mints an Mcp-Session-Id that later requests must
//     carry (400 without, 404 when unknown or expired); MCP-Protocol-Version
//     is checked; server-to-client requests go out on the POST's event
//     stream and the client POSTs its responses; GET opens the standalone
//     stream; events carry ids and can be replayed with Last-Event-ID;
//     DELETE ends the session.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hostAllowed(r) {
		s.record(Recorded{Transport: TransportHTTP, HTTPMethod: r.Method, Headers: r.Header.Clone()})
		http.Error(w, "Forbidden: invalid Host or Origin", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		s.httpPost(w, r)
	case http.MethodGet:
		s.httpGet(w, r)
	case http.MethodDelete:
		s.httpDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// hostAllowed is the DNS-rebinding protection of a localhost server: the
// Host, and the Origin when present, must name a loopback host.
func (s *Server) hostAllowed(r *http.Request) bool {
	if s.opts.AllowAnyHost {
		return true
	}
	if !loopbackHost(r.Host) {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !loopbackHost(u.Host) {
			return false
		}
	}
	return true
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// writeJSONResponse writes one JSON-RPC response as application/json.
func writeJSONResponse(w http.ResponseWriter, status int, resp *jsonrpc.Response) {
	b, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeRPCError(w http.ResponseWriter, status int, code int64, msg string) {
	writeJSONResponse(w, status, jsonrpc.NewErrorResponse(jsonrpc.ID{}, jsonrpc.NewError(code, msg)))
}

// hijackClose drops the connection without an HTTP response.
func hijackClose(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// writeFaultStatus answers a FaultHTTPStatus.
func writeFaultStatus(w http.ResponseWriter, f *Fault) {
	for k, vs := range f.Header {
		w.Header()[k] = vs
	}
	ct := f.ContentType
	if ct == "" && f.Body != "" {
		if strings.HasPrefix(strings.TrimSpace(f.Body), "{") {
			ct = "application/json"
		} else {
			ct = "text/plain; charset=utf-8"
		}
	}
	if ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	status := f.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, f.Body)
}

func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// readBody reads a request body of at most the configured size.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(s.opts.MaxMessageSize)+1))
	if err != nil {
		http.Error(w, "reading body", http.StatusBadRequest)
		return nil, false
	}
	if len(body) > s.opts.MaxMessageSize {
		http.Error(w, "message too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	return body, true
}

// decodeBody decodes a POSTed body; on failure it records rec and answers
// 400 with a parse or invalid-request error.
func (s *Server) decodeBody(w http.ResponseWriter, body []byte, rec Recorded) (jsonrpc.Message, bool) {
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		s.record(rec)
		code := jsonrpc.CodeInvalidRequest
		if errors.Is(err, jsonrpc.ErrParse) {
			code = jsonrpc.CodeParseError
		}
		writeRPCError(w, http.StatusBadRequest, code, err.Error())
		return nil, false
	}
	return msg, true
}

func (s *Server) httpPost(w http.ResponseWriter, r *http.Request) {
	s.enter()
	defer s.leave()
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	sid := r.Header.Get(protocol.HeaderSessionID)
	rec := Recorded{Transport: TransportHTTP, HTTPMethod: http.MethodPost, Raw: body, Headers: r.Header.Clone(), SessionID: sid}
	msg, ok := s.decodeBody(w, body, rec)
	if !ok {
		return
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		rec.ID = resp.ID
		s.record(rec)
		ss := s.lookupSession(sid)
		if ss == nil || s.opts.Era == ModernOnly {
			writeRPCError(w, http.StatusBadRequest, -32000, "Bad Request: responses need a legacy session")
			return
		}
		ss.deliver(resp)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	req := msg.(*jsonrpc.Request)
	rec.Method, rec.ID, rec.Params = req.Method, req.ID, req.Params
	s.record(rec)

	f := s.takeFault(TransportHTTP, req.Method, true)
	if f != nil {
		switch f.Kind {
		case FaultHTTPStatus:
			writeFaultStatus(w, f)
			return
		case FaultReset, FaultExit:
			hijackClose(w)
			return
		}
	}
	if s.wantsModernHTTP(req, sid) {
		s.modernPost(w, r, req, f)
		return
	}
	s.legacyPost(w, r, req, sid, f)
}

func (s *Server) wantsModernHTTP(req *jsonrpc.Request, sid string) bool {
	switch s.opts.Era {
	case ModernOnly:
		return true
	case LegacyOnly:
		return false
	}
	if sid != "" {
		return false
	}
	// Without a session, only initialize opens the legacy era; anything
	// else is a (possibly malformed) modern request.
	return req.Method != protocol.MethodInitialize || s.wantsModern(req)
}

func (s *Server) lookupSession(sid string) *session {
	if sid == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[sid]
}

func (s *Server) streamOpts(f *Fault) serveOpts {
	o := serveOpts{jsonOK: !s.opts.SSEResponses}
	if f != nil {
		switch f.Kind {
		case FaultRespondSSE:
			o.jsonOK = false
		case FaultRespondJSON:
			o.jsonOK = true
		case FaultBreakStream, FaultBreakExpire:
			o.jsonOK = false
			o.breakAfter = true
		}
	}
	return o
}

func (s *Server) modernPost(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request, f *Fault) {
	if req.IsNotification() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	// Closing the response stream cancels a modern request.
	ctx, cancel := s.serverCtx(r.Context())
	defer cancel()
	st := newEventStream(s, "", false)
	c := &call{s: s, ctx: ctx, transport: TransportHTTP, httpish: true, req: req, modern: true, headers: r.Header, out: st, fault: f}
	s.enter()
	if !s.goTracked(func() {
		defer s.leave()
		s.finish(c, st)
	}) {
		s.leave()
		http.Error(w, "server closed", http.StatusServiceUnavailable)
		return
	}
	if req.Method == protocol.MethodSubscriptionsListen {
		// A listen's acknowledgement comes at once; answer with a stream.
		o := s.streamOpts(f)
		o.jsonOK = false
		st.serve(w, r, o)
		return
	}
	st.serve(w, r, s.streamOpts(f))
}

// finish runs the dispatch of c and queues its response on st.
func (s *Server) finish(c *call, st *eventStream) reply {
	rep := s.dispatch(c)
	if rep.silent || rep.exit {
		return rep
	}
	if c.ctx.Err() != nil {
		// Cancelled: no response; let the attached writer go.
		st.closeStream()
		return rep
	}
	b, err := jsonrpc.EncodeMessage(response(c.req.ID, rep))
	if err != nil {
		return rep
	}
	st.push(b, true, c.httpStatus(rep))
	return rep
}

func (s *Server) legacyPost(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request, sid string, f *Fault) {
	var ss *session
	if req.Method == protocol.MethodInitialize && sid == "" {
		if s.opts.Era == ModernOnly {
			writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "initialize is not supported")
			return
		}
		id := newSessionID()
		standalone := newEventStream(s, id+"-get", true)
		ss = s.newSession(id, TransportHTTP, standalone)
		ss.mu.Lock()
		ss.standalone = standalone
		ss.streams[standalone.id] = standalone
		ss.mu.Unlock()
		w.Header().Set(protocol.HeaderSessionID, id)
	} else {
		if sid == "" {
			writeRPCError(w, http.StatusBadRequest, -32000, "Bad Request: No valid session ID provided")
			return
		}
		if ss = s.lookupSession(sid); ss == nil {
			writeRPCError(w, http.StatusNotFound, -32001, "Session not found")
			return
		}
		if f != nil && f.Kind == FaultExpireSession {
			s.dropSession(ss)
			writeRPCError(w, http.StatusNotFound, -32001, "Session not found")
			return
		}
		version, _ := ss.snapshot()
		if pv := r.Header.Get(protocol.HeaderProtocolVersion); pv != "" && pv != version {
			writeRPCError(w, http.StatusBadRequest, -32000, "Bad Request: unsupported MCP-Protocol-Version "+pv)
			return
		}
	}
	if req.IsNotification() {
		s.legacyNotification(ss, req, ss.cancelByID)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	// Disconnection is not cancellation in the legacy era: the request
	// lives in the session's context and is cancelled only by
	// notifications/cancelled or the end of the session.
	ctx, cancel := context.WithCancel(ss.ctx)
	st := newEventStream(s, s.newID("s")+"-"+ss.id[:min(8, len(ss.id))], true)
	ss.mu.Lock()
	ss.inflight[req.ID] = cancel
	ss.streams[st.id] = st
	ss.pruneStreamsLocked()
	ss.mu.Unlock()
	c := &call{s: s, ctx: ctx, transport: TransportHTTP, httpish: true, req: req, headers: r.Header, sess: ss, out: st, fault: f}
	expire := f != nil && f.Kind == FaultBreakExpire
	ran := make(chan struct{})
	s.enter()
	started := s.goTracked(func() {
		defer s.leave()
		defer ss.endCall(req.ID, cancel)
		rep := s.finish(c, st)
		if req.Method == protocol.MethodInitialize && rep.err != nil || expire {
			// A failed initialize leaves no session behind; so does
			// FaultBreakExpire, once the request ran.
			s.dropSession(ss)
		}
		close(ran)
	})
	if !started {
		s.leave()
		cancel()
		http.Error(w, "server closed", http.StatusServiceUnavailable)
		return
	}
	s.serveLegacyAnswer(w, r, st, f, expire, ran)
}

// serveLegacyAnswer writes the answer stream of a legacy POST; with a
// FaultBreakExpire (expire), only once the request ran and its session is
// gone (ran closed), so that the resumption GET cannot find it.
func (s *Server) serveLegacyAnswer(w http.ResponseWriter, r *http.Request, st *eventStream, f *Fault, expire bool, ran <-chan struct{}) {
	o := s.streamOpts(f)
	o.priming = s.opts.PrimingEvents || o.breakAfter
	if expire {
		select {
		case <-ran:
		case <-r.Context().Done():
			return
		}
	}
	st.serve(w, r, o)
}

// pruneStreamsLocked forgets completed POST streams beyond a bound, so a
// long session does not grow without limit. ss.mu must be held.
func (ss *session) pruneStreamsLocked() {
	const maxStreams = 256
	if len(ss.streams) <= maxStreams {
		return
	}
	for id, st := range ss.streams {
		if st == ss.standalone {
			continue
		}
		st.mu.Lock()
		done := st.final || st.closed
		st.mu.Unlock()
		if done {
			delete(ss.streams, id)
		}
		if len(ss.streams) <= maxStreams/2 {
			return
		}
	}
}

// endCall forgets the in-flight request id and releases its context.
func (ss *session) endCall(id jsonrpc.ID, cancel context.CancelFunc) {
	ss.mu.Lock()
	delete(ss.inflight, id)
	ss.mu.Unlock()
	cancel()
}

func (ss *session) cancelByID(id jsonrpc.ID) {
	ss.mu.Lock()
	cancel := ss.inflight[id]
	ss.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// legacySession records a GET or DELETE and returns the legacy session its
// Mcp-Session-Id names. Otherwise it answers (405 for a modern-only server,
// 400 without a session ID, 404 for an unknown one) and returns nil.
func (s *Server) legacySession(w http.ResponseWriter, r *http.Request) *session {
	sid := r.Header.Get(protocol.HeaderSessionID)
	s.record(Recorded{Transport: TransportHTTP, HTTPMethod: r.Method, Headers: r.Header.Clone(), SessionID: sid})
	if s.opts.Era == ModernOnly {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return nil
	}
	if sid == "" {
		writeRPCError(w, http.StatusBadRequest, -32000, "Bad Request: No valid session ID provided")
		return nil
	}
	ss := s.lookupSession(sid)
	if ss == nil {
		writeRPCError(w, http.StatusNotFound, -32001, "Session not found")
		return nil
	}
	return ss
}

func (s *Server) httpGet(w http.ResponseWriter, r *http.Request) {
	ss := s.legacySession(w, r)
	if ss == nil {
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "GET needs Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	if last := r.Header.Get(protocol.HeaderLastEventID); last != "" {
		streamID, seq, ok := parseEventID(last)
		ss.mu.Lock()
		st := ss.streams[streamID]
		ss.mu.Unlock()
		if !ok || st == nil {
			http.Error(w, "unknown Last-Event-ID", http.StatusBadRequest)
			return
		}
		st.serve(w, r, serveOpts{from: seq + 1, flushEarly: true})
		return
	}
	ss.mu.Lock()
	st := ss.standalone
	ss.mu.Unlock()
	if st == nil {
		http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
		return
	}
	if st.attached() {
		http.Error(w, "a standalone stream is already open", http.StatusConflict)
		return
	}
	st.serve(w, r, serveOpts{flushEarly: true, priming: s.opts.PrimingEvents})
}

func (s *Server) httpDelete(w http.ResponseWriter, r *http.Request) {
	ss := s.legacySession(w, r)
	if ss == nil {
		return
	}
	s.dropSession(ss)
	w.WriteHeader(http.StatusOK)
}
