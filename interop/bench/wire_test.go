package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/interop/internal/foreign"
)

// wireRecorder is a reverse proxy in front of an HTTP server that records
// every request a client makes, when it starts: the HTTP method, the
// JSON-RPC method of a POST, and once it ended the status and how long it
// took (until the proxy had passed on the whole response, so a GET
// stream's time is how long it stayed open).
type wireRecorder struct {
	mu   sync.Mutex
	reqs []*wireRequest // guarded by mu
	next int            // guarded by mu: reqs[:next] were reported
}

type wireRequest struct {
	verb   string // HTTP method
	rpc    string // JSON-RPC method of a POST, "response" for a client's answer
	done   bool   // guarded by wireRecorder.mu, as are status and dur
	status int
	dur    time.Duration
}

func (w *wireRequest) String() string {
	s := w.verb
	if w.rpc != "" {
		s += " " + w.rpc
	}
	if !w.done {
		return s + " (still open)"
	}
	return fmt.Sprintf("%s → %d (%v)", s, w.status, w.dur.Round(time.Microsecond))
}

// statusWriter remembers the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// startWireRecorder returns the URL of a recording proxy in front of
// target; it stops when t ends.
func startWireRecorder(t testing.TB, target string) (string, *wireRecorder) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &wireRecorder{}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.FlushInterval = -1 // event streams go through at once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		wr := &wireRequest{verb: r.Method}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				Method string          `json:"method"`
				ID     json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(body, &m)
			wr.rpc = m.Method
			if m.Method == "" && m.ID != nil {
				wr.rpc = "response"
			}
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, wr)
		rec.mu.Unlock()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		proxy.ServeHTTP(sw, r)
		rec.mu.Lock()
		wr.done, wr.status, wr.dur = true, sw.status, time.Since(start)
		rec.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL + u.Path, rec
}

// report describes the requests started since the last report, in the
// order they started, after a moment for those in flight to end.
func (w *wireRecorder) report() (int, string) {
	time.Sleep(50 * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	var s []string
	for _, r := range w.reqs[w.next:] {
		s = append(s, r.String())
	}
	w.next = len(w.reqs)
	return len(s), strings.Join(s, "; ")
}

// TestConnectWire reports what one connect and close costs on the wire,
// request by request, for every client in both eras over Streamable HTTP
// (the go-sdk server, which offers the legacy GET stream and sessions, and
// the raw server, which offers neither). It checks nothing but that the
// connection works; the report is in the log (go test -v -run
// TestConnectWire ./bench).
func TestConnectWire(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers; skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, kind := range []foreign.Kind{foreign.GoSDK, foreign.Raw} {
		url, rec := startWireRecorder(t, foreign.StartHTTP(t, kind, foreign.HTTP, foreign.Options{}))
		for _, c := range clients {
			for _, e := range []era{legacyEra, modernEra} {
				t.Run(fmt.Sprintf("%s/%s-%s", c.name, kind, e), func(t *testing.T) {
					rec.report()
					s, err := c.connect(ctx, endpoint{url: url}, e)
					if err != nil {
						t.Fatalf("connect: %v", err)
					}
					n, connected := rec.report()
					t.Logf("connect: %d requests: %s", n, connected)
					if err := s.close(); err != nil {
						t.Errorf("close: %v", err)
					}
					n, closed := rec.report()
					t.Logf("close: %d requests: %s", n, closed)
				})
			}
		}
	}
}
