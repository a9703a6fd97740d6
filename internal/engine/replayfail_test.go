package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// TestReplayFailedWithoutAnswerMayHaveRun: a request that may have run
// (answered HTTP 502) is replayed (ReplayAll), and the replay fails
// without an answer the server meant for it: a 300 with no Location, a
// redirect to another origin, which the client does not follow, or an
// answer that is malformed. The first attempt may still have run: the
// call fails with ErrOutcomeUnknown (1 attempt; 2 when the replay was
// answered), not with the replay's failure alone, which would read as a
// request no server ran.
func TestReplayFailedWithoutAnswerMayHaveRun(t *testing.T) {
	for _, tt := range []struct {
		name     string
		refuse   func(w http.ResponseWriter, req *jsonrpc.Request)
		want     func(error) bool
		attempts int // that may have run
	}{
		{"redirect-other-origin", func(w http.ResponseWriter, _ *jsonrpc.Request) {
			w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, func(err error) bool { _, ok := errors.AsType[*transport.RedirectError](err); return ok }, 1},
		{"300-no-location", func(w http.ResponseWriter, _ *jsonrpc.Request) {
			w.WriteHeader(http.StatusMultipleChoices)
		}, func(err error) bool {
			he, ok := errors.AsType[*transport.HTTPError](err)
			return ok && he.StatusCode == http.StatusMultipleChoices
		}, 1},
		// Answered, but malformed: the replay reached the server and may
		// have run as well.
		{"malformed-answer", func(w http.ResponseWriter, req *jsonrpc.Request) {
			id, _ := req.ID.Int64()
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%d}\n\n", id)
		}, func(err error) bool { return errors.Is(err, ErrInvalidResponse) }, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var posts atomic.Int32
			h := toolCallScript(serveModernHTTP, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				if posts.Add(1) == 1 {
					w.WriteHeader(http.StatusBadGateway) // may have run
					return
				}
				tt.refuse(w, req)
			})
			s := httpSession(t, h, Config{Replay: ReplayAll})
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			_, err := s.Call(ctx, protocol.MethodToolsCall, map[string]any{"name": "charge"}, nil)
			if n := posts.Load(); n != 2 {
				t.Fatalf("tools/call POSTed %d times, want 2 (Call = %v)", n, err)
			}
			ou, ok := errors.AsType[*OutcomeUnknownError](err)
			if !ok || ou.Attempts != tt.attempts || errors.Is(err, ErrNotSent) {
				t.Errorf("Call = %v; want ErrOutcomeUnknown with %d attempts that may have run", err, tt.attempts)
			}
			if !tt.want(err) {
				t.Errorf("Call = %v; want it to wrap the replay's failure", err)
			}
		})
	}
}
