package transport_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// sseServer is a 2024-11-05 HTTP+SSE server: GET /sse streams the endpoint
// event and then every response; POST /messages accepts messages.
func sseServer(t *testing.T, endpoint string) (*httptest.Server, chan http.Header) {
	posts := make(chan http.Header, 4)
	srv := sseServerFunc(t, endpoint, func(r *http.Request) (int, []string) {
		if r.URL.Query().Get("session") != "abc" {
			return http.StatusBadRequest, nil
		}
		req := httpReadRequest(t, r)
		posts <- r.Header.Clone()
		return http.StatusAccepted, []string{httpResult(req.ID, `{"via":"sse"}`)}
	})
	return srv, posts
}

// sseServerFunc is an HTTP+SSE server whose GET /sse streams the endpoint
// event and then, as message events, what post returns for each POST to
// /messages (after answering it with post's status).
func sseServerFunc(t *testing.T, endpoint string, post func(r *http.Request) (status int, out []string)) *httptest.Server {
	out := make(chan string, 4)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		httpWriteSSE(w, ": hello\n\nevent: endpoint\ndata: "+endpoint+"\n\n")
		for {
			select {
			case m := <-out:
				httpWriteSSE(w, "event: message\ndata: "+m+"\n\n")
			case <-r.Context().Done():
				return
			}
		}
	})
	mux.HandleFunc("POST /messages", func(w http.ResponseWriter, r *http.Request) {
		status, msgs := post(r)
		w.WriteHeader(status)
		for _, m := range msgs {
			out <- m
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestSSEEndpointFlow(t *testing.T) {
	srv, posts := sseServer(t, "/messages?session=abc")
	c := httpDial(t, &transport.SSE{
		URL:         srv.URL + "/sse",
		TokenSource: transport.TokenSourceFunc(func(context.Context) (string, error) { return "t", nil }),
	})
	if k := c.(transport.Kinder).Kind(); k != transport.KindSSE {
		t.Errorf("Kind = %q", k)
	}
	if err := c.Write(httpCtx(t), httpRequest(t, 1, "initialize", nil)); err != nil {
		t.Fatal(err)
	}
	r := httpMustResponse(t, c, 1)
	if string(r.Result) != `{"via":"sse"}` {
		t.Errorf("result = %s", r.Result)
	}
	if h := <-posts; h.Get("Authorization") != "Bearer t" || h.Get("Content-Type") != "application/json" {
		t.Errorf("POST headers = %v", h)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(httpCtx(t)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read after Close = %v, want ErrClosed", err)
	}
}

func TestSSEEndpointOtherOriginRejected(t *testing.T) {
	srv, _ := sseServer(t, "http://evil.example/messages?session=abc")
	if c, err := (&transport.SSE{URL: srv.URL + "/sse"}).Connect(httpCtx(t)); err == nil {
		c.Close()
		t.Fatal("Connect accepted an endpoint on another origin")
	}
}

func TestSSEConnectErrors(t *testing.T) {
	t.Run("405", func(t *testing.T) {
		srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) })
		_, err := (&transport.SSE{URL: srv.URL}).Connect(httpCtx(t))
		var he *transport.HTTPError
		if !errors.As(err, &he) || he.StatusCode != 405 || he.Method != "GET" {
			t.Fatalf("Connect = %v, want a 405 HTTPError", err)
		}
	})
	t.Run("stream ends before endpoint", func(t *testing.T) {
		srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) { httpWriteSSE(w, ": nothing\n\n") })
		_, err := (&transport.SSE{URL: srv.URL}).Connect(httpCtx(t))
		if !errors.Is(err, transport.ErrClosed) {
			t.Fatalf("Connect = %v, want ErrClosed", err)
		}
	})
	t.Run("ctx ends while waiting for endpoint", func(t *testing.T) {
		srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
			httpWriteSSE(w, ": waiting\n\n")
			<-r.Context().Done()
		})
		ctx, cancel := context.WithCancel(httpCtx(t))
		errc := make(chan error, 1)
		go func() {
			_, err := (&transport.SSE{URL: srv.URL}).Connect(ctx)
			errc <- err
		}()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("Connect = %v, want context.Canceled", err)
		}
	})
}

func TestSSEServerEndsStream(t *testing.T) {
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		httpWriteSSE(w, "event: endpoint\ndata: /m\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
	})
	c := httpDial(t, &transport.SSE{URL: srv.URL})
	if n, ok := httpMustRead(t, c).(*jsonrpc.Request); !ok || n.Method != "notifications/message" {
		t.Fatalf("Read = %+v", n)
	}
	if _, err := c.Read(httpCtx(t)); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Read after the stream ended = %v, want ErrClosed", err)
	}
}

// TestSSEWriteAfterStreamEnded: once the event stream ended, whether the
// server ended it or it broke, Write sends nothing, and its error
// matches ErrClosed and wraps no *NetworkError: a broken stream's network
// error says nothing of this message, which never left.
func TestSSEWriteAfterStreamEnded(t *testing.T) {
	for _, broke := range []bool{false, true} {
		t.Run(map[bool]string{false: "ended", true: "broke"}[broke], func(t *testing.T) {
			srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					t.Error("POST after the stream ended")
					return
				}
				httpWriteSSE(w, "event: endpoint\ndata: /m\n\n")
				if broke {
					conn, _, err := http.NewResponseController(w).Hijack()
					if err != nil {
						t.Errorf("hijack: %v", err)
						return
					}
					conn.Close() // mid-stream: no final chunk
				}
			})
			c := httpDial(t, &transport.SSE{URL: srv.URL})
			_, err := c.Read(httpCtx(t))
			if _, isNet := errors.AsType[*transport.NetworkError](err); !errors.Is(err, transport.ErrClosed) || isNet != broke {
				t.Fatalf("Read = %v, want ErrClosed, with a *NetworkError only when the stream broke", err)
			}
			err = c.Write(httpCtx(t), httpRequest(t, 1, "ping", nil))
			if _, ok := errors.AsType[*transport.NetworkError](err); ok || !errors.Is(err, transport.ErrClosed) {
				t.Fatalf("Write = %v, want ErrClosed and no *NetworkError", err)
			}
		})
	}
}

// TestSSEAnswerInPostBody: a server that answers a POST with 200 and the
// JSON-RPC response in the body, instead of 202 and the response on the
// event stream, has that response delivered by Read, once: when the
// server also sends it on the stream (before or after the body), the
// second copy is dropped. The marker notification the server sends on the
// stream after it shows that no copy is still to come.
func TestSSEAnswerInPostBody(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream string // "", "before" or "after": when the stream also carries the response
	}{
		{"body only", ""},
		{"stream copy before", "before"},
		{"stream copy after", "after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const marker = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"marker"}}`
			out := make(chan string, 4)
			mux := http.NewServeMux()
			mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
				httpWriteSSE(w, "event: endpoint\ndata: /messages\n\n")
				for {
					select {
					case m := <-out:
						httpWriteSSE(w, "event: message\ndata: "+m+"\n\n")
					case <-r.Context().Done():
						return
					}
				}
			})
			mux.HandleFunc("POST /messages", func(w http.ResponseWriter, r *http.Request) {
				req := httpReadRequest(t, r)
				if req == nil {
					return
				}
				res := httpResult(req.ID, `{"via":"body"}`)
				if tc.stream == "before" {
					out <- res
				}
				httpWriteJSON(w, http.StatusOK, res)
				if tc.stream == "after" {
					out <- res
				}
				out <- marker
			})
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			c := httpDial(t, &transport.SSE{URL: srv.URL + "/sse"})
			if err := c.Write(httpCtx(t), httpRequest(t, 7, "tools/list", nil)); err != nil {
				t.Fatal(err)
			}
			var responses int
			for {
				m := httpMustRead(t, c)
				if n, ok := m.(*jsonrpc.Request); ok && n.Method == "notifications/message" {
					break
				}
				r, ok := m.(*jsonrpc.Response)
				if !ok || r.ID != jsonrpc.Int64ID(7) {
					t.Fatalf("Read = %+v, want the response to 7 or the marker", m)
				}
				responses++
			}
			if responses != 1 {
				t.Fatalf("the response to 7 was read %d times, want once", responses)
			}
		})
	}
}
