package engine

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPRetryNeedsConsent: a request answered with an HTTP status that
// does not say the server did not take it (500, 502, 504) is retried only
// when it cannot run twice or the policy allows it; otherwise the caller
// gets an error matching ErrOutcomeUnknown and the server saw it once.
// 408, 429 and 503 say the request was not taken: retried unless the
// policy is ReplayNone.
func TestHTTPRetryNeedsConsent(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		method  string
		cfg     ReplayPolicy // Config.Replay
		opts    CallOptions
		posts   int32 // times the method reached the server
		unknown bool  // the error matches ErrOutcomeUnknown
		ok      bool  // the call succeeds
	}{
		{name: "500 tools/call refused", status: 500, method: protocol.MethodToolsCall, posts: 1, unknown: true},
		{name: "502 tools/call refused", status: 502, method: protocol.MethodToolsCall, posts: 1, unknown: true},
		{name: "504 tools/call refused", status: 504, method: protocol.MethodToolsCall, posts: 1, unknown: true},
		{name: "500 tools/call idempotent", status: 500, method: protocol.MethodToolsCall, opts: CallOptions{Idempotent: true}, posts: 2, ok: true},
		{name: "500 tools/call replay all (call)", status: 500, method: protocol.MethodToolsCall, opts: CallOptions{Replay: ReplayAll}, posts: 2, ok: true},
		{name: "500 tools/call replay all (config)", status: 500, method: protocol.MethodToolsCall, cfg: ReplayAll, posts: 2, ok: true},
		{name: "500 tools/list read-only", status: 500, method: protocol.MethodToolsList, posts: 2, ok: true},
		{name: "500 tools/list replay none", status: 500, method: protocol.MethodToolsList, opts: CallOptions{Replay: ReplayNone}, posts: 1, unknown: true},
		{name: "503 tools/call untaken", status: 503, method: protocol.MethodToolsCall, posts: 2, ok: true},
		{name: "429 tools/call untaken", status: 429, method: protocol.MethodToolsCall, posts: 2, ok: true},
		{name: "408 tools/call untaken", status: 408, method: protocol.MethodToolsCall, posts: 2, ok: true},
		{name: "503 tools/call replay none", status: 503, method: protocol.MethodToolsCall, opts: CallOptions{Replay: ReplayNone}, posts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var posts atomic.Int32
			h := &httpScript{}
			h.serve = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				if req.Method == tt.method && posts.Add(1) == 1 {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(tt.status)
					return
				}
				serveModernHTTP(w, req)
			}
			var mu sync.Mutex
			var refused []Event
			cfg := Config{Replay: tt.cfg, OnEvent: func(e Event) {
				if e.Kind == EventReplayRefused {
					mu.Lock()
					refused = append(refused, e)
					mu.Unlock()
				}
			}}
			s, _, err := httpConnect(t, h, cfg)
			if err != nil {
				t.Fatal(err)
			}
			opts := tt.opts
			_, err = s.Call(t.Context(), tt.method, map[string]any{"name": "charge"}, &opts)
			if got := posts.Load(); got != tt.posts {
				t.Errorf("%s reached the server %d times, want %d", tt.method, got, tt.posts)
			}
			if tt.ok != (err == nil) {
				t.Fatalf("Call error = %v, want success %v", err, tt.ok)
			}
			if err == nil {
				return
			}
			if got := errors.Is(err, ErrOutcomeUnknown); got != tt.unknown {
				t.Errorf("errors.Is(%v, ErrOutcomeUnknown) = %v, want %v", err, got, tt.unknown)
			}
			if he, ok := errors.AsType[*transport.HTTPError](err); !ok || he.StatusCode != tt.status {
				t.Errorf("error = %v, want the HTTP %d", err, tt.status)
			}
			// The connection still works for the next call.
			if _, err := s.Call(t.Context(), protocol.MethodPing, nil, nil); err != nil {
				t.Errorf("the next call: %v", err)
			}
			s.Close() // delivers the queued events
			mu.Lock()
			defer mu.Unlock()
			if want := map[bool]int{true: 1}[tt.unknown]; len(refused) != want {
				t.Errorf("replay-refused events = %v, want %d", refused, want)
			} else if want == 1 && refused[0].Method != tt.method {
				t.Errorf("replay-refused event for %q, want %q", refused[0].Method, tt.method)
			}
		})
	}
}
