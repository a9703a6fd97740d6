package foreign

import (
	"bytes"
	"context"
	"github.com/conduitmcp/conduit/transport"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/interop/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestStartHTTP starts every HTTP server and checks that it answers a
// legacy initialize POST on the URL it announced, bound to 127.0.0.1.
func TestStartHTTP(t *testing.T) {
	cases := []struct {
		kind Kind
		tr   Transport
	}{
		{GoSDK, HTTP}, {MCPGo, HTTP}, {TS, HTTP}, {Everything, HTTP},
	}
	for _, c := range cases {
		t.Run(string(c.kind), func(t *testing.T) {
			u := StartHTTP(t, c.kind, c.tr, Options{})
			if !strings.HasPrefix(u, "http://127.0.0.1:") {
				t.Fatalf("url %q not on 127.0.0.1", u)
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			if resp.StatusCode != http.StatusOK || !strings.Contains(buf.String(), `"protocolVersion"`) {
				t.Fatalf("initialize: status %d body %q", resp.StatusCode, buf.String())
			}
			http.DefaultClient.CloseIdleConnections()
			transport.CloseIdleConnections()
		})
	}
}
