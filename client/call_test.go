package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// TestCallAndNotify sends untyped requests and a vendor notification in
// both eras over pipe, HTTP and WebSocket, and checks what the server
// received: the modern envelope on a generic request, the params as given.
func TestCallAndNotify(t *testing.T) {
	netMatrix(t, func(t *testing.T, ctx context.Context, f *fixture, _ string, _ client.Protocol) {
		var list protocol.ListToolsResult
		if err := f.c.Call(ctx, protocol.MethodToolsList, nil, &list); err != nil {
			t.Fatalf("Call(tools/list): %v", err)
		}
		if len(list.Tools) == 0 {
			t.Fatal("Call(tools/list) decoded no tools")
		}
		var raw json.RawMessage
		if err := f.c.Call(ctx, protocol.MethodToolsCall, json.RawMessage(`{"name":"echo","arguments":{"text":"hi"}}`), &raw); err != nil {
			t.Fatalf("Call(tools/call): %v", err)
		}
		var res protocol.CallToolResult
		if err := json.Unmarshal(raw, &res); err != nil || res.Text() != "hi" {
			t.Fatalf("tools/call result %s (%v), want the echo of hi", raw, err)
		}

		err := f.c.Call(ctx, "vendor/unknown", map[string]any{"x": 1}, nil)
		if !errors.Is(err, jsonrpc.ErrMethodNotFound) {
			t.Fatalf("Call(vendor/unknown) = %v, want the server's method-not-found", err)
		}
		if err := f.c.Notify(ctx, "notifications/vendor/ping", map[string]any{"n": 7}); err != nil {
			t.Fatalf("Notify: %v", err)
		}
		got := waitReceived(t, f.srv, "notifications/vendor/ping")
		if string(got.Params) != `{"n":7}` {
			t.Errorf("notification params %s, want {\"n\":7}", got.Params)
		}
		call := waitReceived(t, f.srv, "vendor/unknown")
		var p struct {
			X    int            `json:"x"`
			Meta map[string]any `json:"_meta"`
		}
		if err := json.Unmarshal(call.Params, &p); err != nil || p.X != 1 {
			t.Fatalf("vendor/unknown params %s (%v)", call.Params, err)
		}
		_, hasVersion := p.Meta[protocol.MetaProtocolVersion]
		if modern := f.c.Negotiated().Version == "2026-07-28"; hasVersion != modern {
			t.Errorf("vendor/unknown _meta %v: protocol version present %v, want %v", p.Meta, hasVersion, modern)
		}
	})
}

func TestCallRefusesEmptyMethod(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{})
	ctx := context.Background()
	var ce *client.Error
	if err := f.c.Call(ctx, "", nil, nil); !errors.As(err, &ce) || ce.Kind != client.KindInvalid {
		t.Errorf("Call(\"\") = %v, want an *Error of kind invalid", err)
	}
	if err := f.c.Notify(ctx, "", nil); !errors.As(err, &ce) || ce.Kind != client.KindInvalid {
		t.Errorf("Notify(\"\") = %v, want an *Error of kind invalid", err)
	}
}

// waitReceived waits (bounded) until srv has received a message for method.
func waitReceived(t *testing.T, srv *testserver.Server, method string) testserver.Recorded {
	t.Helper()
	var got testserver.Recorded
	if !eventually(func() bool {
		for _, r := range srv.Received() {
			if r.Method == method {
				got = r
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the server never received %s", method)
	}
	return got
}

// TestCancelTellsLegacyHTTPServer cancels a call while a legacy Streamable
// HTTP server is still running it (the JSON answer has not come: the
// request is inside the POST): the server must get notifications/cancelled
// naming the request, as on every other transport — closing the response
// is not a cancellation in the legacy era.
func TestCancelTellsLegacyHTTPServer(t *testing.T) {
	for _, tr := range []string{tHTTP, tPipe, tWS} {
		t.Run(tr, func(t *testing.T) {
			f := connect(t, tr, testserver.Options{}, client.WithProtocol(client.Legacy))
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := f.c.CallTool(ctx, "slow", map[string]any{"steps": 30, "delayMs": 100})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("CallTool = %v, want the context's deadline", err)
			}
			got := waitReceived(t, f.srv, protocol.NotificationCancelled)
			var call *testserver.Recorded
			for _, r := range f.srv.Received() {
				if r.Method == protocol.MethodToolsCall {
					call = &r
				}
			}
			if call == nil {
				t.Fatal("the server never saw the tools/call")
			}
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if err := json.Unmarshal(got.Params, &p); err != nil || string(p.RequestID) != call.ID.String() {
				t.Errorf("notifications/cancelled params %s, want requestId %s", got.Params, call.ID)
			}
		})
	}
}

// slowHTTP serves the test server, except that a tools/call is answered
// slowly: "headers" holds the response headers, "body" sends a JSON
// content type and then trickles blanks, until the client goes away.
func slowHTTP(t *testing.T, how string) string {
	t.Helper()
	srv := testserver.New(testserver.Options{})
	next := srv.Handler()
	stop := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if r.Method != http.MethodPost || !bytes.Contains(body, []byte(`"tools/call"`)) {
			next.ServeHTTP(w, r)
			return
		}
		if how == "body" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
		}
		for {
			if how == "body" {
				w.Write([]byte(" "))
				w.(http.Flusher).Flush()
			}
			select {
			case <-r.Context().Done():
				return
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(func() {
		close(stop)
		ts.Close()
		srv.Close()
	})
	return ts.URL
}

// TestTimeoutsHoldOverHTTP: every timeout holds over Streamable HTTP from
// the moment the call starts, while the server holds its headers or
// trickles its body (issue 15, item 4), in both eras: the deadline and
// the idle timeout, per call and client-wide.
func TestTimeoutsHoldOverHTTP(t *testing.T) {
	const limit = 2 * time.Second
	cases := []struct {
		name     string
		opts     []client.Option
		callOpts []client.CallOption
	}{
		{name: "call-deadline", callOpts: []client.CallOption{client.WithTimeout(limit)}},
		{name: "call-idle", callOpts: []client.CallOption{client.WithIdleTimeout(limit)}},
		{name: "default-deadline", opts: []client.Option{client.WithCallDefaults(client.WithTimeout(limit))}},
		{name: "default-idle", opts: []client.Option{client.WithCallDefaults(client.WithIdleTimeout(limit))}},
	}
	for _, era := range allEras {
		for _, how := range []string{"headers", "body"} {
			for _, tc := range cases {
				t.Run(era.name+"/"+how+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					url := slowHTTP(t, how)
					c, err := client.Dial(testCtx(t), url, append([]client.Option{client.WithProtocol(era.p)}, tc.opts...)...)
					if err != nil {
						t.Fatalf("Dial: %v", err)
					}
					defer c.Close()
					start := time.Now()
					_, err = c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}, tc.callOpts...)
					took := time.Since(start)
					var ce *client.Error
					if !errors.As(err, &ce) || ce.Kind != client.KindTimeout {
						t.Fatalf("CallTool = %v, want an *Error of kind timeout", err)
					}
					if took < limit-100*time.Millisecond || took > 6*time.Second {
						t.Errorf("the call failed after %v, want about %v", took, limit)
					}
					t.Logf("%s %s %s: timed out after %v", era.name, how, tc.name, took.Round(time.Millisecond))
				})
			}
		}
	}
}

// TestDeadlineVersusIdle: progress extends the idle timeout, never the
// deadline; without either a long tool runs to its end. Both eras, over
// stdio-like and HTTP transports.
func TestDeadlineVersusIdle(t *testing.T) {
	args := map[string]any{"steps": 6, "delayMs": 300} // about 1.8 s, progress every 300 ms
	progress := client.WithProgress(func(protocol.ProgressParams) {})
	for _, era := range allEras {
		for _, tr := range []string{tPipe, tHTTP} {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				t.Parallel()
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p))
				start := time.Now()
				_, err := f.c.CallTool(testCtx(t), "slow", args, client.WithTimeout(time.Second), progress)
				if !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
					t.Errorf("a 1s deadline on a 1.8s tool that reports progress = %v, want a timeout", err)
				}
				if took := time.Since(start); took > 1700*time.Millisecond {
					t.Errorf("the deadline was extended: the call ended after %v", took)
				}
				if _, err := f.c.CallTool(testCtx(t), "slow", args, client.WithIdleTimeout(time.Second), progress); err != nil {
					t.Errorf("a 1s idle timeout on a tool that reports progress every 300ms = %v, want its result", err)
				}
				// The idle timeout needs no progress callback: the token
				// is sent anyway.
				if _, err := f.c.CallTool(testCtx(t), "slow", args, client.WithIdleTimeout(time.Second)); err != nil {
					t.Errorf("an idle timeout without WithProgress = %v, want the result", err)
				}
				if _, err := f.c.CallTool(testCtx(t), "slow", args); err != nil {
					t.Errorf("no timeout = %v, want the result", err)
				}
			})
		}
	}
}

func isTimeout(err error) bool {
	var ce *client.Error
	return errors.As(err, &ce) && ce.Kind == client.KindTimeout
}
