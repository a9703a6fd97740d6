package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// mrtrServer answers server/discover and serves tools/call with rounds:
// round(i, params) returns the i-th (0-based) result.
func mrtrServer(round func(i int, p *peer, r *jsonrpc.Request) any) func(p *peer, m jsonrpc.Message) {
	var mu sync.Mutex
	n := 0
	return reqHandler(func(p *peer, r *jsonrpc.Request) {
		if r.Method != protocol.MethodToolsCall {
			modernServer(p, r)
			return
		}
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		p.reply(r, round(i, p, r))
	})
}

// TestMRTRMultiRound: input requests of all three kinds are fulfilled;
// each retry has a new id, the original params, inputResponses under the
// same keys and requestState echoed byte for byte; a requestState-only
// round is retried without inputResponses.
func TestMRTRMultiRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(mrtrServer(func(i int, p *peer, r *jsonrpc.Request) any {
			switch i {
			case 0:
				return json.RawMessage(`{"resultType":"input_required","requestState":"st\u0031\"x","inputRequests":{
					"e":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{}}}},
					"s":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}},
					"r":{"method":"roots/list"}}}`)
			case 1:
				return json.RawMessage(`{"resultType":"input_required","requestState":"only-state"}`)
			}
			return json.RawMessage(`{"resultType":"complete","content":[]}`)
		}))
		s := connected(t, tr, Config{Handler: detected(allHandlers)})
		res, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "book", "arguments": map[string]int{"n": 1}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(res) != `{"resultType":"complete","content":[]}` {
			t.Errorf("result = %s", res)
		}
		calls := tr.peer(0).requests(protocol.MethodToolsCall)
		if len(calls) != 3 {
			t.Fatalf("tools/call sent %d times, want 3", len(calls))
		}
		ids := map[jsonrpc.ID]bool{}
		for i, c := range calls {
			if ids[c.ID] {
				t.Errorf("round %d reused id %v", i, c.ID)
			}
			ids[c.ID] = true
			if string(member(c.Params, "name")) != `"book"` || string(member(c.Params, "arguments")) != `{"n":1}` {
				t.Errorf("round %d lost the original params: %s", i, c.Params)
			}
			if member(c.Params, "_meta") == nil {
				t.Errorf("round %d has no _meta", i)
			}
		}
		if member(calls[0].Params, "inputResponses") != nil || member(calls[0].Params, "requestState") != nil {
			t.Errorf("first request carries MRTR members: %s", calls[0].Params)
		}
		if got := string(member(calls[1].Params, "requestState")); got != `"st\u0031\"x"` {
			t.Errorf("requestState echoed as %s, want the exact bytes", got)
		}
		var resp map[string]json.RawMessage
		if err := json.Unmarshal(member(calls[1].Params, "inputResponses"), &resp); err != nil {
			t.Fatalf("inputResponses: %v in %s", err, calls[1].Params)
		}
		want := map[string]string{
			"e": `{"action":"accept","content":{"ok":true}}`,
			"s": `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`,
			"r": `{"roots":[{"uri":"file:///r","name":"r"}]}`,
		}
		got := map[string]string{}
		for k, v := range resp {
			got[k] = string(v)
		}
		checkDiff(t, "inputResponses", want, got)
		if member(calls[2].Params, "inputResponses") != nil || string(member(calls[2].Params, "requestState")) != `"only-state"` {
			t.Errorf("requestState-only round retried as %s", calls[2].Params)
		}
	})
}

func TestMRTRNoStateWhenAbsent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(mrtrServer(func(i int, p *peer, r *jsonrpc.Request) any {
			if i == 0 {
				return json.RawMessage(`{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"message":"m"}}}}`)
			}
			return json.RawMessage(`{"resultType":"complete"}`)
		}))
		decline := handler.Funcs{Elicit: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			return &protocol.ElicitResult{Action: protocol.ElicitDecline}, nil
		}}
		s := connected(t, tr, Config{Handler: detected(decline)})
		if _, err := s.Call(t.Context(), protocol.MethodPromptsGet, map[string]string{"name": "p"}, nil); err != nil {
			// prompts/get is served by modernServer's echo, so use tools/call below.
			t.Logf("prompts/get: %v", err)
		}
		if _, err := s.Call(t.Context(), protocol.MethodToolsCall, nil, nil); err != nil {
			t.Fatal(err)
		}
		calls := tr.peer(0).requests(protocol.MethodToolsCall)
		if len(calls) != 2 {
			t.Fatalf("tools/call sent %d times, want 2", len(calls))
		}
		if member(calls[1].Params, "requestState") != nil {
			t.Errorf("retry carries a requestState the server never sent: %s", calls[1].Params)
		}
		if got := string(member(calls[1].Params, "inputResponses")); got != `{"e":{"action":"decline"}}` {
			t.Errorf("inputResponses = %s, want the decline", got)
		}
	})
}

func TestMRTRRoundCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(mrtrServer(func(i int, p *peer, r *jsonrpc.Request) any {
			return json.RawMessage(`{"resultType":"input_required","requestState":"again"}`)
		}))
		s := connected(t, tr, Config{MaxInputRounds: 3})
		_, err := s.Call(t.Context(), protocol.MethodToolsCall, nil, nil)
		if !errors.Is(err, ErrTooManyInputRounds) {
			t.Fatalf("Call error = %v, want ErrTooManyInputRounds", err)
		}
		if got := len(tr.peer(0).requests(protocol.MethodToolsCall)); got != 4 {
			t.Errorf("tools/call sent %d times, want 4 (1 + 3 rounds)", got)
		}
	})
}

func TestMRTRTooManyInputRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reqs := make(map[string]any)
		for i := range MaxInputRequests + 1 {
			reqs[fmt.Sprintf("k%d", i)] = map[string]string{"method": "roots/list"}
		}
		result := map[string]any{"resultType": "input_required", "inputRequests": reqs}
		tr := newScripted(mrtrServer(func(i int, p *peer, r *jsonrpc.Request) any { return result }))
		s := connected(t, tr, Config{Handler: detected(allHandlers)})
		if _, err := s.Call(t.Context(), protocol.MethodToolsCall, nil, nil); !errors.Is(err, ErrInvalidResponse) {
			t.Errorf("Call error = %v, want ErrInvalidResponse", err)
		}
	})
}

// serverInput is one input a server asks of the client during a call,
// and what comes of it in each era: in the modern era it is the input
// request of the call's input_required result (TestServerInputModern), in
// the legacy era a server request sent while the call is pending
// (TestServerInputLegacy). Where both eras serve it, the client's answer
// is the same JSON.
type serverInput struct {
	name   string
	h      handler.Funcs
	method string
	params any
	// want is the client's answer where the era serves the input.
	want string
	// modern is the call's error in the modern era (errInputFailed: an
	// *InputError), nil when it serves the input.
	modern error
	// legacy is the error code of the client's answer in the legacy era,
	// 0 when it serves the input.
	legacy int64
}

// errInputFailed marks a serverInput whose modern call fails with an
// *InputError.
var errInputFailed = errors.New("*InputError")

var (
	samplingParams      = map[string]any{"messages": []any{}, "maxTokens": 10}
	samplingToolsParams = map[string]any{"messages": []any{}, "maxTokens": 10, "tools": []any{map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}}}}
	urlElicitParams     = map[string]any{"mode": "url", "message": "m", "url": "https://x"}
)

var serverInputs = []serverInput{
	{name: "ping", method: "ping", want: `{}`, modern: ErrUnexpectedInputRequest},
	{name: "roots", h: handler.Funcs{ListRoots: rootsOK}, method: "roots/list", want: `{"roots":[{"uri":"file:///r","name":"r"}]}`},
	{name: "roots-undeclared", method: "roots/list", modern: ErrUnexpectedInputRequest, legacy: jsonrpc.CodeMethodNotFound},
	{name: "sampling", h: handler.Funcs{CreateMessage: sampleOK}, method: "sampling/createMessage", params: samplingParams,
		want: `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`},
	{name: "sampling-tools-undeclared", h: handler.Funcs{CreateMessage: sampleOK}, method: "sampling/createMessage", params: samplingToolsParams,
		modern: ErrUnexpectedInputRequest, legacy: jsonrpc.CodeInvalidParams},
	{name: "sampling-tools-undeclared-all-handlers", h: allHandlers, method: "sampling/createMessage",
		params: map[string]any{"messages": []any{}, "maxTokens": 1, "tools": []any{map[string]any{"name": "t", "inputSchema": map[string]any{}}}},
		modern: ErrUnexpectedInputRequest, legacy: jsonrpc.CodeInvalidParams},
	{name: "sampling-missing", method: "sampling/createMessage", params: samplingParams, modern: ErrUnexpectedInputRequest, legacy: jsonrpc.CodeMethodNotFound},
	{name: "sampling-undeclared", h: handler.Funcs{Elicit: acceptAll}, method: "sampling/createMessage", params: samplingParams,
		modern: ErrUnexpectedInputRequest, legacy: jsonrpc.CodeMethodNotFound},
	{name: "elicit-form-no-mode", h: handler.Funcs{Elicit: acceptAll}, method: "elicitation/create",
		params: map[string]any{"message": "m", "requestedSchema": map[string]any{"type": "object"}},
		want:   `{"action":"accept","content":{"ok":true}}`},
	{name: "elicit-form-undeclared", h: handler.Funcs{ElicitURL: acceptAll}, method: "elicitation/create", params: map[string]any{"message": "m"},
		modern: ErrUnexpectedInputRequest, legacy: jsonrpc.CodeInvalidParams},
	{name: "elicit-url", h: handler.Funcs{ElicitURL: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		return &protocol.ElicitResult{Action: p.URL}, nil
	}}, method: "elicitation/create", params: map[string]any{"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"},
		want: `{"action":"https://x"}`},
	{name: "elicit-url-undeclared", h: handler.Funcs{Elicit: acceptAll}, method: "elicitation/create", params: urlElicitParams,
		modern: ErrUnexpectedInputRequest, legacy: jsonrpc.CodeInvalidParams},
	{name: "elicit-missing", method: "elicitation/create", params: map[string]any{"message": "m"}, modern: ErrUnexpectedInputRequest, legacy: jsonrpc.CodeMethodNotFound},
	{name: "handler-error", h: handler.Funcs{ListRoots: func(ctx context.Context) ([]protocol.Root, error) {
		return nil, jsonrpc.NewError(-1, "user rejected")
	}}, method: "roots/list", modern: errInputFailed, legacy: -1},
	{name: "sampling-handler-error", h: handler.Funcs{CreateMessage: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
		return nil, errors.New("no model")
	}}, method: "sampling/createMessage", params: samplingParams, modern: errInputFailed, legacy: jsonrpc.CodeInternalError},
	{name: "roots-handler-error", h: handler.Funcs{ListRoots: func(ctx context.Context) ([]protocol.Root, error) {
		return nil, errors.New("no roots")
	}}, method: "roots/list", modern: errInputFailed, legacy: jsonrpc.CodeInternalError},
	{name: "unknown", method: "tasks/list", modern: ErrUnexpectedInputRequest, legacy: jsonrpc.CodeMethodNotFound},
	{name: "unknown-with-handlers", h: allHandlers, method: "tasks/get", params: map[string]any{}, modern: ErrUnexpectedInputRequest, legacy: jsonrpc.CodeMethodNotFound},
}

// TestServerInputModern: the modern era serves an MRTR input request
// through the handler and retries the call once with the answer; an input
// it may not serve or whose handler fails ends the call without a retry.
func TestServerInputModern(t *testing.T) {
	for _, tt := range serverInputs {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(mrtrServer(func(i int, p *peer, r *jsonrpc.Request) any {
					if i > 0 {
						return map[string]any{"resultType": "complete", "answer": json.RawMessage(member(member(r.Params, "inputResponses"), "k"))}
					}
					req := map[string]any{"method": tt.method}
					if tt.params != nil {
						req["params"] = tt.params
					}
					return map[string]any{"resultType": "input_required", "inputRequests": map[string]any{"k": req}}
				}))
				s := connected(t, tr, Config{Handler: detected(tt.h)})
				res, err := s.Call(t.Context(), protocol.MethodToolsCall, nil, nil)
				switch {
				case tt.modern == errInputFailed:
					if _, ok := errors.AsType[*InputError](err); !ok {
						t.Errorf("Call error = %v, want *InputError", err)
					}
				case tt.modern != nil:
					if !errors.Is(err, tt.modern) {
						t.Errorf("Call error = %v, want %v", err, tt.modern)
					}
				case err != nil:
					t.Fatal(err)
				case string(member(res, "answer")) != tt.want:
					t.Errorf("answer = %s, want %s", member(res, "answer"), tt.want)
				}
				want := 2
				if tt.modern != nil {
					want = 1 // no retry
				}
				if got := len(tr.peer(0).requests(protocol.MethodToolsCall)); got != want {
					t.Errorf("tools/call sent %d times, want %d", got, want)
				}
			})
		})
	}
}

// TestServerInputLegacy: legacy server requests are answered through the
// handler; what the handler does not implement gets -32601.
func TestServerInputLegacy(t *testing.T) {
	for _, tt := range serverInputs {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				got := make(chan *jsonrpc.Response, 1)
				tr := newScripted(func(p *peer, m jsonrpc.Message) {
					if r, ok := m.(*jsonrpc.Response); ok {
						got <- r
						return
					}
					r := m.(*jsonrpc.Request)
					if r.Method == "tools/call" {
						// Ask the client while the call is pending.
						req, _ := jsonrpc.NewRequest(jsonrpc.StringID("srv-1"), tt.method, tt.params)
						p.send(req)
						p.goFn(func() { answerWithClientReply(p, r, <-got) })
						return
					}
					legacyServer(p, m)
				})
				s := connected(t, tr, Config{Mode: ModeLegacy, Handler: detected(tt.h)})
				res, err := s.Call(t.Context(), "tools/call", nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				var answer struct {
					Result json.RawMessage `json:"result"`
					Code   int64           `json:"code"`
				}
				if err := json.Unmarshal(res, &answer); err != nil {
					t.Fatal(err)
				}
				if tt.legacy != 0 {
					if answer.Code != tt.legacy {
						t.Errorf("error code = %d (result %s), want %d", answer.Code, answer.Result, tt.legacy)
					}
					return
				}
				if string(answer.Result) != tt.want {
					t.Errorf("result = %s, want %s", answer.Result, tt.want)
				}
			})
		})
	}
}

// answerWithClientReply answers the pending call with what the client
// answered to the server request srv-1.
func answerWithClientReply(p *peer, call *jsonrpc.Request, r *jsonrpc.Response) {
	out := map[string]any{"result": r.Result}
	if r.Error != nil {
		out = map[string]any{"code": r.Error.Code}
	}
	if r.ID != jsonrpc.StringID("srv-1") {
		out = map[string]any{"code": 12345}
	}
	p.reply(call, out)
}

// TestMRTRParallelIsolation: concurrent MRTR calls never see each other's
// requestState or inputResponses.
func TestMRTRParallelIsolation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bad := make(chan string, 100)
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method != protocol.MethodToolsCall {
				modernServer(p, r)
				return
			}
			var args struct {
				N int `json:"n"`
			}
			json.Unmarshal(member(r.Params, "arguments"), &args)
			state := member(r.Params, "requestState")
			if state == nil {
				p.reply(r, json.RawMessage(fmt.Sprintf(`{"resultType":"input_required","requestState":"s-%d","inputRequests":{"k-%d":{"method":"roots/list"}}}`, args.N, args.N)))
				return
			}
			var keys []string
			var resp map[string]json.RawMessage
			json.Unmarshal(member(r.Params, "inputResponses"), &resp)
			for k := range resp {
				keys = append(keys, k)
			}
			if string(state) != fmt.Sprintf(`"s-%d"`, args.N) || !slices.Equal(keys, []string{fmt.Sprintf("k-%d", args.N)}) {
				bad <- fmt.Sprintf("call %d got state %s keys %v", args.N, state, keys)
			}
			p.reply(r, json.RawMessage(fmt.Sprintf(`{"resultType":"complete","n":%d}`, args.N)))
		}))
		s := connected(t, tr, Config{Handler: detected(allHandlers)})
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				res, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "t", "arguments": map[string]int{"n": i}}, nil)
				if err != nil || string(member(res, "n")) != fmt.Sprint(i) {
					bad <- fmt.Sprintf("call %d: %s %v", i, res, err)
				}
			})
		}
		wg.Wait()
		close(bad)
		for b := range bad {
			t.Error(b)
		}
	})
}

// TestInputRoundEvents: each MRTR round the handler answered is an
// EventInputRound naming the request, with the round's number in Count.
func TestInputRoundEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(mrtrServer(func(i int, p *peer, r *jsonrpc.Request) any {
			if i < 2 {
				return json.RawMessage(`{"resultType":"input_required","requestState":"s","inputRequests":{"r":{"method":"roots/list"}}}`)
			}
			return json.RawMessage(`{"resultType":"complete","content":[]}`)
		}))
		var events record[Event]
		cfg := Config{Handler: detected(handler.Funcs{ListRoots: rootsOK}), OnEvent: func(e Event) {
			if e.Kind == EventInputRound {
				events.add(e)
			}
		}}
		s := connected(t, tr, cfg)
		if _, err := s.Call(t.Context(), "tools/call", nil, nil); err != nil {
			t.Fatal(err)
		}
		// Events are delivered in order by the dispatcher, after the fact:
		// wait until it is idle.
		synctest.Wait()
		got := events.all()
		if len(got) != 2 || got[0].Count != 1 || got[1].Count != 2 || got[0].Method != "tools/call" || got[0].Version == "" {
			t.Errorf("input-round events = %+v", got)
		}
	})
}

// TestOnInputRound: CallOptions.OnInputRound is called once per MRTR
// round, numbered from 1, before that round's retry is sent: for rounds
// with input requests (elicitation) and for requestState-only rounds
// alike; never for a call answered at once, nor for a round that failed
// before its retry.
func TestOnInputRound(t *testing.T) {
	elicitRound := `{"resultType":"input_required","requestState":"s","inputRequests":{
		"e":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{}}}}}}`
	stateRound := `{"resultType":"input_required","requestState":"only-state"}`
	complete := `{"resultType":"complete","content":[]}`
	tests := []struct {
		name    string
		results []string // the server's answer to each tools/call, in order
		hs      handler.Funcs
		want    []int
		wantErr bool
	}{
		{name: "no-rounds", results: []string{complete}, hs: allHandlers},
		{name: "elicitation-rounds", results: []string{elicitRound, elicitRound, complete}, hs: allHandlers, want: []int{1, 2}},
		{name: "request-state-only", results: []string{stateRound, complete}, hs: allHandlers, want: []int{1}},
		{name: "mixed", results: []string{elicitRound, stateRound, complete}, hs: allHandlers, want: []int{1, 2}},
		{name: "handler-fails", results: []string{elicitRound, complete}, wantErr: true,
			hs: handler.Funcs{Elicit: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
				return nil, errors.New("no user here")
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(mrtrServer(func(i int, p *peer, r *jsonrpc.Request) any {
					return json.RawMessage(tt.results[min(i, len(tt.results)-1)])
				}))
				s := connected(t, tr, Config{Handler: detected(tt.hs)})
				var got []int
				opts := &CallOptions{OnInputRound: func(round int) {
					got = append(got, round)
					// Called before the retry: the server has seen
					// exactly the requests of the rounds so far.
					if n := len(tr.peer(0).requests(protocol.MethodToolsCall)); n != round {
						t.Errorf("OnInputRound(%d) after %d tools/call requests, want %d", round, n, round)
					}
				}}
				_, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "x"}, opts)
				if (err != nil) != tt.wantErr {
					t.Fatalf("Call error = %v, want error %v", err, tt.wantErr)
				}
				checkDiff(t, "rounds reported", tt.want, got)
			})
		})
	}
}

// TestURLElicitationMalformed: a -32042 whose data is not a list of URL
// elicitations with ids is a *ProtocolError; a well-formed one without a
// URLElicitor is the typed error. Neither hangs.
func TestURLElicitationMalformed(t *testing.T) {
	good := map[string]any{"elicitations": []any{map[string]any{"mode": "url", "elicitationId": "e1", "url": "https://x", "message": "m"}}}
	tests := []struct {
		name  string
		data  any
		typed bool
	}{
		{"good", good, true},
		{"no data", nil, false},
		{"not a list", map[string]any{"elicitations": "x"}, false},
		{"empty", map[string]any{"elicitations": []any{}}, false},
		{"form mode", map[string]any{"elicitations": []any{map[string]any{"mode": "form", "elicitationId": "e", "url": "https://x"}}}, false},
		{"no id", map[string]any{"elicitations": []any{map[string]any{"mode": "url", "url": "https://x"}}}, false},
		{"too many", map[string]any{"elicitations": func() []any {
			var l []any
			for i := range maxURLElicitations + 1 {
				l = append(l, map[string]any{"mode": "url", "elicitationId": fmt.Sprint(i), "url": "https://x"})
			}
			return l
		}()}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(func(p *peer, m jsonrpc.Message) {
					if r, ok := m.(*jsonrpc.Request); ok && r.Method == "tools/call" {
						p.replyErr(r, jsonrpc.CodeURLElicitationRequired, "sign in", tt.data)
						return
					}
					legacyServer(p, m)
				})
				s := connected(t, tr, Config{Mode: ModeLegacy, Handler: detected(handler.Funcs{Elicit: acceptAll})})
				_, err := s.Call(t.Context(), "tools/call", nil, nil)
				_, typed := errors.AsType[*protocol.URLElicitationRequiredError](err)
				_, proto := errors.AsType[*ProtocolError](err)
				if typed != tt.typed || proto == tt.typed || !errors.Is(err, jsonrpc.ErrURLElicitationRequired) {
					t.Errorf("err = %v (typed %v, protocol %v)", err, typed, proto)
				}
			})
		})
	}
}

// TestURLElicitationSharedID: two calls whose -32042 answers name the same
// elicitationId wait for it together: the one whose user declines gives
// up without taking the other's wait with it, and the other goes on when
// the server completes the elicitation (before, it waited
// MaxURLElicitationWait and failed).
func TestURLElicitationSharedID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		elicited := map[string]bool{}
		tr := newScripted(func(p *peer, m jsonrpc.Message) {
			r, ok := m.(*jsonrpc.Request)
			if !ok || r.Method != protocol.MethodToolsCall {
				legacyServer(p, m)
				return
			}
			var params struct{ Name string }
			_ = json.Unmarshal(r.Params, &params)
			mu.Lock()
			again := elicited[params.Name]
			elicited[params.Name] = true
			mu.Unlock()
			if again {
				p.reply(r, map[string]any{"content": []any{}})
				return
			}
			p.replyErr(r, jsonrpc.CodeURLElicitationRequired, "sign in", map[string]any{"elicitations": []any{
				map[string]any{"mode": "url", "elicitationId": "shared", "url": "https://x/" + params.Name, "message": "m"}}})
		})
		release := make(chan struct{})
		elicitor := func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			if strings.HasSuffix(p.URL, "/decline") {
				<-release // until the other call waits
				return &protocol.ElicitResult{Action: protocol.ElicitDecline}, nil
			}
			return &protocol.ElicitResult{Action: protocol.ElicitAccept}, nil
		}
		s := connected(t, tr, Config{Mode: ModeLegacy, Handler: detected(handler.Funcs{ElicitURL: elicitor})})
		declined := make(chan error, 1)
		go func() {
			_, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "decline"}, nil)
			declined <- err
		}()
		accepted := make(chan error, 1)
		go func() {
			_, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "accept"}, nil)
			accepted <- err
		}()
		synctest.Wait() // the accepting call waits for "shared"
		close(release)
		if err := <-declined; !errors.Is(err, jsonrpc.ErrURLElicitationRequired) {
			t.Fatalf("declined call = %v, want the -32042 error", err)
		}
		synctest.Wait()
		tr.peer(0).notify(protocol.NotificationElicitationComplete, map[string]any{"elicitationId": "shared"})
		synctest.Wait()
		select {
		case err := <-accepted:
			if err != nil {
				t.Errorf("accepted call = %v, want its result", err)
			}
		default:
			t.Error("the accepted call still waits after its elicitation completed")
		}
	})
}
