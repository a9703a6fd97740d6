package auth

import (
	"errors"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// TestWithStreamableHTTP plugs one Client into the real HTTP transport
// (TokenSource, or HeaderFunc) and plays the session's part: the 401 the
// transport reports goes to Authorize, then the request is retried.
func TestWithStreamableHTTP(t *testing.T) {
	for _, mode := range []string{"TokenSource", "HeaderFunc"} {
		t.Run(mode, func(t *testing.T) {
			s := newTestServer(t, nil)
			ctx := testCtx(t)
			a := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect})
			tr := &transport.StreamableHTTP{URL: s.mcpURL()}
			if mode == "TokenSource" {
				tr.TokenSource = a
			} else {
				tr.HeaderFunc = a.Header
			}
			conn, err := tr.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			req, err := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "tools/list", nil)
			if err != nil {
				t.Fatal(err)
			}
			err = conn.Write(ctx, req)
			herr, ok := errors.AsType[*transport.HTTPError](err)
			if !ok || herr.StatusCode != 401 {
				t.Fatalf("first Write = %v, want a 401 *transport.HTTPError", err)
			}
			if err := a.Authorize(ctx, herr); err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			if err := conn.Write(ctx, req); err != nil {
				t.Fatalf("retry: %v", err)
			}
			msg, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if resp, ok := msg.(*jsonrpc.Response); !ok || resp.Err() != nil {
				t.Fatalf("response = %#v", msg)
			}
		})
	}
}
