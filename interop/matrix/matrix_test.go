package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/interop/internal/foreign"
	"github.com/conduitmcp/conduit/interop/internal/testenv"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// features names the calls that exercise a server.
type features struct {
	echo         string
	echoArgs     map[string]any
	echoWant     string // substring of the echo result
	progress     string
	progressArgs map[string]any
	elicit       string
	sample       string
	sampleArgs   map[string]any
	prompt       string
	promptArgs   map[string]string
	resource     string
}

var interopFeatures = features{
	echo: "echo", echoArgs: map[string]any{"text": "hello"}, echoWant: "hello",
	progress: "slow-with-progress", progressArgs: map[string]any{"steps": 3},
	elicit: "ask-name",
	sample: "sample", sampleArgs: map[string]any{},
	prompt: "greet", promptArgs: map[string]string{"name": "Ada"},
	resource: "test://static",
}

var everythingFeatures = features{
	echo: "echo", echoArgs: map[string]any{"message": "hello"}, echoWant: "hello",
	progress: "trigger-long-running-operation", progressArgs: map[string]any{"duration": 0.3, "steps": 3},
	elicit: "trigger-elicitation-request",
	sample: "trigger-sampling-request", sampleArgs: map[string]any{"prompt": "capital of France?", "maxTokens": 50},
	prompt:   "simple-prompt",
	resource: "demo://resource/dynamic/text/1",
}

// serverCase is one foreign server on one transport.
type serverCase struct {
	kind  foreign.Kind
	tr    foreign.Transport
	opts  foreign.Options
	f     features
	eras  []negotiation.Era        // what it serves here
	input map[negotiation.Era]bool // server-initiated rounds (elicitation, sampling) offered in that era
	// progressBeforeResult: progress notifications reach the client before
	// the result (mcp-go's stdio server writes them after it).
	progressBeforeResult bool
	// initializeAnyway: the server is restricted to the modern era but still
	// completes a legacy initialize handshake (go-sdk answers 2025-11-25 by
	// design, mcp-go restricts only what server/discover advertises), so a
	// legacy-only client connects in the legacy era. initializeAnswer is the
	// version it answers with ("" = the one requested).
	initializeAnyway bool
	initializeAnswer string
}

const (
	modern = negotiation.EraModern
	legacy = negotiation.EraLegacy
)

func both(m, l bool) map[negotiation.Era]bool { return map[negotiation.Era]bool{modern: m, legacy: l} }

var servers = []serverCase{
	{kind: foreign.GoSDK, tr: foreign.Stdio, f: interopFeatures, eras: []negotiation.Era{modern, legacy}, input: both(true, true), progressBeforeResult: true},
	{kind: foreign.GoSDK, tr: foreign.Stdio, opts: foreign.Options{Mode: "modern"}, f: interopFeatures, eras: []negotiation.Era{modern}, input: both(true, true), progressBeforeResult: true, initializeAnyway: true, initializeAnswer: "2025-11-25"},
	// Stateless Streamable HTTP: both eras, but no server-to-client
	// requests for legacy clients.
	{kind: foreign.GoSDK, tr: foreign.HTTP, f: interopFeatures, eras: []negotiation.Era{modern, legacy}, input: both(true, false), progressBeforeResult: true},
	{kind: foreign.GoSDK, tr: foreign.HTTP, opts: foreign.Options{Mode: "legacy"}, f: interopFeatures, eras: []negotiation.Era{legacy}, input: both(false, true), progressBeforeResult: true},
	{kind: foreign.MCPGo, tr: foreign.Stdio, f: interopFeatures, eras: []negotiation.Era{modern, legacy}, input: both(true, true)},
	{kind: foreign.MCPGo, tr: foreign.HTTP, f: interopFeatures, eras: []negotiation.Era{modern, legacy}, input: both(true, true), progressBeforeResult: true},
	{kind: foreign.MCPGo, tr: foreign.HTTP, opts: foreign.Options{Mode: "modern"}, f: interopFeatures, eras: []negotiation.Era{modern}, input: both(true, true), progressBeforeResult: true, initializeAnyway: true},
	{kind: foreign.TS, tr: foreign.Stdio, f: interopFeatures, eras: []negotiation.Era{modern, legacy}, input: both(true, true), progressBeforeResult: true},
	{kind: foreign.TS, tr: foreign.HTTP, f: interopFeatures, eras: []negotiation.Era{modern, legacy}, input: both(true, false), progressBeforeResult: true},
	{kind: foreign.TS, tr: foreign.HTTP, opts: foreign.Options{Mode: "modern"}, f: interopFeatures, eras: []negotiation.Era{modern}, input: both(true, false), progressBeforeResult: true},
	{kind: foreign.Everything, tr: foreign.Stdio, f: everythingFeatures, eras: []negotiation.Era{legacy}, input: both(false, true), progressBeforeResult: true},
	{kind: foreign.Everything, tr: foreign.HTTP, f: everythingFeatures, eras: []negotiation.Era{legacy}, input: both(false, true), progressBeforeResult: true},
	{kind: foreign.Everything, tr: foreign.SSE, f: everythingFeatures, eras: []negotiation.Era{legacy}, input: both(false, true), progressBeforeResult: true},
}

func (s serverCase) name() string {
	n := string(s.kind) + "/" + string(s.tr)
	if s.opts.Mode != "" {
		n += "(" + s.opts.Mode + "-only)"
	}
	return n
}

func (s serverCase) serves(e negotiation.Era) bool {
	for _, x := range s.eras {
		if x == e {
			return true
		}
	}
	return false
}

// mode is one client negotiation mode and the era it must end in.
type mode struct {
	name       string
	p          client.Protocol
	want       func(s serverCase) (negotiation.Era, bool) // era, or false: typed error
	pinVersion string                                     // pinned version, checked when set
}

var modes = []mode{
	{name: "auto", p: client.Auto, want: func(s serverCase) (negotiation.Era, bool) {
		if s.serves(modern) {
			return modern, true
		}
		return legacy, true
	}},
	{name: "modern", p: client.Modern, want: func(s serverCase) (negotiation.Era, bool) { return modern, s.serves(modern) }},
	{name: "legacy", p: client.Legacy, want: func(s serverCase) (negotiation.Era, bool) { return legacy, s.serves(legacy) || s.initializeAnyway }},
	{name: "pin-2025-06-18", p: client.Pin("2025-06-18"), pinVersion: "2025-06-18", want: func(s serverCase) (negotiation.Era, bool) {
		return legacy, s.serves(legacy) || s.initializeAnyway && (s.initializeAnswer == "" || s.initializeAnswer == "2025-06-18")
	}},
	{name: "pin-2026-07-28", p: client.Pin("2026-07-28"), pinVersion: "2026-07-28", want: func(s serverCase) (negotiation.Era, bool) { return modern, s.serves(modern) }},
}

// testHandler answers elicitation and sampling and counts the rounds.
type testHandler struct {
	mu               sync.Mutex
	elicits, samples int
}

func (h *testHandler) Elicit(_ context.Context, _ *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	h.mu.Lock()
	h.elicits++
	h.mu.Unlock()
	return &protocol.ElicitResult{Action: "accept", Content: map[string]any{"name": "Conduit"}}, nil
}

func (h *testHandler) CreateMessage(_ context.Context, _ *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	h.mu.Lock()
	h.samples++
	h.mu.Unlock()
	return &protocol.CreateMessageResult{Role: "assistant", Content: json.RawMessage(`{"type":"text","text":"Paris"}`), Model: "conduit-test", StopReason: "endTurn"}, nil
}

func (h *testHandler) counts() (elicits, samples int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.elicits, h.samples
}

// cellTimeout bounds one cell (connect and every call).
const cellTimeout = 45 * time.Second

type cell struct {
	server, mode, outcome string
}

func TestForeignServers(t *testing.T) {
	var mu sync.Mutex
	var cells []cell
	for _, s := range servers {
		t.Run(s.name(), func(t *testing.T) {
			t.Parallel()
			dial := dialer(t, s)
			for _, m := range modes {
				t.Run(m.name, func(t *testing.T) {
					out := runCell(t, s, m, dial)
					mu.Lock()
					cells = append(cells, cell{s.name(), m.name, out})
					mu.Unlock()
				})
			}
		})
	}
	t.Cleanup(func() { printMatrix(cells) })
}

// dialer returns how to connect to s: a fresh process per connection on
// stdio, one shared process on HTTP.
func dialer(t *testing.T, s serverCase) func(ctx context.Context, opts ...client.Option) (*client.Client, error) {
	if s.tr == foreign.Stdio {
		argv := foreign.Command(t, s.kind, s.opts)
		return func(ctx context.Context, opts ...client.Option) (*client.Client, error) {
			return client.Connect(ctx, transport.Command(argv[0], argv[1:]...), opts...)
		}
	}
	url := foreign.StartHTTP(t, s.kind, s.tr, s.opts)
	return func(ctx context.Context, opts ...client.Option) (*client.Client, error) {
		return client.Dial(ctx, url, opts...)
	}
}

func runCell(t *testing.T, s serverCase, m mode, dial func(context.Context, ...client.Option) (*client.Client, error)) string {
	ctx, cancel := context.WithTimeout(context.Background(), cellTimeout)
	defer cancel()
	h := &testHandler{}
	wantEra, ok := m.want(s)
	c, err := dial(ctx, client.WithProtocol(m.p), client.WithHandler(h), client.WithRetry(client.RetryPolicy{ProbeTimeout: 5 * time.Second}))
	if !ok {
		if err == nil {
			got := fmt.Sprintf("%v %s", c.Negotiated().Era, c.Negotiated().Version)
			c.Close()
			t.Errorf("connected (%s); want a typed error: the server cannot serve the %s era", got, wantEra)
			return "UNEXPECTED " + got
		}
		if typed := typedCause(err); typed == nil {
			t.Errorf("error %T %v: want a *engine.NegotiationError caused by a *negotiation.Error, a *negotiation.UnsupportedProtocolVersionError or a -32022 *jsonrpc.Error", err, err)
			return "UNTYPED ERROR " + shorten(err.Error())
		} else {
			return fmt.Sprintf("typed error %T", typed)
		}
	}
	if err != nil {
		t.Errorf("connect: %v", err)
		return "CONNECT FAILED " + shorten(err.Error())
	}
	defer c.Close()
	if c.Negotiated().Era != wantEra {
		t.Errorf("era %v (%s), want %v", c.Negotiated().Era, c.Negotiated().Version, wantEra)
	}
	// Every server here speaks the newest version of the era it serves.
	wantVersion := m.pinVersion
	if wantVersion == "" {
		wantVersion = map[negotiation.Era]string{modern: "2026-07-28", legacy: "2025-11-25"}[wantEra]
	}
	if c.Negotiated().Version != wantVersion {
		t.Errorf("version %s, want %s", c.Negotiated().Version, wantVersion)
	}
	var notes []string
	fail := func(step string, err error) {
		t.Errorf("%s: %v", step, err)
		notes = append(notes, step+" FAILED")
	}

	n := 0
	for _, err := range c.Tools(ctx) {
		if err != nil {
			fail("tools/list", err)
			break
		}
		n++
	}
	notes = append(notes, fmt.Sprintf("%d tools", n))
	if res, err := c.CallTool(ctx, s.f.echo, s.f.echoArgs); err != nil {
		fail("call "+s.f.echo, err)
	} else if !strings.Contains(res.Text(), s.f.echoWant) {
		fail("call "+s.f.echo, fmt.Errorf("result %q lacks %q", res.Text(), s.f.echoWant))
	}
	if res, err := c.GetPrompt(ctx, s.f.prompt, s.f.promptArgs); err != nil {
		fail("prompts/get", err)
	} else if len(res.Messages) == 0 {
		fail("prompts/get", errors.New("no messages"))
	}
	if res, err := c.ReadResource(ctx, s.f.resource); err != nil {
		fail("resources/read", err)
	} else if len(res.Contents) == 0 {
		fail("resources/read", errors.New("no contents"))
	}
	var pmu sync.Mutex
	progress, beforeResult := 0, 0
	returned := false
	gotProgress := make(chan struct{}, 1)
	_, err = c.CallTool(ctx, s.f.progress, s.f.progressArgs, client.WithProgress(func(protocol.ProgressParams) {
		pmu.Lock()
		progress++
		if !returned {
			beforeResult++
		}
		pmu.Unlock()
		select {
		case gotProgress <- struct{}{}:
		default:
		}
	}))
	pmu.Lock()
	returned = true
	pmu.Unlock()
	if err != nil {
		fail("progress call", err)
	} else if s.progressBeforeResult {
		// The server sends its notifications before the result; the
		// client delivers them from its dispatcher goroutine, possibly
		// after CallTool returned, so wait for the first one.
		select {
		case <-gotProgress:
		case <-ctx.Done():
			fail("progress", errors.New("no progress notification delivered"))
		}
	}
	pmu.Lock()
	got, early := progress, beforeResult
	pmu.Unlock()
	notes = append(notes, fmt.Sprintf("progress %d (%d before result)", got, early))
	if s.input[c.Negotiated().Era] {
		if res, err := c.CallTool(ctx, s.f.elicit, map[string]any{}); err != nil {
			fail("elicitation", err)
		} else if e, _ := h.counts(); e == 0 || res.Failed() {
			fail("elicitation", fmt.Errorf("handler called %d times, result %q", e, res.Text()))
		}
		if res, err := c.CallTool(ctx, s.f.sample, s.f.sampleArgs); err != nil {
			fail("sampling", err)
		} else if _, n := h.counts(); n == 0 || res.Failed() {
			fail("sampling", fmt.Errorf("handler called %d times, result %q", n, res.Text()))
		}
		notes = append(notes, "elicit+sample")
	} else {
		notes = append(notes, "no input rounds offered")
	}
	return fmt.Sprintf("%v %s: %s", c.Negotiated().Era, c.Negotiated().Version, strings.Join(notes, ", "))
}

// typedCause returns the typed cause of a negotiation failure, or nil when
// err is not a *engine.NegotiationError with one.
func typedCause(err error) error {
	var se *engine.NegotiationError
	if !errors.As(err, &se) {
		return nil
	}
	var uv *negotiation.UnsupportedProtocolVersionError
	if errors.As(err, &uv) {
		return uv
	}
	var ne *negotiation.Error
	if errors.As(err, &ne) {
		return ne
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) && errors.Is(err, jsonrpc.ErrUnsupportedProtocolVersion) {
		return je
	}
	return nil
}

func shorten(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

func printMatrix(cells []cell) {
	sort.SliceStable(cells, func(i, j int) bool { return cells[i].server < cells[j].server })
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-40s %-15s %s\n", "server/transport", "mode", "era / result")
	for _, c := range cells {
		fmt.Fprintf(&b, "%-40s %-15s %s\n", c.server, c.mode, c.outcome)
	}
	fmt.Print(b.String())
}
