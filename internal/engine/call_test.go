package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

func TestSpliceMeta(t *testing.T) {
	prefix := []byte(`"p":1`)
	tests := []struct {
		name   string
		params string
		token  int64
		level  protocol.LoggingLevel
		want   string
		err    error
	}{
		{"nil", "", 0, "", `{"_meta":{"p":1}}`, nil},
		{"null", "null", 0, "", `{"_meta":{"p":1}}`, nil},
		{"empty", `{}`, 0, "", `{"_meta":{"p":1}}`, nil},
		{"empty-spaced", `{ }`, 0, "", `{"_meta":{"p":1} }`, nil},
		{"object", `{"name":"x","arguments":{"_meta":1}}`, 0, "", `{"_meta":{"p":1},"name":"x","arguments":{"_meta":1}}`, nil},
		{"token-level", `{"a":1}`, 7, "info", `{"_meta":{"p":1,"progressToken":7,"io.modelcontextprotocol/logLevel":"info"},"a":1}`, nil},
		{"merge", `{"a":"_meta","_meta":{"mine":true},"b":2}`, 3, "", `{"a":"_meta","_meta":{"p":1,"progressToken":3,"mine":true},"b":2}`, nil},
		{"merge-empty", `{"_meta":{}}`, 0, "", `{"_meta":{"p":1}}`, nil},
		{"escaped-string", `{"s":"a\"_meta\\","_meta":{"x":[1,{"y":"}"}]}}`, 0, "", `{"s":"a\"_meta\\","_meta":{"p":1,"x":[1,{"y":"}"}]}}`, nil},
		{"array", `[1]`, 0, "", "", errParamsNotObject},
		{"meta-not-object", `{"_meta":3}`, 0, "", "", errMetaNotObject},
		{"malformed", `{"_meta":`, 0, "", "", errMalformedJSON},
		{"malformed-key", `{"a" 1, "_meta":{}}`, 0, "", "", errMalformedJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := spliceMeta(nil, []byte(tt.params), prefix, tt.token, tt.level)
			if !errors.Is(err, tt.err) {
				t.Fatalf("spliceMeta(%s) error = %v, want %v", tt.params, err, tt.err)
			}
			if err != nil {
				return
			}
			if string(got) != tt.want {
				t.Errorf("spliceMeta(%s) = %s, want %s", tt.params, got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("spliceMeta(%s) = %s is not valid JSON", tt.params, got)
			}
		})
	}
}

func TestResultType(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{`{}`, "complete", false}, // absent reads as complete (protocol.ResultTypeOf)
		{`{"content":[{"resultType":"x"}]}`, "complete", false},
		{`{"resultType":"complete"}`, "complete", false},
		{`{"a":1,"resultType":"input_required"}`, "input_required", false},
		{`{"resultType":"weird"}`, "weird", false},
		{`{"resultType":3}`, "", true},
		{`{"resultType":null}`, "", true},
		{`{"resultType":""}`, "", true},
		{`[]`, "", true},
	}
	for _, tt := range tests {
		got, err := resultType([]byte(tt.in))
		if got != tt.want || (err != nil) != tt.bad {
			t.Errorf("resultType(%s) = %q, %v; want %q, bad %v", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

// TestModernRequestMeta: every modern request carries _meta with the
// negotiated version, capabilities and client info, plus progressToken and
// logLevel when asked; the params are otherwise untouched.
func TestModernRequestMeta(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(modernServer)
		h := handler.Funcs{Elicit: acceptAll}
		s := connected(t, tr, Config{Handler: detected(h)})
		var progress []float64
		res, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "add", "arguments": map[string]int{"a": 1}},
			&CallOptions{LogLevel: protocol.LevelInfo, Progress: func(p protocol.ProgressParams) { progress = append(progress, p.Progress) }})
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Echo struct {
				Name      string                     `json:"name"`
				Arguments map[string]int             `json:"arguments"`
				Meta      map[string]json.RawMessage `json:"_meta"`
			} `json:"echo"`
		}
		if err := json.Unmarshal(res, &got); err != nil {
			t.Fatalf("decoding %s: %v", res, err)
		}
		m := got.Echo.Meta
		if got.Echo.Name != "add" || got.Echo.Arguments["a"] != 1 {
			t.Errorf("params = %s", res)
		}
		want := map[string]string{
			protocol.MetaProtocolVersion:    `"2026-07-28"`,
			protocol.MetaClientCapabilities: `{"elicitation":{"form":{}}}`,
			protocol.MetaClientInfo:         `{"name":"conduit","version":"` + Version + `"}`,
			protocol.MetaLogLevel:           `"info"`,
		}
		for k, v := range want {
			if string(m[k]) != v {
				t.Errorf("_meta[%s] = %s, want %s", k, m[k], v)
			}
		}
		if len(m[protocol.MetaProgressToken]) == 0 {
			t.Errorf("no progressToken in %s", res)
		}
	})
}

func TestModernResultTypes(t *testing.T) {
	results := map[string]string{
		"missing":  `{"tools":[]}`,
		"complete": `{"resultType":"complete","tools":[]}`,
		"unknown":  `{"resultType":"bogus"}`,
		"task":     `{"resultType":"task","taskId":"t1"}`,
		"input":    `{"resultType":"input_required","requestState":"s"}`,
	}
	tests := []struct {
		name, result, method string
		opts                 *CallOptions
		wantErr              error
	}{
		{"missing-is-complete", "missing", "tools/list", nil, nil},
		{"complete", "complete", "tools/list", nil, nil},
		{"unknown", "unknown", "tools/list", nil, ErrInvalidResponse},
		{"task-not-accepted", "task", "tools/call", nil, ErrInvalidResponse},
		{"task-accepted", "task", "tools/call", &CallOptions{AcceptTask: true}, nil},
		{"task-wrong-method", "task", "prompts/get", &CallOptions{AcceptTask: true}, ErrInvalidResponse},
		{"input-not-allowed", "input", "tools/list", nil, ErrInvalidResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
					if r.Method == protocol.MethodDiscover {
						modernServer(p, r)
						return
					}
					p.reply(r, json.RawMessage(results[tt.result]))
				}))
				s := connected(t, tr, Config{})
				res, err := s.Call(t.Context(), tt.method, map[string]string{"name": "x"}, tt.opts)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Call error = %v, want %v", err, tt.wantErr)
				}
				if err == nil && string(res) != results[tt.result] {
					t.Errorf("result = %s, want %s", res, results[tt.result])
				}
				if err != nil {
					if _, ok := errors.AsType[*ProtocolError](err); !ok {
						t.Errorf("error %T is not a *ProtocolError", err)
					}
				}
			})
		})
	}
}

// TestTasksGetAcceptsTaskResultType: tasks/get results may say
// resultType "complete" or "task" (OPEN-QUESTIONS 38); other methods
// still reject "task" unless allowed.
func TestTasksGetAcceptsTaskResultType(t *testing.T) {
	for _, rt := range []string{"complete", "task"} {
		t.Run(rt, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(reqHandler(func(p *peer, req *jsonrpc.Request) {
					switch req.Method {
					case protocol.MethodDiscover:
						p.reply(req, discoverResult)
					default:
						p.reply(req, map[string]any{"resultType": rt, "taskId": "t1", "status": "working"})
					}
				}))
				s := connected(t, tr, Config{})
				res, err := s.Call(t.Context(), protocol.MethodTasksGet, map[string]any{"taskId": "t1"}, nil)
				if err != nil {
					t.Fatalf("tasks/get: %v", err)
				}
				var got struct {
					TaskID string `json:"taskId"`
				}
				json.Unmarshal(res, &got)
				if got.TaskID != "t1" {
					t.Errorf("result = %s", res)
				}
				_, err = s.Call(t.Context(), protocol.MethodToolsList, nil, nil)
				if wantErr := rt == "task"; (err != nil) != wantErr {
					t.Errorf("tools/list with resultType %q: error = %v, want error %v", rt, err, wantErr)
				}
			})
		})
	}
}

func TestLegacyCallIsPlain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s := legacySession(t)
		res, err := s.Call(t.Context(), "tools/call", json.RawMessage(`{"name":"x"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(res) != `{"echo":{"name":"x"}}` {
			t.Errorf("result = %s (legacy requests carry no _meta)", res)
		}
	})
}

func TestServerErrorReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			switch r.Method {
			case protocol.MethodDiscover:
				modernServer(p, r)
			case "tools/call":
				p.replyErr(r, jsonrpc.CodeMissingRequiredClientCapability, "need", map[string]any{
					"requiredCapabilities": map[string]any{"sampling": map[string]any{}, "extensions": map[string]any{protocol.ExtensionTasks: map[string]any{}}}})
			default:
				p.replyErr(r, jsonrpc.CodeInvalidParams, "unknown tool", nil)
			}
		}))
		s := connected(t, tr, Config{})
		_, err := s.Call(t.Context(), "prompts/get", nil, nil)
		if !errors.Is(err, jsonrpc.ErrInvalidParams) {
			t.Errorf("Call error = %v, want -32602", err)
		}
		_, err = s.Call(t.Context(), "tools/call", nil, nil)
		mc, ok := errors.AsType[*MissingCapabilityError](err)
		if !ok || !errors.Is(err, jsonrpc.ErrMissingRequiredClientCapability) {
			t.Fatalf("Call error = %v, want *MissingCapabilityError", err)
		}
		if mc.Required.Sampling == nil || mc.Required.Extensions[protocol.ExtensionTasks] == nil {
			t.Errorf("Required = %+v", mc.Required)
		}
		if got := len(tr.peer(0).requests("tools/call")); got != 1 {
			t.Errorf("tools/call sent %d times, want 1 (no retry)", got)
		}
	})
}

// TestConcurrentCalls multiplexes many concurrent calls on one connection;
// every caller gets its own answer.
func TestConcurrentCalls(t *testing.T) {
	for _, mode := range []Mode{ModeAuto, ModeLegacy} {
		t.Run(mode.String(), func(t *testing.T) {
			tr := newScripted(func(p *peer, m jsonrpc.Message) {
				if mode == ModeLegacy {
					legacyServer(p, m)
				} else {
					modernServer(p, m)
				}
			})
			s := connected(t, tr, Config{Mode: mode})
			const n = 1000
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Go(func() {
					res, err := s.Call(t.Context(), "tools/call", map[string]int{"i": i}, nil)
					if err != nil {
						errs <- err
						return
					}
					var got struct {
						Echo struct {
							I int `json:"i"`
						} `json:"echo"`
					}
					if err := json.Unmarshal(res, &got); err != nil || got.Echo.I != i {
						errs <- fmt.Errorf("call %d got %s (%v)", i, res, err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			ids := map[jsonrpc.ID]bool{}
			for _, r := range tr.peer(0).requests("tools/call") {
				if ids[r.ID] {
					t.Fatalf("id %v reused", r.ID)
				}
				ids[r.ID] = true
			}
		})
	}
}

// TestCancelSendsNotification: a cancelled call returns ctx.Err() at once
// and the server gets notifications/cancelled for it; a late response is
// dropped.
func TestCancelSendsNotification(t *testing.T) {
	for _, mode := range []Mode{ModeAuto, ModeLegacy} {
		t.Run(mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var held *jsonrpc.Request
				tr := newScripted(func(p *peer, m jsonrpc.Message) {
					if r, ok := m.(*jsonrpc.Request); ok && r.Method == "tools/call" {
						held = r // never answered until cancelled
						return
					}
					if r, ok := m.(*jsonrpc.Request); ok && r.Method == protocol.NotificationCancelled && held != nil {
						p.reply(held, map[string]any{"late": true})
						return
					}
					if mode == ModeLegacy {
						legacyServer(p, m)
					} else {
						modernServer(p, m)
					}
				})
				s := connected(t, tr, Config{Mode: mode})
				ctx, cancel := context.WithCancel(t.Context())
				errc := make(chan error, 1)
				go func() {
					_, err := s.Call(ctx, "tools/call", nil, nil)
					errc <- err
				}()
				synctest.Wait()
				cancel()
				if err := <-errc; !errors.Is(err, context.Canceled) {
					t.Fatalf("Call error = %v, want context.Canceled", err)
				}
				synctest.Wait()
				var cancelled []json.RawMessage
				for _, m := range tr.peer(0).messages() {
					if r, ok := m.(*jsonrpc.Request); ok && r.Method == protocol.NotificationCancelled {
						cancelled = append(cancelled, r.Params)
					}
				}
				if len(cancelled) != 1 {
					t.Fatalf("notifications/cancelled sent %d times, want 1", len(cancelled))
				}
				var cp struct {
					RequestID jsonrpc.ID `json:"requestId"`
				}
				json.Unmarshal(cancelled[0], &cp)
				if cp.RequestID != held.ID {
					t.Errorf("cancelled requestId = %v, want %v", cp.RequestID, held.ID)
				}
				// The session still works after the late response was dropped.
				if _, err := s.Call(t.Context(), "tools/list", nil, nil); err != nil {
					t.Errorf("later Call: %v", err)
				}
			})
		})
	}
}

// TestCallCancelledContextNoRace: a call whose context is cancelled
// before it starts returns ctx.Err() while the loop may still be
// registering it; nothing the loop writes is read by the caller (run with
// -race). The era hint makes the error path consult the hint state.
func TestCallCancelledContextNoRace(t *testing.T) {
	for _, hint := range []negotiation.Era{negotiation.EraUnknown, negotiation.EraModern} {
		t.Run(hint.String(), func(t *testing.T) {
			tr := newScripted(modernServer)
			s := connected(t, tr, Config{EraHint: hint})
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			for range 200 {
				if _, err := s.Call(ctx, protocol.MethodToolsCall, map[string]any{"name": "x"}, nil); !errors.Is(err, context.Canceled) {
					t.Fatalf("Call error = %v, want context.Canceled", err)
				}
			}
			if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
				t.Errorf("later Call: %v", err)
			}
		})
	}
}

// TestTimeouts: the request timeout resets on progress; the absolute
// maximum does not; without progress the timeout fires.
func TestTimeouts(t *testing.T) {
	tests := []struct {
		name      string
		cfg       Config
		opts      *CallOptions
		progress  int // progress notifications, one every 600ms, then the answer
		wantErr   error
		wantAbs   bool
		wantCalls int // progress callbacks
	}{
		{name: "progress-resets", cfg: Config{IdleTimeout: time.Second}, progress: 5},
		{name: "callback-order", cfg: Config{IdleTimeout: time.Second}, progress: 3, opts: &CallOptions{Progress: func(protocol.ProgressParams) {}}, wantCalls: 3},
		{name: "no-progress-times-out", cfg: Config{IdleTimeout: time.Second}, progress: -1, wantErr: ErrRequestTimeout},
		{name: "call-idle-overrides", cfg: Config{IdleTimeout: time.Hour}, opts: &CallOptions{IdleTimeout: time.Second}, progress: -1, wantErr: ErrRequestTimeout},
		{name: "absolute-max", cfg: Config{IdleTimeout: time.Second, RequestTimeout: 2 * time.Second}, progress: 5, wantErr: ErrRequestTimeout, wantAbs: true},
		// The deadline is a deadline: progress does not extend it.
		{name: "deadline-despite-progress", cfg: Config{RequestTimeout: 2 * time.Second}, progress: 5,
			opts: &CallOptions{Progress: func(protocol.ProgressParams) {}}, wantCalls: 3, wantErr: ErrRequestTimeout, wantAbs: true},
		{name: "call-deadline-overrides", cfg: Config{RequestTimeout: time.Hour}, opts: &CallOptions{Timeout: 2 * time.Second, Progress: func(protocol.ProgressParams) {}}, progress: 5,
			wantCalls: 3, wantErr: ErrRequestTimeout, wantAbs: true},
		{name: "deadline-long-enough", cfg: Config{RequestTimeout: 5 * time.Second}, progress: 5, opts: &CallOptions{Progress: func(protocol.ProgressParams) {}}, wantCalls: 5},
		{name: "legacy-progress-resets", cfg: Config{Mode: ModeLegacy, IdleTimeout: time.Second}, progress: 3,
			opts: &CallOptions{Progress: func(protocol.ProgressParams) {}}, wantCalls: 3},
		{name: "legacy-deadline-despite-progress", cfg: Config{Mode: ModeLegacy, RequestTimeout: 2 * time.Second}, progress: 5,
			opts: &CallOptions{Progress: func(protocol.ProgressParams) {}}, wantCalls: 3, wantErr: ErrRequestTimeout, wantAbs: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(toolCallServer(t, tt.cfg.Mode, func(p *peer, r *jsonrpc.Request, tok json.RawMessage) {
					p.goFn(func() {
						if tt.progress < 0 {
							return
						}
						for i := range tt.progress {
							time.Sleep(600 * time.Millisecond)
							p.notify(protocol.NotificationProgress, map[string]any{"progressToken": tok, "progress": i + 1})
						}
						time.Sleep(600 * time.Millisecond)
						p.reply(r, map[string]any{"resultType": "complete"})
					})
				}))
				s := connected(t, tr, tt.cfg)
				var mu sync.Mutex
				var got []float64
				opts := tt.opts
				if opts != nil && opts.Progress != nil {
					opts.Progress = func(p protocol.ProgressParams) {
						mu.Lock()
						got = append(got, p.Progress)
						mu.Unlock()
					}
				}
				_, err := s.Call(t.Context(), "tools/call", nil, opts)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Call error = %v, want %v", err, tt.wantErr)
				}
				if te, ok := errors.AsType[*RequestTimeoutError](err); ok && te.Absolute != tt.wantAbs {
					t.Errorf("Absolute = %v, want %v", te.Absolute, tt.wantAbs)
				}
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				if len(got) != tt.wantCalls {
					t.Errorf("progress callbacks = %v, want %d", got, tt.wantCalls)
				}
				for i, v := range got {
					if v != float64(i+1) {
						t.Errorf("progress out of order: %v", got)
						break
					}
				}
				s.Close()
			})
		})
	}
}

// TestLateProgressDropped: progress for a request of ours that has already
// been answered is dropped, not handed to OnNotification as an unknown
// notification, whether the response took the reader's direct path (a
// plain timed call) or the loop's (a call with a Progress callback). The
// notification sent after it proves the loop handled it.
func TestLateProgressDropped(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		opts *CallOptions
	}{
		{name: "direct", cfg: Config{IdleTimeout: time.Minute}},
		{name: "through-loop", opts: &CallOptions{Progress: func(protocol.ProgressParams) {}}},
		{name: "legacy-direct", cfg: Config{Mode: ModeLegacy, IdleTimeout: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(toolCallServer(t, tt.cfg.Mode, func(p *peer, r *jsonrpc.Request, tok json.RawMessage) {
					p.reply(r, map[string]any{"resultType": "complete"})
					p.notify(protocol.NotificationProgress, map[string]any{"progressToken": json.RawMessage(tok), "progress": 1})
					p.notify(protocol.NotificationToolsListChanged, nil)
				}))
				var mu sync.Mutex
				var got []string
				cfg := tt.cfg
				cfg.OnNotification = func(ctx context.Context, n *jsonrpc.Request) {
					mu.Lock()
					got = append(got, n.Method)
					mu.Unlock()
				}
				s := connected(t, tr, cfg)
				defer s.Close()
				if _, err := s.Call(t.Context(), "tools/call", nil, tt.opts); err != nil {
					t.Fatalf("Call: %v", err)
				}
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				checkDiff(t, "notifications delivered", []string{protocol.NotificationToolsListChanged}, got)
			})
		})
	}
}

// progressServer sends n progress notifications for every tools/call
// that carries a progress token, then the result.
func progressServer(n int, base func(p *peer, m jsonrpc.Message), modern bool) func(p *peer, m jsonrpc.Message) {
	return func(p *peer, m jsonrpc.Message) {
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.Method != protocol.MethodToolsCall {
			base(p, m)
			return
		}
		var pm struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		json.Unmarshal(req.Params, &pm)
		tok := pm.Meta[protocol.MetaProgressToken]
		for i := range n {
			p.notify(protocol.NotificationProgress, map[string]any{"progressToken": tok, "progress": i + 1, "total": n})
		}
		p.notify(protocol.NotificationMessage, map[string]any{"level": "info", "data": "done"})
		p.reply(req, echoResult(nil, modern))
	}
}

// TestProgressDeliveredBeforeReturn: every progress notification (and log
// message) the server sent before the response has been delivered when
// Call returns, in both eras, even with slow callbacks.
func TestProgressDeliveredBeforeReturn(t *testing.T) {
	const n = 50
	for _, era := range []negotiation.Era{negotiation.EraModern, negotiation.EraLegacy} {
		t.Run(era.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base, mode := modernServer, ModeAuto
				if era == negotiation.EraLegacy {
					base, mode = legacyServer, ModeLegacy
				}
				var logs atomic.Int32
				h := handler.LogListenerFunc(func(ctx context.Context, p *protocol.LoggingMessageParams) {
					time.Sleep(time.Millisecond)
					logs.Add(1)
				})
				tr := newScripted(progressServer(n, base, era == negotiation.EraModern))
				s := connected(t, tr, Config{Mode: mode, Handler: detected(h)})
				var count atomic.Int32
				opts := &CallOptions{Progress: func(protocol.ProgressParams) {
					time.Sleep(time.Millisecond) // slow user code
					count.Add(1)
				}}
				for i := range 3 {
					count.Store(0)
					logs.Store(0)
					if _, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "x"}, opts); err != nil {
						t.Fatal(err)
					}
					if got := count.Load(); got != n {
						t.Errorf("call %d: %d progress callbacks ran before Call returned, want %d", i, got, n)
					}
					if got := logs.Load(); got != 1 {
						t.Errorf("call %d: %d log messages delivered before Call returned, want 1", i, got)
					}
				}
			})
		})
	}
}

// TestCloseRetiresPending: calls in flight get ErrClosed; later calls too.
func TestCloseRetiresPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method == protocol.MethodDiscover {
				modernServer(p, r)
			}
		}))
		s := connected(t, tr, Config{})
		errc := make(chan error, 3)
		for range 3 {
			go func() {
				_, err := s.Call(context.Background(), "tools/call", nil, nil)
				errc <- err
			}()
		}
		synctest.Wait()
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for range 3 {
			if err := <-errc; !errors.Is(err, ErrClosed) {
				t.Errorf("pending Call error = %v, want ErrClosed", err)
			}
		}
		if _, err := s.Call(t.Context(), "tools/list", nil, nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Call after Close = %v, want ErrClosed", err)
		}
		select {
		case <-s.Done():
		default:
			t.Error("Done not closed after Close")
		}
		if s.State() != StateClosed || !errors.Is(s.Err(), ErrClosed) {
			t.Errorf("State, Err = %v, %v", s.State(), s.Err())
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// TestDirectCallsAcrossReconnect: many concurrent plain calls (registered
// directly, resolved by the reader) while the connection dies under them
// all complete: the ones in flight on the lost connection are replayed on
// the new one, and none registers on the dead connection after the loss
// was seen.
func TestDirectCallsAcrossReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var killed sync.Once
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method != "tools/call" {
				modernServer(p, r)
				return
			}
			if !r.ID.IsValid() {
				return
			}
			killed.Do(p.kill) // the first call kills the first connection
		}), reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method != "tools/call" {
				modernServer(p, r)
				return
			}
			p.reply(r, map[string]any{"resultType": "complete"})
		}))
		s := connected(t, tr, Config{Replay: ReplayAll})
		defer s.Close()
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		for range 50 {
			wg.Go(func() {
				if _, err := s.Call(t.Context(), "tools/call", nil, nil); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("Call: %v", err)
		}
		if n := tr.connects(); n != 2 {
			t.Errorf("connects = %d, want 2", n)
		}
	})
}

func TestNotificationsInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method == "tools/call" {
				for i := range 20 {
					p.notify("notifications/message", map[string]any{"level": "info", "data": i})
				}
			}
			legacyServer(p, r)
		}))
		var got record[string]
		s := connected(t, tr, Config{Mode: ModeLegacy, OnNotification: func(ctx context.Context, n *jsonrpc.Request) {
			got.add(string(n.Params))
		}})
		if _, err := s.Call(t.Context(), "tools/call", nil, nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		var want []string
		for i := range 20 {
			want = append(want, fmt.Sprintf(`{"data":%d,"level":"info"}`, i))
		}
		checkDiff(t, "notifications", want, got.all())
	})
}

// TestNotificationOverflowDropsOldest: a stuck OnNotification never blocks
// responses; the queue keeps the newest MaxQueuedNotifications.
func TestNotificationOverflowDropsOldest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const extra = 10
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method == "tools/call" {
				for i := range MaxQueuedNotifications + extra + 1 {
					p.notify("notifications/message", map[string]any{"data": i})
				}
			}
			legacyServer(p, r)
		}))
		release := make(chan struct{})
		var mu sync.Mutex
		var got []int
		dropped := 0
		s := connected(t, tr, Config{Mode: ModeLegacy, OnEvent: func(ev Event) {
			if ev.Kind == EventDropped {
				mu.Lock()
				dropped += ev.Count
				mu.Unlock()
			}
		}, OnNotification: func(ctx context.Context, n *jsonrpc.Request) {
			var p struct{ Data int }
			json.Unmarshal(n.Params, &p)
			if p.Data == 0 {
				<-release // the first notification blocks the dispatcher
			}
			mu.Lock()
			got = append(got, p.Data)
			mu.Unlock()
		}})
		if _, err := s.Call(t.Context(), "tools/call", nil, nil); err != nil {
			t.Fatalf("Call with a stuck notification handler: %v", err)
		}
		synctest.Wait()
		close(release)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(got) != MaxQueuedNotifications+1 || got[0] != 0 || got[1] != extra+1 || got[len(got)-1] != MaxQueuedNotifications+extra {
			t.Errorf("delivered %d notifications, first %v, last %v", len(got), got[:2], got[len(got)-1])
		}
		if dropped != extra {
			t.Errorf("EventDropped counted %d, want %d: every drop is reported", dropped, extra)
		}
	})
}

// listeners records, in order, the listener calls the handler gets.
type listeners struct{ record[string] }

func (l *listeners) OnLog(_ context.Context, p *protocol.LoggingMessageParams) {
	l.add("log " + string(p.Level))
}
func (l *listeners) OnToolsChanged(context.Context)     { l.add("tools") }
func (l *listeners) OnPromptsChanged(context.Context)   { l.add("prompts") }
func (l *listeners) OnResourcesChanged(context.Context) { l.add("resources") }
func (l *listeners) OnResourceUpdated(_ context.Context, uri string) {
	l.add("updated " + uri)
}

// TestHandlerListeners: without OnNotification, notifications reach the
// handler's listener interfaces, in order.
func TestHandlerListeners(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method == "tools/call" {
				p.notify(protocol.NotificationMessage, map[string]any{"level": "warning", "data": "x"})
				p.notify(protocol.NotificationToolsListChanged, nil)
				p.notify(protocol.NotificationPromptsListChanged, nil)
				p.notify(protocol.NotificationResourcesListChanged, nil)
				p.notify(protocol.NotificationResourcesUpdated, map[string]any{"uri": "file:///a"})
				p.notify("notifications/unknown", nil)
			}
			legacyServer(p, r)
		}))
		l := &listeners{}
		s := connected(t, tr, Config{Mode: ModeLegacy, Handler: detected(l)})
		if _, err := s.Call(t.Context(), "tools/call", nil, nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		want := []string{"log warning", "tools", "prompts", "resources", "updated file:///a"}
		checkDiff(t, "listener calls", want, l.all())
		if caps := s.ClientCapabilities(); caps.Sampling != nil || caps.Roots != nil || caps.Elicitation != nil {
			t.Errorf("ClientCapabilities() = %+v, want none for listeners only", caps)
		}
	})
}

func TestNotify(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, s := legacySession(t)
		if err := s.Notify(t.Context(), "notifications/roots/list_changed", nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		ms := tr.peer(0).methods()
		if ms[len(ms)-1] != "notifications/roots/list_changed" {
			t.Errorf("methods = %v", ms)
		}
	})
}

// TestCloseTimesOutOnStuckHandler: Close waits at most CloseTimeout for a

// handler that ignores its cancelled context, returns ErrCloseTimeout,

// and the session's goroutines are still joined once the handler ends

// (the bubble would not end otherwise).

func TestCloseTimesOutOnStuckHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		h := handler.Funcs{CreateMessage: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			close(started)
			<-release // ignores ctx
			return nil, ctx.Err()
		}}
		tr := newScripted(legacyServer)
		s, err := Connect(t.Context(), tr, Config{Mode: ModeLegacy, Handler: detected(h)})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "sampling/createMessage", map[string]any{"messages": []any{}, "maxTokens": 1})
		tr.peer(0).send(req)
		<-started
		start := time.Now()
		err = s.Close()
		if !errors.Is(err, ErrCloseTimeout) {
			t.Errorf("Close = %v, want ErrCloseTimeout", err)
		}
		if d := time.Since(start); d != CloseTimeout {
			t.Errorf("Close took %v, want CloseTimeout (%v)", d, CloseTimeout)
		}
		close(release)
		synctest.Wait()
		select {
		case <-s.wait(sigJoined):
		default:
			t.Error("the session's goroutines were not joined after the handler ended")
		}
		tr.wait()
	})
}

// TestCloseJoinsAtOnce: when every goroutine ends promptly, Close returns

// with them joined and no timeout error, taking no time on the clock.

func TestCloseJoinsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(legacyServer)
		s, err := Connect(t.Context(), tr, Config{Mode: ModeLegacy})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := s.Close(); err != nil {
			t.Errorf("Close = %v, want nil", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Close took %v of the fake clock, want 0", d)
		}
		select {
		case <-s.wait(sigJoined):
		default:
			t.Error("Close returned before the session's goroutines were joined")
		}
		tr.wait()
	})
}
