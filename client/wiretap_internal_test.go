package client

import (
	"context"
	"net/http/httptest"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/transport"
)

func methodNames(v any) []string {
	t := reflect.TypeOf(v)
	names := make([]string, 0, t.NumMethod())
	for i := range t.NumMethod() {
		names = append(names, t.Method(i).Name)
	}
	sort.Strings(names)
	return names
}

// TestTapPreservesMethods: a tapped connection of every real transport has
// exactly the methods of the original (plus Unwrap), so every optional
// interface the transport package defines still answers type assertions,
// and those the original lacks do not. It fails when a transport gains an
// exported method the tap does not forward.
func TestTapPreservesMethods(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	httpSrv := httptest.NewServer(srv.Handler())
	wsSrv := httptest.NewServer(srv.WebSocketHandler())
	sseSrv := httptest.NewServer(srv.SSEHandler())
	t.Cleanup(func() {
		srv.Close()
		httpSrv.Close()
		wsSrv.Close()
		sseSrv.Close()
	})
	stdio := transport.Command(os.Args[0], "-test.run=^$")
	stdio.Env = []string{"CONDUIT_CLIENT_TEST_STDIO={}"}
	tests := []struct {
		name string
		t    func(t *testing.T) transport.Transport
	}{
		{"pipe", func(t *testing.T) transport.Transport {
			pipe, end := transport.NewPipe()
			t.Cleanup(func() { end.Close() })
			return pipe
		}},
		{"stdio", func(*testing.T) transport.Transport { return stdio }},
		{"http", func(*testing.T) transport.Transport { return &transport.StreamableHTTP{URL: httpSrv.URL} }},
		{"websocket", func(*testing.T) transport.Transport {
			return &transport.WebSocket{URL: "ws" + strings.TrimPrefix(wsSrv.URL, "http")}
		}},
		{"sse", func(*testing.T) transport.Transport { return &transport.SSE{URL: sseSrv.URL} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tp := &tap{}
			conn, err := (&tapTransport{inner: tc.t(t), tap: tp}).Connect(ctx)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer conn.Close()
			inner := conn.(interface{ Unwrap() transport.Conn }).Unwrap()
			want := append(methodNames(inner), "Unwrap")
			sort.Strings(want)
			if diff := cmp.Diff(want, methodNames(conn)); diff != "" {
				t.Errorf("methods of the tapped %T (-want +got):\n%s", inner, diff)
			}
			if k, ok := conn.(transport.Kinder); ok && k.Kind() != inner.(transport.Kinder).Kind() {
				t.Errorf("Kind() = %q, want %q", k.Kind(), inner.(transport.Kinder).Kind())
			}
		})
	}
}
