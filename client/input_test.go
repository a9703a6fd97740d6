package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// refusingElicitor declares elicitation but fails the test when called:
// manual-mode calls must never reach it.
func refusingElicitor(t *testing.T) handler.Funcs {
	return handler.Funcs{Elicit: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		t.Error("the handler was asked for input a manual call should hand back")
		return nil, errors.New("unexpected")
	}}
}

func nameAnswer(name string) *protocol.ElicitResult {
	return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": name}}
}

// pendingOf extracts the *InputRequired of a manual call and checks it.
func pendingOf(t *testing.T, err error, wantKey string, wantRound int) *client.InputRequired {
	t.Helper()
	var ir *client.InputRequired
	if !errors.As(err, &ir) {
		t.Fatalf("err = %v, want an *InputRequired", err)
	}
	if r, ok := ir.Requests[wantKey]; !ok || r.Method != protocol.MethodElicitationCreate || len(ir.Requests) != 1 {
		t.Fatalf("Requests = %+v, want one elicitation/create under %q", ir.Requests, wantKey)
	}
	if ir.Method != protocol.MethodToolsCall || ir.Round != wantRound || len(ir.RequestState) == 0 {
		t.Fatalf("InputRequired = %+v, want tools/call round %d with a requestState", ir, wantRound)
	}
	return ir
}

// askManually connects a client in era p over tr whose handler refuses
// every elicitation, and starts a two-round ask_rounds call in manual
// input mode; it returns the client, the test's context and the call's
// error (the input request it hands back).
func askManually(t *testing.T, tr string, p client.Protocol) (*fixture, context.Context, error) {
	t.Helper()
	f := connect(t, tr, testserver.Options{}, client.WithProtocol(p), client.WithHandler(refusingElicitor(t)))
	ctx := testCtx(t)
	_, err := f.c.CallTool(ctx, "ask_rounds", map[string]any{"rounds": 2}, client.WithManualInput(true))
	return f, ctx, err
}

// TestManualInputAcrossClients: a modern call in manual mode hands back
// its input request; the state, stored as JSON, is resumed by another
// client (a new connection, as another process would make), which again
// stops at the second round and finishes with the answers of both.
func TestManualInputAcrossClients(t *testing.T) {
	for _, tr := range []string{tPipe, tStdio, tHTTP} {
		t.Run(tr, func(t *testing.T) {
			f, ctx, err := askManually(t, tr, client.Modern)
			var ce *client.Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			ir := pendingOf(t, err, "q0", 1)
			stored, err := json.Marshal(ir)
			if err != nil {
				t.Fatal(err)
			}
			var tok string
			if json.Unmarshal(ir.RequestState, &tok) != nil || f.srv != nil && !f.srv.VerifyRequestState(tok) {
				t.Fatalf("requestState %s is not the server's", ir.RequestState)
			}

			// Another client of the same server resumes the stored state.
			c2 := f.c
			if tr == tHTTP {
				var err error
				c2, err = client.Dial(ctx, f.ts.URL, client.WithProtocol(client.Modern), client.WithHandler(refusingElicitor(t)))
				if err != nil {
					t.Fatal(err)
				}
				defer c2.Close()
				f.c.Close()
			}
			var loaded client.InputRequired
			if err := json.Unmarshal(stored, &loaded); err != nil {
				t.Fatal(err)
			}
			err = c2.Resume(ctx, &loaded, map[string]any{"q0": nameAnswer("Ada")}, nil, client.WithManualInput(true))
			ir2 := pendingOf(t, err, "q1", 2)
			var res protocol.CallToolResult
			if err := c2.Resume(ctx, ir2, map[string]any{"q1": json.RawMessage(`{"action":"accept","content":{"name":"Bob"}}`)}, &res); err != nil {
				t.Fatalf("Resume = %v", err)
			}
			if got := res.Text(); got != "Ada;Bob;" {
				t.Errorf("result = %q, want %q", got, "Ada;Bob;")
			}
		})
	}
}

// TestManualInputResumeWithHandler: resumed without WithManualInput, a
// later round is answered by the handler.
func TestManualInputResumeWithHandler(t *testing.T) {
	h := &testHandler{content: map[string]any{"name": "Handler"}}
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern), client.WithHandler(h))
	ctx := testCtx(t)
	_, err := f.c.CallTool(ctx, "ask_rounds", map[string]any{"rounds": 3}, client.WithManualInput(true))
	ir := pendingOf(t, err, "q0", 1)
	var res protocol.CallToolResult
	if err := f.c.Resume(ctx, ir, map[string]any{"q0": nameAnswer("Ada")}, &res); err != nil {
		t.Fatalf("Resume = %v", err)
	}
	if got := res.Text(); got != "Ada;Handler;Handler;" {
		t.Errorf("result = %q", got)
	}
}

// TestManualInputRefused: bad stored states and answers are the caller's
// error, sent nowhere; the legacy era cannot resume.
func TestManualInputRefused(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern), client.WithHandler(refusingElicitor(t)))
	ctx := testCtx(t)
	_, err := f.c.CallTool(ctx, "ask_rounds", map[string]any{"rounds": 1}, client.WithManualInput(true))
	ir := pendingOf(t, err, "q0", 1)
	bad := []struct {
		name    string
		p       *client.InputRequired
		answers map[string]any
	}{
		{"nil", nil, nil},
		{"unknown key", ir, map[string]any{"nope": nameAnswer("x")}},
		{"invalid JSON", ir, map[string]any{"q0": json.RawMessage(`{`)}},
		{"other method", &client.InputRequired{Method: protocol.MethodToolsList, Requests: ir.Requests}, nil},
		{"state not a string", &client.InputRequired{Method: ir.Method, Params: ir.Params, Requests: ir.Requests, RequestState: json.RawMessage(`{}`)}, nil},
		{"params not an object", &client.InputRequired{Method: ir.Method, Params: json.RawMessage(`[1]`), Requests: ir.Requests}, nil},
	}
	for _, b := range bad {
		err := f.c.Resume(ctx, b.p, b.answers, nil)
		if e, ok := errors.AsType[*client.Error](err); !ok || e.Kind != client.KindInvalid {
			t.Errorf("%s: Resume = %v, want an *Error of kind invalid", b.name, err)
		}
	}
	// A state the server did not issue is refused by the server.
	forged := *ir
	forged.RequestState = json.RawMessage(`"forged"`)
	if err := f.c.Resume(ctx, &forged, map[string]any{"q0": nameAnswer("x")}, nil); err == nil {
		t.Error("Resume with a forged requestState succeeded")
	}

	// A stored (not live) state cannot be resumed in the legacy era.
	lf := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Legacy), client.WithHandler(refusingElicitor(t)))
	if err := lf.c.Resume(ctx, ir, map[string]any{"q0": nameAnswer("x")}, nil); !errors.Is(err, client.ErrNotSupported) {
		t.Errorf("legacy Resume = %v, want ErrNotSupported", err)
	}
}

// onlyKey returns the one key of ir.Requests, checking its method.
func onlyKey(t *testing.T, err error) (*client.InputRequired, string) {
	t.Helper()
	var ir *client.InputRequired
	if !errors.As(err, &ir) || len(ir.Requests) != 1 {
		t.Fatalf("err = %v, want an *InputRequired with one request", err)
	}
	for k, r := range ir.Requests {
		if r.Method != protocol.MethodElicitationCreate {
			t.Fatalf("request %s is %s", k, r.Method)
		}
		return ir, k
	}
	return nil, ""
}

// TestManualInputLegacy: in the legacy era the server's requests are held
// on the live connection and handed to the caller; Resume answers them
// and waits for the call, which ends with the answers of both rounds. A
// copy decoded from JSON is not live; a caller that gives up ends the
// call.
func TestManualInputLegacy(t *testing.T) {
	for _, tr := range []string{tPipe, tStdio, tHTTP} {
		t.Run(tr, func(t *testing.T) {
			f, ctx, err := askManually(t, tr, client.Legacy)
			ir, k := onlyKey(t, err)
			// The key is the server's id as text (the test server's ids
			// are strings "srv-N"), not its JSON with quotes.
			if !strings.HasPrefix(k, "srv-") {
				t.Errorf("held request key %q, want the server's id srv-N without quotes", k)
			}
			b, _ := json.Marshal(ir)
			var copied client.InputRequired
			if err := json.Unmarshal(b, &copied); err != nil {
				t.Fatal(err)
			}
			if err := f.c.Resume(ctx, &copied, map[string]any{k: nameAnswer("x")}, nil); !errors.Is(err, client.ErrNotSupported) ||
				!strings.Contains(err.Error(), "can only be answered on its live connection") || strings.Contains(err.Error(), "\n") {
				t.Errorf("Resume(decoded copy) = %q, want ErrNotSupported saying, on one line, that a legacy request needs its live connection", err)
			}
			err = f.c.Resume(ctx, ir, map[string]any{k: nameAnswer("Ada")}, nil)
			ir2, k2 := onlyKey(t, err)
			if ir2.Round != 2 || k2 == k {
				t.Errorf("second round = %+v (key %s, first %s)", ir2, k2, k)
			}
			var res protocol.CallToolResult
			if err := f.c.Resume(ctx, ir2, map[string]any{k2: nameAnswer("Bob")}, &res); err != nil {
				t.Fatalf("Resume = %v", err)
			}
			if got := res.Text(); got != "Ada;Bob;" {
				t.Errorf("result = %q, want %q", got, "Ada;Bob;")
			}

			// A key left out is answered with an error: the server's tool fails.
			_, err = f.c.CallTool(ctx, "ask_rounds", map[string]any{"rounds": 1}, client.WithManualInput(true))
			ir3, _ := onlyKey(t, err)
			if e, ok := errors.AsType[*client.Error](f.c.Resume(ctx, ir3, map[string]any{}, nil)); !ok || e.Kind != client.KindServer {
				t.Errorf("Resume without the answer = %v, want the server's error", e)
			}
			// A caller that stops waiting ends the call in the background.
			short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			_, err = f.c.CallTool(short, "slow", map[string]any{"steps": 1, "delayMs": 5000}, client.WithManualInput(true))
			if e, ok := errors.AsType[*client.Error](err); !ok || e.Kind != client.KindTimeout {
				t.Errorf("manual CallTool past its deadline = %v, want a timeout", err)
			}
			if tr == tPipe {
				// The 5s tool ends long before it would finish. (Over
				// legacy HTTP the server stays busy with its GET stream,
				// so WaitIdle cannot tell; the same holds for a call
				// without WithManualInput.)
				idle, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				if err := f.srv.WaitIdle(idle); err != nil {
					t.Fatalf("the abandoned manual call was not cancelled: %v", err)
				}
			}
			// The connection still works.
			if _, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "ok"}); err != nil {
				t.Errorf("CallTool after an abandoned manual call = %v", err)
			}
		})
	}
}

// TestMaxInputRounds: the client option moves the MRTR cap.
func TestMaxInputRounds(t *testing.T) {
	h := &testHandler{content: map[string]any{"name": "A"}}
	ctx := testCtx(t)
	tests := []struct {
		max, rounds int
		ok          bool
	}{
		{2, 2, true},
		{2, 3, false},
		{0, 10, true},
		{0, 11, false},
		{12, 11, true},
	}
	for _, tt := range tests {
		f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern), client.WithHandler(h), client.WithMaxInputRounds(tt.max))
		_, err := f.c.CallTool(ctx, "ask_rounds", map[string]any{"rounds": tt.rounds})
		if tt.ok && err != nil {
			t.Errorf("max %d, rounds %d: %v", tt.max, tt.rounds, err)
		}
		if e, ok := errors.AsType[*client.Error](err); !tt.ok && (!ok || e.Kind != client.KindProtocol) {
			t.Errorf("max %d, rounds %d: err = %v, want a protocol error (too many rounds)", tt.max, tt.rounds, err)
		}
	}
}

// completions records notifications/elicitation/complete.
type completions struct {
	ids record[string]
	ch  chan struct{}
}

func newCompletions() *completions { return &completions{ch: make(chan struct{}, 16)} }

func (c *completions) on(_ context.Context, id string) {
	c.ids.add(id)
	c.ch <- struct{}{}
}

func (c *completions) await(t *testing.T) string {
	t.Helper()
	await(t, c.ch, "no notifications/elicitation/complete reached the listener")
	ids := c.ids.all()
	return ids[len(ids)-1]
}

// TestURLElicitationRequiredTyped: without a URLElicitor, -32042 reaches
// the caller as a typed error carrying the URL, and the server's
// elicitation/complete reaches the listener.
func TestURLElicitationRequiredTyped(t *testing.T) {
	for _, tr := range []string{tPipe, tStdio, tHTTP} {
		t.Run(tr, func(t *testing.T) {
			done := newCompletions()
			f := connect(t, tr, testserver.Options{}, client.WithProtocol(client.Pin(protocol.Version20251125)),
				client.WithHandler(handler.Funcs{OnElicitationComplete: done.on}))
			_, err := f.c.CallTool(testCtx(t), "url_required", nil)
			var ue *protocol.URLElicitationRequiredError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want a *protocol.URLElicitationRequiredError", err)
			}
			if len(ue.Elicitations) != 1 || !strings.HasPrefix(ue.Elicitations[0].URL, "https://example.com/consent?id=consent-") || ue.Elicitations[0].ElicitationID == "" {
				t.Fatalf("Elicitations = %+v", ue.Elicitations)
			}
			if !errors.Is(err, jsonrpc.ErrURLElicitationRequired) {
				t.Errorf("err does not match jsonrpc.ErrURLElicitationRequired")
			}
			if e, _ := errors.AsType[*client.Error](err); e == nil || e.Kind != client.KindServer {
				t.Errorf("err = %#v, want an *Error of kind server", err)
			}
			if id := done.await(t); id != ue.Elicitations[0].ElicitationID {
				t.Errorf("completed %q, want %q", id, ue.Elicitations[0].ElicitationID)
			}
		})
	}
}

// TestURLElicitationRequiredHandled: with a URLElicitor the URL reaches
// the handler; after the server's completion the call is sent again and
// succeeds. A declined URL is the caller's typed error.
func TestURLElicitationRequiredHandled(t *testing.T) {
	for _, tr := range []string{tPipe, tStdio, tHTTP} {
		t.Run(tr, func(t *testing.T) {
			var mu sync.Mutex
			var urls []string
			action := protocol.ElicitAccept
			h := handler.Funcs{ElicitURL: func(_ context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
				mu.Lock()
				defer mu.Unlock()
				urls = append(urls, p.URL)
				return &protocol.ElicitResult{Action: action}, nil
			}}
			f := connect(t, tr, testserver.Options{}, client.WithProtocol(client.Pin(protocol.Version20251125)), client.WithHandler(h))
			ctx := testCtx(t)
			res, err := f.c.CallTool(ctx, "url_required", nil)
			if err != nil {
				t.Fatalf("CallTool = %v", err)
			}
			if !strings.HasPrefix(res.Text(), "signed in (consent-") {
				t.Errorf("result = %q", res.Text())
			}
			mu.Lock()
			if len(urls) != 1 || !strings.Contains(urls[0], "consent-") {
				t.Errorf("handler saw %q, want one consent URL", urls)
			}
			action = protocol.ElicitDecline
			mu.Unlock()
			_, err = f.c.CallTool(ctx, "url_required", nil)
			if ue, ok := errors.AsType[*protocol.URLElicitationRequiredError](err); !ok || len(ue.Elicitations) != 1 {
				t.Errorf("declined: err = %v, want a *protocol.URLElicitationRequiredError", err)
			}
		})
	}
}

// TestURLElicitationNeverCompletes: an elicitation the server never
// completes ends with the caller's context, not a hang.
func TestURLElicitationNeverCompletes(t *testing.T) {
	h := handler.Funcs{ElicitURL: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		return &protocol.ElicitResult{Action: protocol.ElicitAccept}, nil
	}}
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Pin(protocol.Version20251125)), client.WithHandler(h))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := f.c.CallTool(ctx, "url_required", map[string]any{"complete": false})
	if e, ok := errors.AsType[*client.Error](err); !ok || e.Kind != client.KindTimeout {
		t.Errorf("err = %v, want a timeout", err)
	}
}
