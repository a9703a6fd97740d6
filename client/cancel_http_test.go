package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
)

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
