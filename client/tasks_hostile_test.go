package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/protocol"
)

// extTaskServer is a modern Streamable HTTP server advertising the tasks
// extension whose tools/call creates the task "t1" and whose tasks/get
// answers with get(n) for the n-th tasks/get (counted from 1): the
// members of the DetailedTask after resultType. created, when given, is
// the result of tools/call instead.
func extTaskServer(t *testing.T, get func(n int) string, created ...string) *httptest.Server {
	t.Helper()
	var gets atomic.Int32
	return rpcResultServer(t, func(method string) string {
		switch method {
		case "server/discover":
			return `{"resultType":"complete","supportedVersions":["2026-07-28"],"ttlMs":0,"cacheScope":"private",` +
				`"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},` +
				`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"tasks","version":"1"}}}`
		case "tools/call":
			if len(created) > 0 {
				return created[0]
			}
			return `{"resultType":"task","taskId":"t1","status":"working","createdAt":"2026-01-01T00:00:00Z",` +
				`"lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":null,"pollIntervalMs":10}`
		case "tasks/get":
			return `{"resultType":"complete",` + get(int(gets.Add(1))) + `}`
		case "tasks/update", "tasks/cancel":
			return `{"resultType":"complete"}`
		}
		return ""
	})
}

// TestTaskInputRequestsBounded: a task of the tasks extension whose
// input_required status lists more input requests than an MRTR round may
// carry (engine.MaxInputRequests) fails the wait with a protocol error
// before the handler is asked anything, as the same list in a call's own
// input_required result does: the server cannot start a thousand handler
// calls (a person asked a thousand times, a model sampled a thousand
// times) at once.
func TestTaskInputRequestsBounded(t *testing.T) {
	const n = 1000
	var reqs strings.Builder
	for i := range n {
		if i > 0 {
			reqs.WriteByte(',')
		}
		fmt.Fprintf(&reqs, `"k%d":{"method":"roots/list"}`, i)
	}
	state := `"taskId":"t1","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":null,"pollIntervalMs":10`
	srv := extTaskServer(t, func(k int) string {
		if k == 1 {
			return state + `,"status":"input_required","inputRequests":{` + reqs.String() + `}`
		}
		return state + `,"status":"completed","result":{"content":[{"type":"text","text":"done"}]}`
	})
	var asked atomic.Int32
	h := handler.Funcs{ListRoots: func(ctx context.Context) ([]protocol.Root, error) {
		asked.Add(1)
		return nil, nil
	}}
	ctx := testCtx(t)
	c, err := client.Dial(ctx, srv.URL, client.WithProtocol(client.Modern), client.WithHandler(h),
		client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.CallTool(ctx, "t", nil)
	if e, ok := errors.AsType[*client.Error](err); !ok || e.Kind != client.KindProtocol {
		t.Errorf("CallTool = %v, want an *Error of kind protocol (too many input requests)", err)
	}
	if got := asked.Load(); got != 0 {
		t.Errorf("the handler was asked %d times, want 0 (more than %d input requests)", got, engine.MaxInputRequests)
	}
}

// TestTaskGetOtherTask: a tasks/get answer that names another task than
// the one asked for, or none, is a protocol error: AwaitTask does not
// adopt the other task's id and return its result as the awaited one's,
// and TaskStatus does not report it as the task asked for (both eras).
func TestTaskGetOtherTask(t *testing.T) {
	for _, tc := range []struct{ name, id string }{{"other", `"t2"`}, {"empty", `""`}, {"absent", ""}} {
		t.Run("modern/"+tc.name, func(t *testing.T) {
			get := `"createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":null,` +
				`"status":"completed","result":{"content":[{"type":"text","text":"another task's"}]}`
			if tc.id != "" {
				get = `"taskId":` + tc.id + `,` + get
			}
			srv := extTaskServer(t, func(int) string { return get })
			ctx := testCtx(t)
			c, err := client.Dial(ctx, srv.URL, client.WithProtocol(client.Modern),
				client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			checkOtherTask(t, c)
		})
		t.Run("legacy/"+tc.name, func(t *testing.T) {
			get := `"status":"completed","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null`
			if tc.id != "" {
				get = `"taskId":` + tc.id + `,` + get
			}
			srv := legacyTaskServer(t, `{"task":{"taskId":"t1","status":"working","createdAt":"2026-01-01T00:00:00Z","ttl":null,"pollInterval":10}}`,
				"tasks/get", `{`+get+`}`, "tasks/result", `{"content":[{"type":"text","text":"another task's"}]}`)
			ctx := testCtx(t)
			c, err := client.Dial(ctx, srv.URL, client.WithProtocol(client.Legacy))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			checkOtherTask(t, c)
		})
	}
}

// checkOtherTask starts the task t1 of tool "t" on c, whose server
// answers tasks/get with another task, and checks the errors.
func checkOtherTask(t *testing.T, c *client.Client) {
	t.Helper()
	ctx := testCtx(t)
	task, _, err := c.StartTool(ctx, "t", nil)
	if err != nil || task == nil || task.ID != "t1" {
		t.Fatalf("StartTool = %+v, %v; want task t1", task, err)
	}
	res, err := c.AwaitTask(ctx, task)
	if e, ok := errors.AsType[*client.Error](err); !ok || e.Kind != client.KindProtocol {
		t.Errorf("AwaitTask = %+v, %v; want an *Error of kind protocol", res, err)
	}
	if task.ID != "t1" {
		t.Errorf("after AwaitTask, task.ID = %q, want t1", task.ID)
	}
	st, err := c.TaskStatus(ctx, "t1")
	if e, ok := errors.AsType[*client.Error](err); !ok || e.Kind != client.KindProtocol {
		t.Errorf("TaskStatus(t1) = %+v, %v; want an *Error of kind protocol", st, err)
	}
}

// TestTaskCompletedWithNullResult: a task of the tasks extension that
// completes with a result of null has no result, as one without the
// member has: AwaitTask fails with a protocol error instead of returning
// an empty tool result, a tool that ran and said nothing.
func TestTaskCompletedWithNullResult(t *testing.T) {
	srv := extTaskServer(t, func(int) string {
		return `"taskId":"t1","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":null,"status":"completed","result":null`
	})
	ctx := testCtx(t)
	c, err := client.Dial(ctx, srv.URL, client.WithProtocol(client.Modern),
		client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "t", nil)
	if e, ok := errors.AsType[*client.Error](err); !ok || e.Kind != client.KindProtocol {
		t.Errorf("CallTool = %+v, %v; want an *Error of kind protocol (completed task without result)", res, err)
	}
}

// TestExtTaskCreatedWithoutID: a tools/call answered with a task of the
// tasks extension that has no taskId (or an empty one) fails the call
// with a protocol error, as a 2025-11-25 task without one does
// (TestLegacyTaskMalformed), instead of returning a task that AwaitTask
// would follow with tasks/get of "".
func TestExtTaskCreatedWithoutID(t *testing.T) {
	for name, created := range map[string]string{
		"absent": `{"resultType":"task","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":null}`,
		"empty":  `{"resultType":"task","taskId":"","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":null}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := extTaskServer(t, func(int) string {
				return `"taskId":"","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":null,` +
					`"status":"completed","result":{"content":[{"type":"text","text":"whose?"}]}`
			}, created)
			ctx := testCtx(t)
			c, err := client.Dial(ctx, srv.URL, client.WithProtocol(client.Modern),
				client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			task, res, err := c.StartTool(ctx, "t", nil)
			if e, ok := errors.AsType[*client.Error](err); !ok || e.Kind != client.KindProtocol {
				t.Errorf("StartTool = %+v, %+v, %v; want an *Error of kind protocol", task, res, err)
			}
			res, err = c.CallTool(ctx, "t", nil)
			if e, ok := errors.AsType[*client.Error](err); !ok || e.Kind != client.KindProtocol {
				t.Errorf("CallTool = %+v, %v; want an *Error of kind protocol", res, err)
			}
		})
	}
}
