package scenarios

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorded is one JSON-RPC message the mock received.
type recorded struct {
	Method  string
	ID      json.RawMessage
	Params  map[string]json.RawMessage
	Session string // Mcp-Session-Id
	At      time.Time
}

// mock is a scripted Streamable HTTP server: handle answers each POSTed
// message; everything received is recorded.
type mock struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	got    []recorded
	handle func(w http.ResponseWriter, r *http.Request, m recorded)
}

func newMock(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, m recorded)) *mock {
	mk := &mock{t: t, handle: handle}
	mk.srv = httptest.NewServer(http.HandlerFunc(mk.serve))
	t.Cleanup(func() {
		mk.srv.CloseClientConnections()
		mk.srv.Close()
	})
	return mk
}

func (mk *mock) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var m struct {
		Method string                     `json:"method"`
		ID     json.RawMessage            `json:"id"`
		Params map[string]json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rec := recorded{Method: m.Method, ID: m.ID, Params: m.Params, Session: r.Header.Get("Mcp-Session-Id"), At: time.Now()}
	mk.mu.Lock()
	mk.got = append(mk.got, rec)
	mk.mu.Unlock()
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	mk.handle(w, r, rec)
}

// requests returns the recorded messages of method (all when "").
func (mk *mock) requests(method string) []recorded {
	mk.mu.Lock()
	defer mk.mu.Unlock()
	var out []recorded
	for _, r := range mk.got {
		if method == "" || r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

// reply writes a JSON-RPC result as application/json.
func reply(w http.ResponseWriter, id json.RawMessage, result any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// complete marks a modern result complete.
func complete(m map[string]any) map[string]any {
	m["resultType"] = "complete"
	return m
}

// discover answers server/discover with capabilities.
func discover(w http.ResponseWriter, id json.RawMessage, caps map[string]any) {
	reply(w, id, complete(map[string]any{
		"supportedVersions": []string{"2026-07-28"}, "capabilities": caps,
		"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "scenario-mock", "version": "1.0.0"}},
	}))
}

// sse opens an event stream on w and returns a function writing one
// JSON-RPC message as a data frame.
func sse(w http.ResponseWriter) func(msg any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	return func(msg any) {
		b, _ := json.Marshal(msg)
		w.Write([]byte("data: " + string(b) + "\n\n"))
		if fl != nil {
			fl.Flush()
		}
	}
}

// check is one graded check of a scenario: id and whether it passed,
// which it returns.
func check(t *testing.T, id string, ok bool, format string, args ...any) bool {
	t.Helper()
	if !ok {
		t.Errorf("%s: "+format, append([]any{id}, args...)...)
	}
	return ok
}

// runFor keeps the client's subscriptions running for d, the scenario's
// durationMs, bounded by the test's context.
func runFor(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// cursorOf is params.cursor with an absent field read as null.
func cursorOf(p map[string]json.RawMessage) string {
	c, ok := p["cursor"]
	if !ok {
		return "null"
	}
	return string(c)
}
