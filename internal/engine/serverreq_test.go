package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

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
				tr := askingOnCall(func(ask func(method string, params any) *jsonrpc.Response) any {
					var out []any
					for _, pr := range probes {
						if resp := ask(pr.method, pr.params); resp.Error != nil {
							out = append(out, resp.Error.Code)
						} else {
							out = append(out, resp.Result)
						}
					}
					return map[string]any{"out": out}
				})
				cfg := Config{Mode: ModeLegacy, Handler: detected(handler.Funcs{CreateMessage: sampleOK}),
					CapabilityOptions: negotiation.CapabilityOptions{TaskRequests: declared}}
				s := connected(t, tr, cfg)
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

// askingOnCall is a legacy scripted server whose tools/call runs call,
// which sends the client requests with ask (each waits for the client's
// answer), and answers the call with what call returns.
func askingOnCall(call func(ask func(method string, params any) *jsonrpc.Response) any) *scripted {
	var (
		mu      sync.Mutex
		waiting = map[jsonrpc.ID]chan *jsonrpc.Response{}
		n       int
	)
	return newScripted(func(p *peer, m jsonrpc.Message) {
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
			p.reply(r, call(func(method string, params any) *jsonrpc.Response {
				ch := make(chan *jsonrpc.Response, 1)
				mu.Lock()
				n++
				id := jsonrpc.StringID(fmt.Sprint("srv-", n))
				waiting[id] = ch
				mu.Unlock()
				req, _ := jsonrpc.NewRequest(id, method, params)
				p.send(req)
				return <-ch
			}))
		})
	})
}

// TestServerCancelsRequest: notifications/cancelled from the server cancels
// the handler's context and no answer is sent.
func TestServerCancelsRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{})
		var handlerErr error
		h := handler.Funcs{Elicit: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			close(started)
			<-ctx.Done()
			handlerErr = ctx.Err()
			return nil, ctx.Err()
		}}
		tr := newScripted(legacyServer)
		s := connected(t, tr, Config{Mode: ModeLegacy, Handler: detected(h)})
		p := tr.peer(0)
		req, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(5), "elicitation/create", map[string]any{"message": "m"})
		p.send(req)
		<-started
		p.notify(protocol.NotificationCancelled, map[string]any{"requestId": 5})
		synctest.Wait()
		if !errors.Is(handlerErr, context.Canceled) {
			t.Errorf("handler ctx error = %v, want Canceled", handlerErr)
		}
		for _, m := range p.messages() {
			if _, ok := m.(*jsonrpc.Response); ok {
				t.Errorf("a cancelled server request was answered: %+v", m)
			}
		}
		_ = s
	})
}

// TestCloseCancelsHandlers: Close cancels running handler contexts and
// joins their goroutines.
func TestCloseCancelsHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var errs []error
		started := make(chan struct{}, 2)
		h := handler.Funcs{CreateMessage: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			started <- struct{}{}
			<-ctx.Done()
			mu.Lock()
			errs = append(errs, ctx.Err())
			mu.Unlock()
			return nil, ctx.Err()
		}}
		tr := newScripted(legacyServer)
		s := connected(t, tr, Config{Mode: ModeLegacy, Handler: detected(h)})
		for i := range 2 {
			req, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(int64(i+1)), "sampling/createMessage", map[string]any{"messages": []any{}, "maxTokens": 1})
			tr.peer(0).send(req)
		}
		<-started
		<-started
		s.Close()
		mu.Lock()
		defer mu.Unlock()
		checkDiff(t, "handler errors after Close", []error{context.Canceled, context.Canceled}, errs, cmpErrors)
	})
}

var cmpErrors = cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) || errors.Is(b, a) })

// askingServer is a legacy peer whose tools/call sends one
// sampling/createMessage to the client and, once the client answered it,
// answers the call: with the client's error as its own when fail is set
// and the client answered with one, else with a result naming what the
// client answered. It records the client's answers.
type askingServer struct {
	fail bool
	// hold, when set, is waited for (closed) before the server sends its
	// request, so that a test can have other calls in flight first; the
	// other calls are then answered after the client answered it.
	hold     chan struct{}
	answered chan struct{}
	once     sync.Once

	mu      sync.Mutex
	calls   map[jsonrpc.ID]*jsonrpc.Request // server request id → the call it was sent for
	answers []*jsonrpc.Response
	n       int
}

func (a *askingServer) serve(p *peer, m jsonrpc.Message) {
	if r, ok := m.(*jsonrpc.Response); ok {
		a.mu.Lock()
		call := a.calls[r.ID]
		delete(a.calls, r.ID)
		a.answers = append(a.answers, r)
		a.mu.Unlock()
		if a.answered != nil {
			a.once.Do(func() { close(a.answered) })
		}
		if call == nil {
			return
		}
		if r.Error != nil && a.fail {
			p.send(jsonrpc.NewErrorResponse(call.ID, r.Error))
			return
		}
		p.reply(call, map[string]any{"coped": true, "clientError": r.Error != nil})
		return
	}
	r := m.(*jsonrpc.Request)
	if r.Method != "tools/call" {
		legacyServer(p, m)
		return
	}
	var params struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(r.Params, &params)
	if params.Name != "sample" {
		p.goFn(func() {
			if a.answered != nil {
				<-a.answered
			}
			p.reply(r, map[string]any{"plain": true})
		})
		return
	}
	a.mu.Lock()
	a.n++
	id := jsonrpc.StringID("srv-" + string(rune('0'+a.n)))
	if a.calls == nil {
		a.calls = map[jsonrpc.ID]*jsonrpc.Request{}
	}
	a.calls[id] = r
	a.mu.Unlock()
	req, _ := jsonrpc.NewRequest(id, protocol.MethodSamplingCreateMessage, map[string]any{"messages": []any{}, "maxTokens": 1})
	p.goFn(func() {
		if a.hold != nil {
			<-a.hold
		}
		p.send(req)
	})
}

func (a *askingServer) received() []*jsonrpc.Response {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*jsonrpc.Response(nil), a.answers...)
}

func failingSampler(err error) *handler.Set {
	return detected(handler.Funcs{CreateMessage: func(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
		return nil, err
	}})
}

// TestLegacyHandlerFailureTied: a legacy server request that arrived while
// its call was the only one in flight is tied to it; when the handler
// fails and the server then fails the call, the call's error is the
// *InputError the modern era gives (same text), with the server's error
// reachable; the server got the handler's *jsonrpc.Error, else -32603 with
// the handler's message.
func TestLegacyHandlerFailureTied(t *testing.T) {
	denied := jsonrpc.NewError(-7, "denied by the user")
	tests := []struct {
		name     string
		err      error
		wantCode int64
		wantMsg  string
		wantText string
	}{
		{"plain error", errors.New("no model"), jsonrpc.CodeInternalError, "no model",
			"input request sampling/createMessage failed: no model"},
		{"json-rpc error", denied, -7, "denied by the user",
			"input request sampling/createMessage failed: " + denied.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := &askingServer{fail: true}
				s := connected(t, newScripted(a.serve), Config{Mode: ModeLegacy, Handler: failingSampler(tt.err)})
				_, err := s.Call(t.Context(), "tools/call", map[string]any{"name": "sample"}, nil)
				ie, ok := errors.AsType[*InputError](err)
				if !ok {
					t.Fatalf("Call error = %v (%T), want *InputError", err, err)
				}
				if err.Error() != tt.wantText {
					t.Errorf("error text = %q, want %q", err, tt.wantText)
				}
				if ie.Method != "tools/call" || ie.InputMethod != protocol.MethodSamplingCreateMessage || ie.Key != "" || !errors.Is(err, tt.err) {
					t.Errorf("InputError = %+v", ie)
				}
				if ie.Server == nil || ie.Server.Code != tt.wantCode || ie.Server.Message != tt.wantMsg {
					t.Errorf("Server = %v, want the server's code %d %q", ie.Server, tt.wantCode, tt.wantMsg)
				}
				got := a.received()
				if len(got) != 1 || got[0].Error == nil || got[0].Error.Code != tt.wantCode || got[0].Error.Message != tt.wantMsg {
					t.Errorf("the server received %+v, want one error %d %q", got, tt.wantCode, tt.wantMsg)
				}
			})
		})
	}
}

// TestLegacyHandlerFailureCoped: when the server copes with the handler's
// failure, the tied call's result is returned as it is.
func TestLegacyHandlerFailureCoped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &askingServer{}
		s := connected(t, newScripted(a.serve), Config{Mode: ModeLegacy, Handler: failingSampler(errors.New("no model"))})
		res, err := s.Call(t.Context(), "tools/call", map[string]any{"name": "sample"}, nil)
		if err != nil {
			t.Fatalf("Call: %v", err)
		}
		if string(res) != `{"clientError":true,"coped":true}` {
			t.Errorf("result = %s, want the server's as it is", res)
		}
		// The call after it is not touched by the old failure.
		if _, err := s.Call(t.Context(), "tools/call", map[string]any{"name": "echo"}, nil); err != nil {
			t.Errorf("next call: %v", err)
		}
	})
}

// TestLegacyHandlerFailureUntied: on a connection with no link between a
// server request and a call (here an in-memory pipe), a request that
// arrives while two calls are in flight is tied to neither: the failing
// call gets the server's *jsonrpc.Error, as before.
func TestLegacyHandlerFailureUntied(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hold := make(chan struct{})
		a := &askingServer{fail: true, hold: hold, answered: make(chan struct{})}
		s := connected(t, newScripted(a.serve), Config{Mode: ModeLegacy, Handler: failingSampler(errors.New("no model"))})
		var wg sync.WaitGroup
		var otherErr error
		wg.Go(func() {
			_, otherErr = s.Call(t.Context(), "tools/call", map[string]any{"name": "echo"}, nil)
		})
		var sampleErr error
		wg.Go(func() {
			_, sampleErr = s.Call(t.Context(), "tools/call", map[string]any{"name": "sample"}, nil)
		})
		synctest.Wait() // both calls are pending at the server
		close(hold)
		wg.Wait()
		if otherErr != nil {
			t.Errorf("the other call: %v", otherErr)
		}
		if _, ok := errors.AsType[*InputError](sampleErr); ok {
			t.Errorf("error = %v, want no tie with two calls in flight", sampleErr)
		}
		je, ok := errors.AsType[*jsonrpc.Error](sampleErr)
		if !ok || je.Code != jsonrpc.CodeInternalError || je.Message != "no model" {
			t.Errorf("error = %v, want the server's -32603 \"no model\"", sampleErr)
		}
	})
}

// TestTaskReceiverTTLBounds: the retention a server asks for a task it
// has the client run is capped at maxReceiverTTL, however large, and
// never wraps around (a ttl past what a Duration holds in milliseconds
// once made a negative retention: the task was purged at once).
func TestTaskReceiverTTLBounds(t *testing.T) {
	for _, ttl := range []int64{1000, int64(maxReceiverTTL / time.Millisecond), 9223372036855, math.MaxInt64} {
		t.Run(fmt.Sprint(ttl), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := askingOnCall(func(ask func(method string, params any) *jsonrpc.Response) any {
					return ask("sampling/createMessage", map[string]any{"messages": []any{}, "maxTokens": 5, "task": map[string]any{"ttl": ttl}}).Result
				})
				cfg := Config{Mode: ModeLegacy, Handler: detected(handler.Funcs{CreateMessage: sampleOK}),
					CapabilityOptions: negotiation.CapabilityOptions{TaskRequests: true}}
				s := connected(t, tr, cfg)
				res, err := s.Call(t.Context(), "tools/call", nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				var created struct{ Task struct{ TTL int64 } }
				if err := json.Unmarshal(res, &created); err != nil {
					t.Fatalf("CreateTaskResult %s: %v", res, err)
				}
				want := min(ttl, int64(maxReceiverTTL/time.Millisecond))
				if created.Task.TTL != want {
					t.Errorf("task ttl = %d ms for a requested %d, want %d", created.Task.TTL, ttl, want)
				}
			})
		})
	}
}

// TestServerRequestIDReusedAfterRespawn: a respawned legacy server numbers
// its requests from 1 again. Its request 1 is answered even while the
// handler of the dead process's request 1 is still running: that
// handler's end does not cancel the new request (before, it did, and the
// new server waited for ever for an answer).
func TestServerRequestIDReusedAfterRespawn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		askRoots := func(p *peer) {
			req, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(1), protocol.MethodRootsList, nil)
			p.send(req)
		}
		var call *jsonrpc.Request
		tr := newScripted(
			func(p *peer, m jsonrpc.Message) {
				if r, ok := m.(*jsonrpc.Request); ok && r.Method == protocol.MethodToolsCall {
					askRoots(p)
					return
				}
				legacyServer(p, m)
			},
			func(p *peer, m jsonrpc.Message) {
				if r, ok := m.(*jsonrpc.Response); ok && r.ID == jsonrpc.Int64ID(1) {
					if r.Error != nil {
						p.replyErr(call, jsonrpc.CodeInternalError, "roots failed", nil)
						return
					}
					p.reply(call, map[string]any{"content": []any{}})
					return
				}
				if r, ok := m.(*jsonrpc.Request); ok && r.Method == protocol.MethodToolsCall {
					call = r
					askRoots(p)
					return
				}
				legacyServer(p, m)
			})
		started := make(chan int, 2)
		release := []chan struct{}{make(chan struct{}), make(chan struct{})}
		n := 0
		roots := func(ctx context.Context) ([]protocol.Root, error) {
			i := n
			n++
			started <- i
			<-release[i] // a handler that does not watch ctx
			return []protocol.Root{{URI: "file:///r"}}, nil
		}
		s := connected(t, tr, Config{Mode: ModeLegacy, Handler: detected(handler.Funcs{ListRoots: roots})})
		done := make(chan error, 1)
		go func() {
			_, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "x"}, &CallOptions{Idempotent: true})
			done <- err
		}()
		<-started
		tr.peer(0).kill() // the process dies with its request 1 being served
		<-started         // the respawned process's request 1 is being served
		close(release[0]) // the dead process's handler ends
		synctest.Wait()
		close(release[1])
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Call = %v", err)
			}
		default:
			t.Fatal("the respawned server's request 1 was never answered")
		}
	})
}
