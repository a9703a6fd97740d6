package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
)

func TestTasks(t *testing.T) {
	for _, era := range allEras {
		for _, tr := range allTransports {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				t.Parallel()
				h := &testHandler{content: map[string]any{"ok": true}}
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p), client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true}), client.WithHandler(h))
				ctx := testCtx(t)

				res, err := f.c.CallTool(ctx, "task", map[string]any{"steps": 2}, client.WithTaskAugmentation(true))
				if err != nil {
					t.Fatalf("CallTool(task, WithTaskAugmentation) = %v", err)
				}
				if !strings.Contains(res.Text(), "finished") {
					t.Errorf("task result = %q", res.Text())
				}

				task, direct, err := f.c.StartTool(ctx, "task", map[string]any{"steps": 1})
				if err != nil || task == nil || direct != nil {
					t.Fatalf("StartTool = %+v, %+v, %v; want a task", task, direct, err)
				}
				if got, want := task.Extension, era.p == client.Modern; got != want {
					t.Errorf("Task.Extension = %v, want %v", got, want)
				}
				st, err := f.c.TaskStatus(ctx, task.ID)
				if err != nil || st.ID != task.ID {
					t.Errorf("TaskStatus = %+v, %v", st, err)
				}
				if _, err := f.c.AwaitTask(ctx, task); err != nil {
					t.Errorf("AwaitTask = %v", err)
				}

				if era.p == client.Modern {
					// A task that asks for input: answered via the handler.
					res, err := f.c.CallTool(ctx, "task", map[string]any{"steps": 1, "input": true}, client.WithTaskAugmentation(true))
					if err != nil || res.Failed() {
						t.Errorf("input task = %+v, %v", res, err)
					}
				}

				task, _, err = f.c.StartTool(ctx, "task", map[string]any{"steps": 100})
				if err != nil || task == nil {
					t.Fatalf("StartTool = %v", err)
				}
				if err := f.c.CancelTask(ctx, task.ID); err != nil {
					t.Fatalf("CancelTask = %v", err)
				}
				_, err = f.c.AwaitTask(ctx, task)
				if ce, ok := errors.AsType[*client.Error](err); !ok || ce.Kind != client.KindCanceled ||
					errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), task.ID) || !strings.Contains(err.Error(), "cancelled") {
					t.Errorf("AwaitTask(cancelled) = %v, want an *Error of kind canceled naming the task, not matching context.Canceled", err)
				}

				var n int
				for _, err := range f.c.Tasks(ctx) {
					if era.p == client.Modern {
						if !errors.Is(err, client.ErrNotSupported) {
							t.Errorf("Tasks() modern error = %v, want ErrNotSupported", err)
						}
						break
					}
					if err != nil {
						t.Fatalf("Tasks() = %v", err)
					}
					n++
				}
				if era.p == client.Legacy && n != 3 {
					t.Errorf("Tasks() listed %d tasks, want 3", n)
				}
			})
		}
	}
}

func TestTaskOptIn(t *testing.T) {
	tests := []struct {
		pipeCase
		call  []client.CallOption
		tasks bool // the server ran a task
	}{
		// Modern: the server decides once the extension is advertised.
		{pipeCase{"modern with extension", client.Modern, []client.Option{client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true})}}, nil, true},
		{pipeCase{"modern without extension", client.Modern, nil}, []client.CallOption{client.WithTaskAugmentation(true)}, false},
		// Legacy: augmentation only on request.
		{pipeCase{"legacy without WithTaskAugmentation", client.Legacy, nil}, nil, false},
		{pipeCase{"legacy with WithTaskAugmentation", client.Legacy, nil}, []client.CallOption{client.WithTaskAugmentation(true)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.connect(t)
			res, err := f.c.CallTool(testCtx(t), "task", map[string]any{"steps": 1}, tt.call...)
			if err != nil {
				t.Fatalf("CallTool(task) = %v", err)
			}
			if got := count(f.srv, "tasks/get") > 0; got != tt.tasks {
				t.Errorf("task polled = %v, want %v (result %q)", got, tt.tasks, res.Text())
			}
		})
	}
}

// TestAwaitTaskExpired: a task still running after createdAt + ttl ends
// the wait with an *Error of kind timeout naming the task instead of
// polling on; no deadline of the caller's elapsed, so it does not match
// context.DeadlineExceeded.
func TestAwaitTaskExpired(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			// The client's clock runs two minutes ahead: the test server's
			// tasks live one minute.
			late := func() time.Time { return time.Now().Add(2 * time.Minute) }
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(era.p), client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true}), client.WithClock(late))
			ctx := testCtx(t)
			task, _, err := f.c.StartTool(ctx, "task", map[string]any{"steps": 1000})
			if err != nil || task == nil {
				t.Fatalf("StartTool = %v, %v", task, err)
			}
			if task.TTL <= 0 || task.CreatedAt == "" {
				t.Fatalf("task without ttl or createdAt: %+v", task)
			}
			_, err = f.c.AwaitTask(ctx, task)
			ce, ok := errors.AsType[*client.Error](err)
			if !ok || !strings.Contains(err.Error(), task.ID) || !strings.Contains(err.Error(), "expired") ||
				errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("AwaitTask = %v, want an *Error saying that task %s expired, not matching context.DeadlineExceeded", err, task.ID)
			}
			if ce.Kind != client.KindTimeout || ce.Op != "tools/call" {
				t.Errorf("Op %q Kind %v, want tools/call timeout", ce.Op, ce.Kind)
			}
			_ = f.c.CancelTask(ctx, task.ID)
		})
	}
}

var v20251125 = client.Pin(protocol.Version20251125)

// TestTaskReceiverCapability: the client tasks capability is declared
// only with TaskRequests, only in the legacy era, and only for the
// requests the handler serves.
func TestTaskReceiverCapability(t *testing.T) {
	sampler := handler.Funcs{CreateMessage: func(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
		return nil, nil
	}}
	listener := handler.Funcs{OnToolsChanged: func(context.Context) {}}
	tests := []struct {
		name           string
		p              client.Protocol
		h              any
		on             bool
		sample, elicit bool
	}{
		{"legacy sampler", v20251125, sampler, true, true, false},
		{"legacy both", v20251125, &testHandler{}, true, true, true},
		{"not asked", v20251125, &testHandler{}, false, false, false},
		{"no request handler", v20251125, listener, true, false, false},
		{"modern", client.Modern, &testHandler{}, true, false, false},
	}
	for _, tt := range tests {
		f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(tt.p), client.WithHandler(tt.h),
			client.WithCapabilityOptions(client.CapabilityOptions{TaskRequests: tt.on}))
		tc := f.c.Negotiated().ClientCapabilities.Tasks
		if !tt.sample && !tt.elicit {
			if tc != nil {
				t.Errorf("%s: tasks = %+v, want none", tt.name, tc)
			}
			continue
		}
		if tc == nil || tc.List == nil || tc.Cancel == nil || tc.Requests == nil ||
			(tc.Requests.Sampling != nil) != tt.sample || (tc.Requests.Elicitation != nil) != tt.elicit {
			b, _ := json.Marshal(tc)
			t.Errorf("%s: tasks = %s", tt.name, b)
		}
	}
}

// TestTaskReceiver: a 2025-11-25 server runs sampling and elicitation as
// tasks on the client: it gets a working task at once, finds it in
// tasks/list, polls tasks/get and reads tasks/result (with the
// related-task _meta); tasks/cancel cancels the handler's context.
func TestTaskReceiver(t *testing.T) {
	for _, tr := range []string{tPipe, tStdio, tHTTP} {
		t.Run(tr, func(t *testing.T) {
			cancelled := make(chan struct{})
			h := &testHandler{content: map[string]any{"name": "Ada"}}
			var block atomic.Bool
			hf := handler.Funcs{
				CreateMessage: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
					if block.Load() {
						<-ctx.Done()
						close(cancelled)
						return nil, ctx.Err()
					}
					return h.CreateMessage(ctx, p)
				},
				Elicit: h.Elicit,
			}
			f := connect(t, tr, testserver.Options{}, client.WithProtocol(v20251125), client.WithHandler(hf),
				client.WithCapabilityOptions(client.CapabilityOptions{TaskRequests: true}))
			ctx := testCtx(t)
			for kind, want := range map[string]string{"sample": `"text":"Paris"`, "elicit": `"name":"Ada"`} {
				res, err := f.c.CallTool(ctx, "task_input", map[string]any{"kind": kind})
				if err != nil {
					t.Fatalf("%s: CallTool = %v", kind, err)
				}
				if txt := res.Text(); !strings.HasPrefix(txt, "completed ") || !strings.Contains(txt, want) || res.Failed() {
					t.Errorf("%s: result = %q (failed %v)", kind, txt, res.Failed())
				}
			}
			block.Store(true)
			res, err := f.c.CallTool(ctx, "task_input", map[string]any{"cancel": true})
			if err != nil || res.Text() != "cancelled" {
				t.Fatalf("cancel: CallTool = %v, %v", res, err)
			}
			await(t, cancelled, "tasks/cancel did not cancel the handler's context")
			if f.srv == nil {
				return // stdio: the server is in the child
			}
			if n := count(f.srv, protocol.NotificationTasksStatus); n < 2 {
				t.Errorf("%d notifications/tasks/status from the client, want one per finished task", n)
			}
		})
	}
}

// TestTaskStatusListener: the server's notifications/tasks/status reach
// the listener as the task changes, not only when polled.
func TestTaskStatusListener(t *testing.T) {
	for _, tr := range []string{tPipe, tStdio, tHTTP} {
		t.Run(tr, func(t *testing.T) {
			got := make(chan protocol.Task, 16)
			h := handler.Funcs{OnTaskStatus: func(_ context.Context, task *protocol.Task) { got <- *task }}
			f := connect(t, tr, testserver.Options{}, client.WithProtocol(v20251125), client.WithHandler(h))
			ctx := testCtx(t)
			task, _, err := f.c.StartTool(ctx, "task", map[string]any{"steps": 1}, client.WithTaskAugmentation(true))
			if err != nil || task == nil {
				t.Fatalf("StartTool = %v, %v", task, err)
			}
			if _, err := f.c.AwaitTask(ctx, task); err != nil {
				t.Fatal(err)
			}
			if st := await(t, got, "no notifications/tasks/status reached the listener"); st.TaskID != task.ID || st.Status != protocol.TaskCompleted {
				t.Errorf("listener got %+v, want %s completed", st, task.ID)
			}
		})
	}
}

// TestTaskInputLikeRounds: the input a task of the modern tasks extension
// asks for (input_required, found by polling) is served as a call's own
// MRTR rounds are: a failing handler ends the call with the same kind and
// the same message, and the request passes through the middleware.
func TestTaskInputLikeRounds(t *testing.T) {
	noAnswer := errors.New("no answer")
	h := handler.Funcs{Elicit: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		return nil, noAnswer
	}}
	for _, tr := range []string{tPipe, tStdio, tHTTP} {
		t.Run(tr, func(t *testing.T) {
			r := &recorder{}
			f := connect(t, tr, testserver.Options{}, client.WithProtocol(client.Modern), client.WithHandler(h), client.WithMiddleware(r.mw("m")),
				client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true}))
			ctx := testCtx(t)
			_, taskErr := f.c.CallTool(ctx, "task", map[string]any{"steps": 1, "input": true}, client.WithTaskAugmentation(true))
			_, roundErr := f.c.CallTool(ctx, "ask_rounds", map[string]any{"rounds": 1})
			for name, err := range map[string]error{"task": taskErr, "round": roundErr} {
				var ce *client.Error
				if !errors.As(err, &ce) || ce.Kind != client.KindHandler || !errors.Is(err, noAnswer) {
					t.Errorf("%s: error = %v, want an *Error of kind handler wrapping the handler's error", name, err)
				}
			}
			if taskErr != nil && roundErr != nil && taskErr.Error() != roundErr.Error() {
				t.Errorf("task input failure = %q\nround failure      = %q\nwant the same message", taskErr, roundErr)
			}
			if n := r.count("m", protocol.MethodElicitationCreate, received); n != 2 {
				t.Errorf("elicitation/create passed the middleware %d times, want 2 (the task's and the round's)", n)
			}
		})
	}
}

// TestTaskInputRoundsCapped: a task of the tasks extension that keeps
// asking for input is answered at most WithMaxInputRounds times (the
// handler is not asked again), then the call fails with a protocol error;
// one that asks within the cap completes.
func TestTaskInputRoundsCapped(t *testing.T) {
	for _, tr := range []string{tPipe, tHTTP} {
		for _, tt := range []struct{ max, rounds int }{{2, 3}, {3, 3}, {0, 11}} {
			t.Run(fmt.Sprintf("%s/max%d/rounds%d", tr, tt.max, tt.rounds), func(t *testing.T) {
				var asked atomic.Int32
				h := handler.Funcs{Elicit: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
					asked.Add(1)
					return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"ok": true}}, nil
				}}
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(client.Modern), client.WithHandler(h),
					client.WithMaxInputRounds(tt.max), client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true}))
				_, err := f.c.CallTool(testCtx(t), "task", map[string]any{"steps": 1, "inputRounds": tt.rounds}, client.WithTaskAugmentation(true))
				limit := tt.max
				if limit == 0 {
					limit = 10
				}
				if tt.rounds <= limit {
					if err != nil || int(asked.Load()) != tt.rounds {
						t.Errorf("err = %v, handler asked %d times; want success after %d", err, asked.Load(), tt.rounds)
					}
					return
				}
				if e, ok := errors.AsType[*client.Error](err); !ok || e.Kind != client.KindProtocol {
					t.Errorf("err = %v, want an *Error of kind protocol (too many input rounds)", err)
				}
				if got := int(asked.Load()); got != limit {
					t.Errorf("handler asked %d times, want %d", got, limit)
				}
			})
		}
	}
}
