package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/conduitmcp/conduit/transport"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/conduitmcp/conduit/interop/internal/foreign"
	"github.com/conduitmcp/conduit/interop/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	// Every client shares http.DefaultTransport's pool by default: its
	// idle connections are the pool's, flushed as a net/http program
	// does before counting goroutines.
	http.DefaultClient.CloseIdleConnections()
	transport.CloseIdleConnections()
	testenv.Cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Era is the protocol era a benchmark runs in.
type era string

const (
	legacyEra era = "legacy"
	modernEra era = "modern"
)

// endpoint is how a client reaches a server: argv for stdio, url for HTTP,
// ws (a ws:// URL) for WebSocket.
type endpoint struct {
	argv []string
	url  string
	ws   string
}

// session is one connected client, whichever library.
type session interface {
	echo(ctx context.Context, text string) error
	big(ctx context.Context, size int) (int, error) // returns the text length
	listTools(ctx context.Context) (int, error)
	protocolVersion() string // the negotiated version, to check the era
	close() error
}

// clientImpl connects one client library.
type clientImpl struct {
	name    string
	connect func(ctx context.Context, ep endpoint, e era) (session, error)
	// websocket says the library has a WebSocket client transport (go-sdk
	// and mcp-go have none).
	websocket bool
}

// clients are the libraries compared; conduit registers itself from
// conduit_test.go.
var clients = []clientImpl{
	{name: "go-sdk", connect: connectGoSDK},
	{name: "mcp-go", connect: connectMCPGo},
	{name: "raw", connect: connectRaw, websocket: true},
}

// target is one server on one transport.
type target struct {
	kind foreign.Kind
	tr   foreign.Transport
}

var targets = []target{
	{foreign.GoSDK, foreign.Stdio},
	{foreign.GoSDK, foreign.HTTP},
	{foreign.Raw, foreign.Stdio},
	{foreign.Raw, foreign.HTTP},
	{foreign.Raw, foreign.WebSocket},
}

// startTarget starts (or, for stdio, names) the server of tg.
func startTarget(t testing.TB, tg target, o foreign.Options) endpoint {
	switch tg.tr {
	case foreign.Stdio:
		return endpoint{argv: foreign.Command(t, tg.kind, o)}
	case foreign.WebSocket:
		return endpoint{ws: "ws" + strings.TrimPrefix(foreign.StartHTTP(t, tg.kind, tg.tr, o), "http")}
	}
	return endpoint{url: foreign.StartHTTP(t, tg.kind, tg.tr, o)}
}

// serves reports whether client c can reach target tg.
func serves(c clientImpl, tg target) bool {
	return tg.tr != foreign.WebSocket || c.websocket
}

// matrix runs fn for every target × era × client, each under its own
// sub-benchmark. The clients are the innermost loop so that the clients
// compared on one target run next to each other in time (on a noisy
// machine, drift then hits them alike); BENCH_ROUND=k rotates the client
// order by k so that repeated rounds do not always favour the same
// position. HTTP servers are started once per call to matrix, so every
// client of a target talks to the same server process.
func matrix(b *testing.B, tools int, fn func(b *testing.B, c clientImpl, ep endpoint, e era)) {
	eps := map[target]endpoint{}
	for _, tg := range targets {
		eps[tg] = startTarget(b, tg, foreign.Options{Tools: tools})
	}
	order := rotated(clients, os.Getenv("BENCH_ROUND"))
	for _, tg := range targets {
		for _, e := range []era{legacyEra, modernEra} {
			for _, c := range order {
				if !serves(c, tg) {
					continue
				}
				b.Run(fmt.Sprintf("%s/%s-%s-%s", c.name, tg.kind, tg.tr, e), func(b *testing.B) {
					b.ReportAllocs()
					fn(b, c, eps[tg], e)
				})
			}
		}
	}
}

// rotated returns cs rotated left by round (a decimal; anything else is 0).
func rotated(cs []clientImpl, round string) []clientImpl {
	k, _ := strconv.Atoi(round)
	if len(cs) == 0 || k <= 0 {
		return cs
	}
	k %= len(cs)
	return append(append([]clientImpl(nil), cs[k:]...), cs[:k]...)
}

// benchTimeout bounds one sub-benchmark's connection.
const benchTimeout = 5 * time.Minute

func connect(b *testing.B, c clientImpl, ep endpoint, e era) (session, context.Context) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
	b.Cleanup(cancel)
	s, err := c.connect(ctx, ep, e)
	if err != nil {
		b.Fatalf("connect: %v", err)
	}
	b.Cleanup(func() { _ = s.close() })
	return s, ctx
}

// warm fails the benchmark when the untimed warm-up call failed. Every
// workload but Connect makes one call before the timer starts, so that
// one-time work (first request on the connection, lazily built state in
// any of the libraries) is not measured.
func warm(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatalf("warm-up: %v", err)
	}
}

// BenchmarkConnect measures connect + close: for stdio this includes
// starting and reaping the server process, for HTTP a new TCP connection.
func BenchmarkConnect(b *testing.B) {
	matrix(b, 0, func(b *testing.B, c clientImpl, ep endpoint, e era) {
		ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
		defer cancel()
		for b.Loop() {
			s, err := c.connect(ctx, ep, e)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkSequentialCalls(b *testing.B) {
	matrix(b, 0, func(b *testing.B, c clientImpl, ep endpoint, e era) {
		s, ctx := connect(b, c, ep, e)
		warm(b, s.echo(ctx, "hello"))
		for b.Loop() { // b.Loop resets the timer (and the allocation counters) first
			if err := s.echo(ctx, "hello"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// concurrency is the number of calls in flight in BenchmarkConcurrentCalls.
const concurrency = 64

// BenchmarkConcurrentCalls makes calls from concurrency goroutines at
// once; dials/op counts the TCP connections the HTTP pools dialled meanwhile
// (see dials).
func BenchmarkConcurrentCalls(b *testing.B) {
	matrix(b, 0, func(b *testing.B, c clientImpl, ep endpoint, e era) {
		s, ctx := connect(b, c, ep, e)
		warm(b, s.echo(ctx, "hello"))
		b.ResetTimer()
		var next atomic.Int64
		dial0 := dials.Load()
		var wg sync.WaitGroup
		errs := make(chan error, concurrency)
		for range concurrency {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(b.N) {
					if err := s.echo(ctx, "hello"); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(dials.Load()-dial0)/float64(b.N), "dials/op")
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	})
}

// bigSize is the result size of BenchmarkLargeResult.
const bigSize = 1 << 20

func BenchmarkLargeResult(b *testing.B) {
	matrix(b, 0, func(b *testing.B, c clientImpl, ep endpoint, e era) {
		s, ctx := connect(b, c, ep, e)
		_, err := s.big(ctx, bigSize)
		warm(b, err)
		b.SetBytes(bigSize)
		for b.Loop() {
			n, err := s.big(ctx, bigSize)
			if err != nil {
				b.Fatal(err)
			}
			if n != bigSize {
				b.Fatalf("result of %d bytes, want %d", n, bigSize)
			}
		}
	})
}

// listTools is the filler tool count of BenchmarkListTools500.
const listTools = 500

func BenchmarkListTools500(b *testing.B) {
	matrix(b, listTools, func(b *testing.B, c clientImpl, ep endpoint, e era) {
		s, ctx := connect(b, c, ep, e)
		_, err := s.listTools(ctx)
		warm(b, err)
		for b.Loop() {
			n, err := s.listTools(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if n < listTools {
				b.Fatalf("listed %d tools, want at least %d", n, listTools)
			}
		}
	})
}

// TestBenchClients runs every workload once per client and target, so
// that `go test` (without -bench) proves the harness works.
func TestBenchClients(t *testing.T) {
	if testing.Short() {
		t.Skip("starts every server and client; skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, tg := range targets {
		ep := startTarget(t, tg, foreign.Options{Tools: listTools})
		for _, c := range clients {
			if !serves(c, tg) {
				continue
			}
			for _, e := range []era{legacyEra, modernEra} {
				t.Run(fmt.Sprintf("%s/%s-%s-%s", c.name, tg.kind, tg.tr, e), func(t *testing.T) {
					s, err := c.connect(ctx, ep, e)
					if err != nil {
						t.Fatalf("connect: %v", err)
					}
					defer s.close()
					if v := s.protocolVersion(); (v >= rawModernVersion) != (e == modernEra) {
						t.Fatalf("negotiated %q, not the %s era", v, e)
					}
					if err := s.echo(ctx, "hello"); err != nil {
						t.Errorf("echo: %v", err)
					}
					if n, err := s.big(ctx, bigSize); err != nil || n != bigSize {
						t.Errorf("big: %d bytes, %v", n, err)
					}
					if n, err := s.listTools(ctx); err != nil || n < listTools {
						t.Errorf("tools/list: %d tools, %v", n, err)
					}
				})
			}
		}
	}
}

// ---- raw: a hand-written JSON-RPC client, the floor ----

const rawModernVersion = "2026-07-28"

type rawSession struct {
	e       era
	version string
	nextID  atomic.Int64
	// stdio
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	wmu     sync.Mutex
	pmu     sync.Mutex
	pending map[int64]chan *rawResponse
	readErr error
	done    chan struct{}
	// http
	url string
	hc  *http.Client
	// websocket (the reader and pending are those of stdio)
	ws *websocket.Conn
}

type rawResponse struct {
	ID     *int64          `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func connectRaw(ctx context.Context, ep endpoint, e era) (session, error) {
	s := &rawSession{e: e}
	switch {
	case ep.url != "":
		s.url = ep.url
		// The client a Go program has without asking: http.DefaultClient,
		// whose pool outlives the session, as the libraries' defaults.
		s.hc = http.DefaultClient
	case ep.ws != "":
		ws, _, err := websocket.Dial(ctx, ep.ws, &websocket.DialOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			return nil, err
		}
		ws.SetReadLimit(64 << 20)
		s.ws = ws
		s.pending = map[int64]chan *rawResponse{}
		s.done = make(chan struct{})
		go s.readLoop(func() ([]byte, error) {
			_, msg, err := ws.Read(context.Background())
			return msg, err
		})
	default:
		s.cmd = exec.Command(ep.argv[0], ep.argv[1:]...)
		s.cmd.Stderr = os.Stderr
		var err error
		if s.stdin, err = s.cmd.StdinPipe(); err != nil {
			return nil, err
		}
		stdout, err := s.cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := s.cmd.Start(); err != nil {
			return nil, err
		}
		s.pending = map[int64]chan *rawResponse{}
		s.done = make(chan struct{})
		// ReadBytes grows past the buffer for longer lines; a 1 MiB buffer
		// here would only inflate the raw floor's Connect allocations.
		br := bufio.NewReaderSize(stdout, 64<<10)
		go s.readLoop(func() ([]byte, error) { return br.ReadBytes('\n') })
	}
	if e == modernEra {
		_, err := s.call(ctx, "server/discover", map[string]any{})
		if err != nil {
			s.close()
			return nil, err
		}
		s.version = rawModernVersion
		return s, nil
	}
	init, err := s.call(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "raw", "version": "1.0.0"},
	})
	if err != nil {
		s.close()
		return nil, err
	}
	var ir struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(init, &ir)
	s.version = ir.ProtocolVersion
	if err := s.notify(ctx, "notifications/initialized"); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// readLoop reads messages (lines of stdio, WebSocket messages) with next
// until it fails, and hands each response to its caller.
func (s *rawSession) readLoop(next func() ([]byte, error)) {
	defer close(s.done)
	for {
		line, err := next()
		if len(line) > 1 {
			// Decoded once, here; the caller gets the decoded response.
			res := new(rawResponse)
			if json.Unmarshal(line, res) == nil && res.ID != nil {
				s.pmu.Lock()
				ch := s.pending[*res.ID]
				delete(s.pending, *res.ID)
				s.pmu.Unlock()
				if ch != nil {
					ch <- res
				}
			}
		}
		if err != nil {
			s.pmu.Lock()
			s.readErr = err
			s.pmu.Unlock()
			return
		}
	}
}

func (s *rawSession) params(method string, p map[string]any) map[string]any {
	if s.e == modernEra {
		p["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    rawModernVersion,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1.0.0"},
		}
	}
	return p
}

func (s *rawSession) notify(ctx context.Context, method string) error {
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	if s.url != "" {
		_, err := s.post(ctx, method, "", msg)
		return err
	}
	return s.send(ctx, msg)
}

// send writes one message on stdio or the WebSocket.
func (s *rawSession) send(ctx context.Context, msg []byte) error {
	if s.ws != nil {
		return s.ws.Write(ctx, websocket.MessageText, msg)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.stdin.Write(append(msg, '\n'))
	return err
}

func (s *rawSession) call(ctx context.Context, method string, p map[string]any) (json.RawMessage, error) {
	id := s.nextID.Add(1)
	name, _ := p["name"].(string)
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": s.params(method, p)})
	if err != nil {
		return nil, err
	}
	var res *rawResponse
	if s.url != "" {
		if res, err = s.post(ctx, method, name, msg); err != nil {
			return nil, err
		}
		if res == nil {
			return nil, fmt.Errorf("raw: %s: no response", method)
		}
	} else {
		ch := make(chan *rawResponse, 1)
		s.pmu.Lock()
		if s.readErr != nil {
			s.pmu.Unlock()
			return nil, s.readErr
		}
		s.pending[id] = ch
		s.pmu.Unlock()
		if err := s.send(ctx, msg); err != nil {
			return nil, err
		}
		select {
		case res = <-ch:
		case <-s.done:
			return nil, fmt.Errorf("raw: server closed: %v", s.readErr)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if res.Error != nil {
		return nil, fmt.Errorf("raw: %s: %d %s", method, res.Error.Code, res.Error.Message)
	}
	return res.Result, nil
}

// post sends one message over HTTP and returns the decoded response
// message, from a JSON body or the first SSE data event carrying an id; nil
// for 202 Accepted.
func (s *rawSession) post(ctx context.Context, method, name string, msg []byte) (*rawResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(msg))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.e == modernEra {
		req.Header.Set("MCP-Protocol-Version", rawModernVersion)
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	} else {
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusAccepted {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("raw: %s: HTTP %d: %s", method, resp.StatusCode, body)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		r := new(rawResponse)
		if err := json.Unmarshal(body, r); err != nil {
			return nil, fmt.Errorf("raw: %s: %w", method, err)
		}
		return r, nil
	}
	// The default 4 KiB buffer: a large one would be allocated per call
	// (per response body) and dominate the floor.
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadBytes('\n')
		if data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:")); ok {
			data = bytes.TrimSpace(data)
			r := new(rawResponse)
			if json.Unmarshal(data, r) == nil && r.ID != nil {
				_, _ = io.Copy(io.Discard, br)
				return r, nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("raw: %s: event stream ended without a response: %w", method, err)
		}
	}
}

// rawCallResult and rawTool are what the floor decodes results into: the
// same information the SDK clients hand to their callers (content blocks,
// isError; every tool's fields), so that the floor does the same work and
// only the libraries' overhead differs.
type rawCallResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

type rawTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  json.RawMessage `json:"annotations"`
	Meta         json.RawMessage `json:"_meta"`
}

func (s *rawSession) callTool(ctx context.Context, name string, args map[string]any) (*rawCallResult, error) {
	raw, err := s.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return nil, err
	}
	r := new(rawCallResult)
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, fmt.Errorf("raw: bad %s result: %v", name, err)
	}
	if r.IsError {
		return nil, fmt.Errorf("raw: %s failed", name)
	}
	return r, nil
}

func (s *rawSession) echo(ctx context.Context, text string) error {
	_, err := s.callTool(ctx, "echo", map[string]any{"text": text})
	return err
}

func (s *rawSession) big(ctx context.Context, size int) (int, error) {
	r, err := s.callTool(ctx, "big", map[string]any{"size": size})
	if err != nil {
		return 0, err
	}
	if len(r.Content) == 0 {
		return 0, errors.New("raw: empty big result")
	}
	return len(r.Content[0].Text), nil
}

func (s *rawSession) listTools(ctx context.Context) (int, error) {
	n := 0
	cursor := ""
	for range 1000 {
		p := map[string]any{}
		if cursor != "" {
			p["cursor"] = cursor
		}
		raw, err := s.call(ctx, "tools/list", p)
		if err != nil {
			return 0, err
		}
		var r struct {
			Tools      []rawTool `json:"tools"`
			NextCursor string    `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return 0, err
		}
		n += len(r.Tools)
		if r.NextCursor == "" {
			return n, nil
		}
		cursor = r.NextCursor
	}
	return 0, errors.New("raw: too many tools/list pages")
}

func (s *rawSession) protocolVersion() string { return s.version }

func (s *rawSession) close() error {
	if s.url != "" {
		return nil // the idle connections belong to the shared pool
	}
	if s.ws != nil {
		err := s.ws.Close(websocket.StatusNormalClosure, "")
		<-s.done
		return err
	}
	_ = s.stdin.Close()
	<-s.done
	return s.cmd.Wait()
}
