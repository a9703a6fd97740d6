package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

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
				s, err := connect(t, tr, Config{Mode: ModeLegacy, Handler: handler.Detect(handler.Funcs{Elicit: acceptAll})})
				if err != nil {
					t.Fatal(err)
				}
				_, err = s.Call(t.Context(), "tools/call", nil, nil)
				_, typed := errors.AsType[*URLElicitationRequiredError](err)
				_, proto := errors.AsType[*ProtocolError](err)
				if typed != tt.typed || proto == tt.typed || !errors.Is(err, jsonrpc.ErrURLElicitationRequired) {
					t.Errorf("err = %v (typed %v, protocol %v)", err, typed, proto)
				}
			})
		})
	}
}

// TestTaskReceiverPeerErrors: a server's bad tasks/* requests get
// -32602, and without the capability a task-augmented request is served
// at once (no task) and tasks/* is -32601.
func TestTaskReceiverPeerErrors(t *testing.T) {
	probes := []struct {
		method string
		params any
	}{
		{"tasks/get", map[string]any{"taskId": "nope"}},
		{"tasks/get", map[string]any{}},
		{"tasks/result", map[string]any{"taskId": "nope"}},
		{"tasks/cancel", map[string]any{"taskId": "nope"}},
		{"tasks/list", map[string]any{"cursor": "c"}},
		{"sampling/createMessage", map[string]any{"messages": []any{}, "maxTokens": 5, "task": map[string]any{}}},
	}
	for _, declared := range []bool{true, false} {
		t.Run(fmt.Sprint("declared=", declared), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				waiting := map[jsonrpc.ID]chan *jsonrpc.Response{}
				tr := newScripted(func(p *peer, m jsonrpc.Message) {
					if r, ok := m.(*jsonrpc.Response); ok {
						mu.Lock()
						ch := waiting[r.ID]
						mu.Unlock()
						ch <- r
						return
					}
					r := m.(*jsonrpc.Request)
					if r.Method != "tools/call" {
						legacyServer(p, m)
						return
					}
					p.goFn(func() {
						var out []any
						for i, pr := range probes {
							id := jsonrpc.StringID(fmt.Sprint("srv-", i))
							ch := make(chan *jsonrpc.Response, 1)
							mu.Lock()
							waiting[id] = ch
							mu.Unlock()
							req, _ := jsonrpc.NewRequest(id, pr.method, pr.params)
							p.send(req)
							resp := <-ch
							if resp.Error != nil {
								out = append(out, resp.Error.Code)
							} else {
								out = append(out, resp.Result)
							}
						}
						p.reply(r, map[string]any{"out": out})
					})
				})
				cfg := Config{Mode: ModeLegacy, Handler: handler.Detect(handler.Funcs{CreateMessage: sampleOK}),
					CapabilityOptions: negotiation.CapabilityOptions{TaskRequests: declared}}
				s, err := connect(t, tr, cfg)
				if err != nil {
					t.Fatal(err)
				}
				res, err := s.Call(t.Context(), "tools/call", nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				var got struct{ Out []json.RawMessage }
				if err := json.Unmarshal(res, &got); err != nil || len(got.Out) != len(probes) {
					t.Fatalf("answers = %s (%v)", res, err)
				}
				want := fmt.Sprint(jsonrpc.CodeInvalidParams)
				if !declared {
					want = fmt.Sprint(jsonrpc.CodeMethodNotFound)
				}
				for i, o := range got.Out[:len(probes)-1] {
					if string(o) != want {
						t.Errorf("%s %v: answer %s, want error %s", probes[i].method, probes[i].params, o, want)
					}
				}
				var created struct {
					Task  *struct{ TaskID, Status string }
					Model string
				}
				last := got.Out[len(probes)-1]
				if json.Unmarshal(last, &created) != nil || (created.Task != nil) != declared || (created.Model != "") == declared {
					t.Errorf("task-augmented sampling answered %s (declared %v)", last, declared)
				}
			})
		})
	}
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
		cfg := Config{Handler: handler.Detect(handler.Funcs{ListRoots: rootsOK}), OnEvent: func(e Event) {
			if e.Kind == EventInputRound {
				events.add(e)
			}
		}}
		s, err := connect(t, tr, cfg)
		if err != nil {
			t.Fatal(err)
		}
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
				s, err := connect(t, tr, Config{Handler: handler.Detect(tt.hs)})
				if err != nil {
					t.Fatal(err)
				}
				var got []int
				opts := &CallOptions{OnInputRound: func(round int) {
					got = append(got, round)
					// Called before the retry: the server has seen
					// exactly the requests of the rounds so far.
					if n := len(tr.peer(0).requests(protocol.MethodToolsCall)); n != round {
						t.Errorf("OnInputRound(%d) after %d tools/call requests, want %d", round, n, round)
					}
				}}
				_, err = s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "x"}, opts)
				if (err != nil) != tt.wantErr {
					t.Fatalf("Call error = %v, want error %v", err, tt.wantErr)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("rounds reported (-want +got):\n%s", diff)
				}
			})
		})
	}
}
