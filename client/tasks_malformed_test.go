package client_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/conduitmcp/conduit/client"
)

// rpcResultServer is a Streamable HTTP server that answers each POSTed
// request with a JSON body: the result result(method) gives, or a
// -32601 error when it gives "". Notifications get 202.
func rpcResultServer(t *testing.T, result func(method string) string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		var m struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &m) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if res := result(m.Method); res != "" {
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+res+`}`)
			return
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32601,"message":"no"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// legacyTaskServer is a 2025-11-25 Streamable HTTP server whose tool "t"
// may run as a task and whose tools/call answers with result; more lists
// other methods and their results, in pairs.
func legacyTaskServer(t *testing.T, result string, more ...string) *httptest.Server {
	t.Helper()
	return rpcResultServer(t, func(method string) string {
		switch method {
		case "initialize":
			return `{"protocolVersion":"2025-11-25","serverInfo":{"name":"tasks","version":"1"},` +
				`"capabilities":{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}}}`
		case "tools/list":
			return `{"tools":[{"name":"t","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`
		case "tools/call":
			return result
		}
		res := ""
		for i := 0; i+1 < len(more); i += 2 {
			if more[i] == method {
				res = more[i+1]
			}
		}
		return res
	})
}

// TestLegacyTaskMalformed: a 2025-11-25 server that answers a task-augmented
// tools/call with a task that is not one (no taskId, not an object) fails
// the call with a protocol error, instead of the call returning an empty
// tool result as if the tool had run and said nothing; a task of null is
// no task, and the result is read as a tool result.
func TestLegacyTaskMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, result string
		fails        bool
	}{
		{"no taskId", `{"task":{"status":"working","createdAt":"2026-01-01T00:00:00Z"}}`, true},
		{"empty taskId", `{"task":{"taskId":"","status":"working"}}`, true},
		{"a string", `{"task":"soon"}`, true},
		{"an array", `{"task":[1]}`, true},
		{"null", `{"task":null,"content":[{"type":"text","text":"ran"}]}`, false},
		{"a task", `{"task":{"taskId":"t1","status":"working","createdAt":"2026-01-01T00:00:00Z"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := legacyTaskServer(t, tc.result)
			ctx := testCtx(t)
			c, err := client.Dial(ctx, srv.URL, client.WithProtocol(client.Legacy))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			task, res, err := c.StartTool(ctx, "t", nil)
			if !tc.fails {
				if err != nil || (task == nil) == (res == nil) {
					t.Fatalf("StartTool = %+v, %+v, %v; want a task or a result", task, res, err)
				}
				return
			}
			ce, ok := errors.AsType[*client.Error](err)
			if !ok || ce.Kind != client.KindProtocol {
				t.Fatalf("StartTool = %+v, %+v, %v; want an *Error of kind protocol", task, res, err)
			}
		})
	}
}
