package toolset_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/host"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// callsOf returns the tools/call params the server received.
func callsOf(srv *conduittest.Server) []string {
	var out []string
	for _, m := range srv.Received() {
		if m.Method == "tools/call" {
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			_ = json.Unmarshal(m.Params, &p)
			out = append(out, p.Name+" "+string(p.Arguments))
		}
	}
	return out
}

// startHost runs a host over an mcpServers file naming the two servers.
func startHost(t *testing.T, servers map[string]*conduittest.Server) *host.Host {
	t.Helper()
	entries := map[string]any{}
	for name, srv := range servers {
		entries[name] = map[string]any{"url": srv.URL()}
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": entries})
	cfg, err := host.Parse("mcp.json", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Start(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if err := h.Wait(testContext(t)); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHostRoutesCalls: a host over a modern and a legacy server, both
// offering echo; the set's names are unique and each call reaches the
// server that offers the tool the model named.
func TestHostRoutesCalls(t *testing.T) {
	modern := conduittest.NewServer(t, conduittest.WithEra(conduittest.Modern))
	legacy := conduittest.NewServer(t, conduittest.WithEra(conduittest.Legacy))
	h := startHost(t, map[string]*conduittest.Server{"new.era": modern, "old": legacy})
	ctx := testContext(t)
	set, err := toolset.Load(ctx, toolset.FromHost(h), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, tool := range set.Tools() {
		if prev, dup := names[tool.Name]; dup {
			t.Fatalf("name %q for %s and %s", tool.Name, prev, tool.Server)
		}
		names[tool.Name] = tool.Server
		if tool.Tool.Name == "echo" {
			res, err := set.Call(ctx, tool.Name, `{"text":"to `+tool.Server+`"}`)
			if err != nil || res.IsError || res.Text() != "to "+tool.Server {
				t.Fatalf("call %s: %v %+v", tool.Name, err, res)
			}
		}
	}
	for srv, want := range map[*conduittest.Server]string{modern: `echo {"text":"to new.era"}`, legacy: `echo {"text":"to old"}`} {
		if got := callsOf(srv); len(got) != 1 || got[0] != want {
			t.Errorf("server received %q, want [%s]", got, want)
		}
	}
	if len(names) < 2 {
		t.Fatalf("names %v", names)
	}
}

// TestHostNamedCalls: with Options.Name, a set over a host names the
// tools its own way, yet each call reaches the host under the host's
// name for the tool, as the host listed it (it went under the set's name,
// which the host does not know).
func TestHostNamedCalls(t *testing.T) {
	srv := conduittest.NewServer(t, conduittest.WithEra(conduittest.Modern))
	h := startHost(t, map[string]*conduittest.Server{"one": srv})
	ctx := testContext(t)
	set, err := toolset.Load(ctx, toolset.FromHost(h), &toolset.Options{Name: func(server, tool string) string { return "t." + tool }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := set.Call(ctx, "t_echo", `{"text":"hi"}`)
	if err != nil || res.IsError || res.Text() != "hi" {
		t.Fatalf("Call(t_echo) = %v, %+v; want the server's hi", err, res)
	}
	if got := callsOf(srv); len(got) != 1 || got[0] != `echo {"text":"hi"}` {
		t.Errorf("server received %q, want [echo {\"text\":\"hi\"}]", got)
	}
}

// TestClientSourceBothEras runs the same model calls through a client of
// each era.
func TestClientSourceBothEras(t *testing.T) {
	for _, era := range []conduittest.Era{conduittest.Modern, conduittest.Legacy} {
		t.Run(era.String(), func(t *testing.T) {
			ctx := testContext(t)
			srv, set := toolsettest.LoadServer(ctx, t, era)
			res, err := set.Call(ctx, "add", `{"a":19,"b":23}`)
			if err != nil || res.IsError || string(res.Structured) != `{"sum":42}` {
				t.Fatalf("add: %v %+v", err, res)
			}
			res, err = set.Call(ctx, "fail", `{"message":"boom"}`)
			if err != nil || !res.IsError || !strings.Contains(res.Text(), "boom") {
				t.Fatalf("fail: %v %+v", err, res)
			}
			res, err = set.Call(ctx, "rpc_error", `{"code":-32602}`)
			var ce *toolset.CallError
			if !errors.As(err, &ce) || !res.IsError || ce.Name != "rpc_error" {
				t.Fatalf("rpc_error: %v %+v", err, res)
			}
			if got := callsOf(srv); len(got) != 3 {
				t.Fatalf("server received %q", got)
			}
		})
	}
}

// TestCallArguments: what the model wrote reaches the server only when it
// is a JSON object; nulls of optional properties are removed.
func TestCallArguments(t *testing.T) {
	ctx := testContext(t)
	srv, set := toolsettest.LoadServer(ctx, t, conduittest.Modern)
	for _, tc := range []struct{ name, args string }{
		{"cut short", `{"text":"hel`},
		{"not JSON", `text=hello`},
		{"an array", `["hello"]`},
		{"a string", `"hello"`},
	} {
		res, err := set.Call(ctx, "echo", tc.args)
		if !errors.Is(err, toolset.ErrInvalidArguments) || !res.IsError || res.Raw != nil {
			t.Errorf("%s: %v %+v", tc.name, err, res)
		}
	}
	if res, err := set.Call(ctx, "nope", `{}`); !errors.Is(err, toolset.ErrUnknownTool) || !res.IsError || !strings.Contains(res.Text(), "echo") {
		t.Errorf("unknown tool: %v %+v", err, res)
	}
	if got := callsOf(srv); len(got) != 0 {
		t.Fatalf("invalid calls reached the server: %q", got)
	}
	// The strict dialect made kib nullable; the model's null is removed.
	if res, err := set.Call(ctx, "big", `{"kib":null}`); err != nil || res.IsError {
		t.Fatalf("big: %v %+v", err, res)
	}
	// Empty arguments are an empty object.
	if res, err := set.Call(ctx, "structured", ``); err != nil {
		t.Fatalf("structured: %v %+v", err, res)
	}
	got := callsOf(srv)
	if len(got) != 2 || got[0] != "big {}" || got[1] != "structured {}" {
		t.Fatalf("server received %q", got)
	}
}

// TestResultBoundLive: a huge output is cut to the set's bound.
func TestResultBoundLive(t *testing.T) {
	srv := conduittest.NewServer(t)
	ctx := testContext(t)
	c, err := client.Dial(ctx, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	set, err := toolset.Load(ctx, toolset.FromClient(c), &toolset.Options{MaxTextBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	res, err := set.Call(ctx, "big", `{"kib":256}`)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Text()
	if !res.Truncated || len(text) > 1200 || !strings.Contains(text, fmt.Sprintf("%d more bytes left out", 256<<10-1000)) {
		t.Fatalf("truncated=%v len=%d tail=%q", res.Truncated, len(text), text[max(0, len(text)-120):])
	}
}
