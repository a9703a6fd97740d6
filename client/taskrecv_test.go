package client_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
)

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
			var blockMu sync.Mutex
			block := false
			hf := handler.Funcs{
				CreateMessage: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
					blockMu.Lock()
					b := block
					blockMu.Unlock()
					if b {
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
			blockMu.Lock()
			block = true
			blockMu.Unlock()
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
