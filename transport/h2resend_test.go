package transport_test

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/conduitmcp/conduit/transport"
)

// h2Server is an HTTP/2 server with prior knowledge (h2c) on 127.0.0.1
// that speaks just enough of the framing for these tests: it counts the
// requests whose body it received whole, resets the first resets of them
// with RST_STREAM of code reset (after it received the request: a broken
// server or proxy that ran it), or, with resets 0 and redirect set,
// answers the first with 307 to another path; it answers the others with
// a JSON-RPC result for the request's id.
type h2Server struct {
	ln       net.Listener
	scheme   string       // http (prior knowledge) or https (ALPN)
	reset    uint32       // the RST_STREAM error code of the first `resets` requests
	resets   int32        // how many requests are reset
	redirect bool         // the first request is answered 307
	hint     bool         // a reset is preceded by a 103 (Early Hints) response
	requests atomic.Int32 // requests received whole
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

func newH2Server(t *testing.T, code uint32, resets int32, redirect, hint bool) *h2Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startH2Server(t, ln, "http", code, resets, redirect, hint)
}

// newH2TLSServer is newH2Server over TLS, the protocol negotiated by
// ALPN, and the client that trusts it.
func newH2TLSServer(t *testing.T, code uint32, resets int32) (*h2Server, *http.Client) {
	t.Helper()
	hs := httptest.NewUnstartedServer(http.NotFoundHandler())
	hs.EnableHTTP2 = true
	hs.StartTLS() // for its certificate and a client that trusts it
	t.Cleanup(hs.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = tls.NewListener(ln, &tls.Config{Certificates: hs.TLS.Certificates, NextProtos: []string{"h2"}})
	hc := hs.Client()
	t.Cleanup(hc.CloseIdleConnections)
	return startH2Server(t, ln, "https", code, resets, false, false), hc
}

func startH2Server(t *testing.T, ln net.Listener, scheme string, code uint32, resets int32, redirect, hint bool) *h2Server {
	s := &h2Server{ln: ln, scheme: scheme, reset: code, resets: resets, redirect: redirect, hint: hint}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *h2Server) url() string { return s.scheme + "://" + s.ln.Addr().String() + "/mcp" }

// HTTP/2 frame types and flags (RFC 9113, section 6).
const (
	h2Data         = 0x0
	h2Headers      = 0x1
	h2RSTStream    = 0x3
	h2Settings     = 0x4
	h2GoAway       = 0x7
	h2EndStream    = 0x1
	h2EndHeaders   = 0x4
	h2Ack          = 0x1
	h2ProtocolErr  = 0x1
	h2RefusedErr   = 0x7
	h2ClientPrefix = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
)

func h2Frame(w io.Writer, typ, flags byte, stream uint32, payload []byte) error {
	var h [9]byte
	h[0], h[1], h[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	h[3], h[4] = typ, flags
	binary.BigEndian.PutUint32(h[5:], stream)
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

func (s *h2Server) serve(c net.Conn) {
	r := bufio.NewReader(c)
	pre := make([]byte, len(h2ClientPrefix))
	if _, err := io.ReadFull(r, pre); err != nil || string(pre) != h2ClientPrefix {
		return
	}
	if h2Frame(c, h2Settings, 0, 0, nil) != nil {
		return
	}
	bodies := map[uint32][]byte{}
	for {
		var h [9]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return
		}
		n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		typ, flags, stream := h[3], h[4], binary.BigEndian.Uint32(h[5:])&0x7fffffff
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return
		}
		switch {
		case typ == h2Settings && flags&h2Ack == 0:
			if h2Frame(c, h2Settings, h2Ack, 0, nil) != nil {
				return
			}
		case typ == h2Headers:
			bodies[stream] = []byte{}
		case typ == h2Data:
			bodies[stream] = append(bodies[stream], payload...)
			if flags&h2EndStream == 0 {
				continue
			}
			k := s.requests.Add(1)
			if k == 1 && s.redirect {
				// HPACK: :status (static index 8) 307 and location
				// (static index 46), literals without indexing.
				hdr := append([]byte{0x08, 3}, "307"...)
				hdr = append(append(hdr, 0x0f, 46-15, byte(len("/moved"))), "/moved"...)
				if h2Frame(c, h2Headers, h2EndHeaders|h2EndStream, stream, hdr) != nil {
					return
				}
				continue
			}
			if k <= s.resets {
				if s.hint {
					hdr := append([]byte{0x08, 3}, "103"...) // :status 103
					if h2Frame(c, h2Headers, h2EndHeaders, stream, hdr) != nil {
						return
					}
				}
				var code [4]byte
				binary.BigEndian.PutUint32(code[:], s.reset)
				if h2Frame(c, h2RSTStream, 0, stream, code[:]) != nil {
					return
				}
				continue
			}
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(bodies[stream], &req)
			body := []byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{}}`)
			// HPACK: :status 200 (static index 8), then content-type
			// (static index 31) as a literal without indexing.
			hdr := append([]byte{0x88, 0x0f, 0x10, byte(len("application/json"))}, "application/json"...)
			if h2Frame(c, h2Headers, h2EndHeaders, stream, hdr) != nil || h2Frame(c, h2Data, h2EndStream, stream, body) != nil {
				return
			}
		case typ == h2GoAway:
			return
		}
	}
}

// h2Client is an HTTP client that speaks HTTP/2 with prior knowledge.
func h2Client(t *testing.T) *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// TestH2ResetPOSTNotResent: an HTTP/2 server (or proxy) that receives a
// POST whole and then resets its stream with PROTOCOL_ERROR, before any
// response, may have run the request. net/http re-sends a request whose
// body it can get again (Request.GetBody) after such a reset, up to six
// times, and the Write would then succeed with the answer of a second
// execution: a silent duplicate, under any replay policy. The POST is
// sent once, and the Write fails as possibly delivered: a
// *transport.NetworkError without Unsent; so is one reset after an
// informational (103) response, which is no answer.
func TestH2ResetPOSTNotResent(t *testing.T) {
	for _, via := range []string{"h2c", "tls", "h2c-after-103"} {
		t.Run(via, func(t *testing.T) {
			var srv *h2Server
			var hc *http.Client
			if via == "tls" {
				srv, hc = newH2TLSServer(t, h2ProtocolErr, 1)
			} else {
				srv, hc = newH2Server(t, h2ProtocolErr, 1, false, via == "h2c-after-103"), h2Client(t)
			}
			c := httpDial(t, &transport.StreamableHTTP{URL: srv.url(), HTTPClient: hc})
			err := c.Write(httpCtx(t), httpRequest(t, 1, "tools/call", map[string]any{"name": "charge"}))
			if n := srv.requests.Load(); n != 1 {
				t.Errorf("the server received the POST %d times, want 1 (Write = %v)", n, err)
			}
			ne, ok := errors.AsType[*transport.NetworkError](err)
			if !ok || ne.Unsent {
				t.Errorf("Write = %v, want a *transport.NetworkError without Unsent (possibly delivered)", err)
			}
		})
	}
}

// TestH2RedirectPOSTFollowed: a POST answered 307 over HTTP/2 is sent
// again to the new location (the body given again), as over HTTP/1.1:
// the server answered it, so it did not run it.
func TestH2RedirectPOSTFollowed(t *testing.T) {
	srv := newH2Server(t, 0, 0, true, false)
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.url(), HTTPClient: h2Client(t)})
	if err := c.Write(httpCtx(t), httpRequest(t, 1, "tools/call", map[string]any{"name": "charge"})); err != nil {
		t.Fatalf("Write = %v, want the redirect followed", err)
	}
	if m := httpMustRead(t, c); m == nil {
		t.Fatal("no response")
	}
	if n := srv.requests.Load(); n != 2 {
		t.Errorf("the server received %d POSTs, want 2 (the redirected one and its new location's)", n)
	}
}
