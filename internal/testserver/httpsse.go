package testserver

import (
	"context"
	"net/http"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// SSEHandler returns a handler for the deprecated 2024-11-05 HTTP+SSE
// transport, legacy era only: GET opens the event stream whose first event
// is "endpoint" (the URL to POST to, this path with ?sessionId=…); POSTs to
// that endpoint are answered 202 and their responses, like every server
// request and notification, arrive on the stream as "message" events. A
// POST without a sessionId is answered 404, which is how such a server
// rejects Streamable HTTP.
func (s *Server) SSEHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			s.sseGet(w, r)
		case http.MethodPost:
			s.ssePost(w, r)
		default:
			w.Header().Set("Allow", "GET, POST")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
}

func (s *Server) sseGet(w http.ResponseWriter, r *http.Request) {
	s.record(Recorded{Transport: TransportSSE, HTTPMethod: http.MethodGet, Headers: r.Header.Clone()})
	id := newSessionID()
	st := newEventStream(s, "", false)
	st.eventName = "message"
	ss := s.newSession(id, TransportSSE, st)
	defer s.dropSession(ss)
	ss.mu.Lock()
	ss.standalone = st
	ss.mu.Unlock()
	endpoint := r.URL.Path + "?sessionId=" + id
	st.serve(w, r, serveOpts{flushEarly: true, preamble: "event: endpoint\ndata: " + endpoint + "\n\n"})
}

func (s *Server) ssePost(w http.ResponseWriter, r *http.Request) {
	s.enter()
	defer s.leave()
	sid := r.URL.Query().Get("sessionId")
	body, ok := s.readBody(w, r)
	if !ok {
		return
	}
	rec := Recorded{Transport: TransportSSE, HTTPMethod: http.MethodPost, Raw: body, Headers: r.Header.Clone(), SessionID: sid}
	ss := s.lookupSession(sid)
	if ss == nil || ss.transport != TransportSSE {
		s.record(rec)
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	msg, ok := s.decodeBody(w, body, rec)
	if !ok {
		return
	}
	switch m := msg.(type) {
	case *jsonrpc.Response:
		rec.ID = m.ID
		s.record(rec)
		ss.deliver(m)
	case *jsonrpc.Request:
		rec.Method, rec.ID, rec.Params = m.Method, m.ID, m.Params
		s.record(rec)
		if m.IsNotification() {
			s.legacyNotification(ss, m, ss.cancelByID)
			break
		}
		f := s.takeFault(TransportSSE, m.Method, false)
		ss.mu.Lock()
		st := ss.standalone
		ss.mu.Unlock()
		ctx, cancel := context.WithCancel(ss.ctx)
		ss.mu.Lock()
		ss.inflight[m.ID] = cancel
		ss.mu.Unlock()
		// The HTTP+SSE transport is legacy-only whatever Options.Era says.
		c := &call{s: s, ctx: ctx, transport: TransportSSE, req: m, sess: ss, out: st, fault: f}
		s.enter()
		started := s.goTracked(func() {
			defer s.leave()
			defer ss.endCall(m.ID, cancel)
			rep := s.dispatch(c)
			if rep.exit {
				// The closest thing to a process exit: drop the stream.
				st.closeStream()
				return
			}
			if rep.silent || ctx.Err() != nil {
				return
			}
			_ = st.send(response(m.ID, rep))
		})
		if !started {
			s.leave()
			cancel()
			http.Error(w, "server closed", http.StatusServiceUnavailable)
			return
		}
	}
	w.WriteHeader(http.StatusAccepted)
}
