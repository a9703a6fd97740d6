package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// testHandler implements sampling, form elicitation and roots.
type testHandler struct {
	content map[string]any // the form answer
}

func (h *testHandler) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Content: json.RawMessage(`{"type":"text","text":"Paris"}`), Model: "test-model"}, nil
}

func (h *testHandler) Elicit(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: h.content}, nil
}

func (h *testHandler) ListRoots(ctx context.Context) ([]protocol.Root, error) {
	return []protocol.Root{{URI: "file:///work", Name: "work"}}, nil
}

func TestHandler(t *testing.T) {
	matrix(t, func(t *testing.T, tr string, p client.Protocol) {
		h := &testHandler{content: map[string]any{"name": "Ada"}}
		f := connect(t, tr, testserver.Options{}, client.WithProtocol(p), client.WithHandler(h))
		ctx := testCtx(t)
		caps := f.c.Negotiated().ClientCapabilities
		if caps.Sampling == nil || caps.Elicitation == nil || caps.Roots == nil {
			t.Errorf("ClientCapabilities() = %+v, want sampling, elicitation and roots", caps)
		}
		tests := []struct{ tool, want string }{
			{"sample", "test-model said: Paris"},
			{"ask_user", "Hello, Ada!"},
			{"roots", "file:///work"},
		}
		for _, tt := range tests {
			res, err := f.c.CallTool(ctx, tt.tool, map[string]any{})
			if err != nil {
				t.Fatalf("CallTool(%s) = %v", tt.tool, err)
			}
			if got := res.Text(); got != tt.want {
				t.Errorf("CallTool(%s) text = %q, want %q", tt.tool, got, tt.want)
			}
		}
	})
}

func TestHandlerNone(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern))
	if diff := cmp.Diff(protocol.ClientCapabilities{}, f.c.Negotiated().ClientCapabilities); diff != "" {
		t.Errorf("ClientCapabilities without a handler (-want +got):\n%s", diff)
	}
}

// TestElicitationValidated: an answer that breaks the requested schema
// never reaches the server; the call fails with a *ValidationError (in
// the modern era through MRTR, in the legacy era the server sees an
// error response and the tool call fails).
func TestElicitationValidated(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			h := &testHandler{content: map[string]any{"name": 42}}
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(era.p), client.WithHandler(h))
			res, err := f.c.CallTool(testCtx(t), "ask_user", map[string]any{})
			var ve *handler.ValidationError
			switch {
			case errors.As(err, &ve):
				if !strings.Contains(ve.Error(), "name") {
					t.Errorf("ValidationError = %v, want it to name the field", ve)
				}
			case era.p == client.Legacy && errors.As(err, new(*jsonrpc.Error)):
				// Legacy: the client answered elicitation/create with an
				// error, which the server passed on.
			default:
				t.Errorf("CallTool(ask_user) with an invalid answer = %+v, %v; want a validation failure", res, err)
			}
			for _, r := range f.srv.Received() {
				if strings.Contains(string(r.Raw), `"name":42`) {
					t.Errorf("the invalid answer reached the server: %s", r.Raw)
				}
			}
		})
	}
}

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
		name  string
		p     client.Protocol
		opts  []client.Option
		call  []client.CallOption
		tasks bool // the server ran a task
	}{
		// Modern: the server decides once the extension is advertised.
		{"modern with extension", client.Modern, []client.Option{client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true})}, nil, true},
		{"modern without extension", client.Modern, nil, []client.CallOption{client.WithTaskAugmentation(true)}, false},
		// Legacy: augmentation only on request.
		{"legacy without WithTaskAugmentation", client.Legacy, nil, nil, false},
		{"legacy with WithTaskAugmentation", client.Legacy, nil, []client.CallOption{client.WithTaskAugmentation(true)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := connect(t, tPipe, testserver.Options{}, append(tt.opts, client.WithProtocol(tt.p))...)
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

// TestHandlerListeners: the handler's change listeners hear list changes
// in both eras (modern through an automatic listen stream).
func TestHandlerListeners(t *testing.T) {
	for _, era := range allEras {
		for _, tr := range []string{tPipe, tHTTP} {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				changed := make(chan string, 8)
				h := struct {
					handler.ToolsChangedListenerFunc
					handler.PromptsChangedListenerFunc
				}{
					func(context.Context) { changed <- "tools" },
					func(context.Context) { changed <- "prompts" },
				}
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p), client.WithHandler(h))
				ctx := testCtx(t)
				for _, want := range []string{"tools", "prompts"} {
					if want == "tools" {
						f.srv.NotifyToolsChanged()
					} else {
						f.srv.NotifyPromptsChanged()
					}
					select {
					case got := <-changed:
						if got != want {
							t.Errorf("listener = %q, want %q", got, want)
						}
					case <-ctx.Done():
						t.Fatalf("listener for %s not called", want)
					}
				}
			})
		}
	}
}

func TestNotifyRootsChanged(t *testing.T) {
	tests := []struct {
		name string
		p    client.Protocol
		opts []client.Option
		sent bool
	}{
		{"legacy advertised", client.Legacy, []client.Option{client.WithHandler(&testHandler{}), client.WithCapabilityOptions(client.CapabilityOptions{RootsListChanged: true})}, true},
		{"legacy not advertised", client.Legacy, []client.Option{client.WithHandler(&testHandler{})}, false},
		{"modern", client.Modern, []client.Option{client.WithHandler(&testHandler{}), client.WithCapabilityOptions(client.CapabilityOptions{RootsListChanged: true})}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := connect(t, tPipe, testserver.Options{}, append(tt.opts, client.WithProtocol(tt.p))...)
			ctx := testCtx(t)
			if err := f.c.NotifyRootsChanged(ctx); err != nil {
				t.Fatalf("NotifyRootsChanged = %v", err)
			}
			// A request after the notification orders it on the stream.
			if err := f.c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			if got := count(f.srv, protocol.NotificationRootsListChanged) > 0; got != tt.sent {
				t.Errorf("notification sent = %v, want %v", got, tt.sent)
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
