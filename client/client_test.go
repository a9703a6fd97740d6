package client_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/conduitmcp/conduit/handler"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

func wantEra(p client.Protocol) negotiation.Era {
	if p == client.Legacy {
		return negotiation.EraLegacy
	}
	return negotiation.EraModern
}

func TestIntrospection(t *testing.T) {
	matrix(t, func(t *testing.T, tr string, p client.Protocol) {
		f := connect(t, tr, testserver.Options{}, client.WithProtocol(p))
		c := f.c
		if got, want := c.Negotiated().Era, wantEra(p); got != want {
			t.Errorf("Era() = %v, want %v", got, want)
		}
		wantVersion := protocol.Version20260728
		if p == client.Legacy {
			wantVersion = protocol.Version20251125
		}
		if got := c.Negotiated().Version; got != wantVersion {
			t.Errorf("ProtocolVersion() = %q, want %q", got, wantVersion)
		}
		if si := c.ServerInfo(); si == nil || si.Name != "conduit-testserver" {
			t.Errorf("ServerInfo() = %+v, want name conduit-testserver", si)
		}
		if c.Instructions() == "" {
			t.Error("Instructions() is empty")
		}
		if caps := c.ServerCapabilities(); caps.Tools == nil {
			t.Errorf("ServerCapabilities().Tools = nil, want set")
		}
		if len(c.Negotiated().Trace) == 0 {
			t.Error("Negotiated().Trace is empty")
		}
		if err := c.Ping(testCtx(t)); err != nil {
			t.Errorf("Ping() = %v", err)
		}
		d := c.Negotiated().Discover
		if p == client.Legacy {
			if d != nil {
				t.Errorf("legacy Negotiated().Discover = %+v, want nil", d)
			}
		} else if d == nil || !slices.Contains(d.SupportedVersions, protocol.Version20260728) {
			t.Errorf("Negotiated().Discover = %+v", d)
		}
	})
}

func TestListings(t *testing.T) {
	matrix(t, func(t *testing.T, tr string, p client.Protocol) {
		// PageSize 2 makes every listing span several pages.
		f := connect(t, tr, testserver.Options{PageSize: 2}, client.WithProtocol(p))
		ctx := testCtx(t)
		var tools []string
		for tool, err := range f.c.Tools(ctx) {
			if err != nil {
				t.Fatalf("Tools: %v", err)
			}
			tools = append(tools, tool.Name)
		}
		want := testserver.ToolNames()
		if tr == tHTTP && p == client.Modern {
			// Invalid x-mcp-header tools are dropped on modern HTTP.
			want = slices.DeleteFunc(slices.Clone(want), func(n string) bool { return n == "bad_header_type" || n == "bad_header_name" })
		}
		if diff := cmp.Diff(want, tools); diff != "" {
			t.Errorf("Tools (-want +got):\n%s", diff)
		}

		var prompts []string
		for pr, err := range f.c.Prompts(ctx) {
			if err != nil {
				t.Fatalf("Prompts: %v", err)
			}
			prompts = append(prompts, pr.Name)
		}
		checkNames(t, "Prompts", prompts, "greet", "simple")

		var uris []string
		for r, err := range f.c.Resources(ctx) {
			if err != nil {
				t.Fatalf("Resources: %v", err)
			}
			uris = append(uris, r.URI)
		}
		checkNames(t, "Resources", uris, "file:///hello.txt", "file:///logo.png", "file:///config.json")

		var tmpls []string
		for rt, err := range f.c.ResourceTemplates(ctx) {
			if err != nil {
				t.Fatalf("ResourceTemplates: %v", err)
			}
			tmpls = append(tmpls, rt.URITemplate)
		}
		checkNames(t, "ResourceTemplates", tmpls, "file:///{path}")

		page, err := f.c.ListTools(ctx, "")
		if err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		if len(page.Tools) != 2 || page.NextCursor == nil {
			t.Errorf("ListTools first page = %d tools, next %v; want 2 and a cursor", len(page.Tools), page.NextCursor)
		}
		if pp, err := f.c.ListPrompts(ctx, ""); err != nil || len(pp.Prompts) != 2 || pp.NextCursor == nil {
			t.Errorf("ListPrompts first page = %+v, %v; want 2 prompts and a cursor", pp, err)
		}
		if rp, err := f.c.ListResources(ctx, ""); err != nil || len(rp.Resources) != 2 || rp.NextCursor == nil {
			t.Errorf("ListResources first page = %+v, %v; want 2 resources and a cursor", rp, err)
		}
		if tp, err := f.c.ListResourceTemplates(ctx, ""); err != nil || len(tp.ResourceTemplates) == 0 {
			t.Errorf("ListResourceTemplates first page = %+v, %v", tp, err)
		}
		page2, err := f.c.ListTools(ctx, *page.NextCursor)
		if err != nil {
			t.Fatalf("ListTools second page: %v", err)
		}
		if len(page2.Tools) == 0 || page2.Tools[0].Name == page.Tools[0].Name {
			t.Errorf("ListTools second page = %+v, want the next tools", page2.Tools)
		}
	})
}

func TestCallsAndFeatures(t *testing.T) {
	matrix(t, func(t *testing.T, tr string, p client.Protocol) {
		f := connect(t, tr, testserver.Options{}, client.WithProtocol(p))
		ctx := testCtx(t)
		c := f.c

		res, err := c.CallTool(ctx, "add", map[string]any{"a": 1, "b": 2})
		if err != nil {
			t.Fatalf("CallTool(add) = %v", err)
		}
		if res.Failed() || res.Text() == "" {
			t.Errorf("CallTool(add) = %+v, want a text result", res)
		}

		res, err = c.CallTool(ctx, "fail", map[string]any{"message": "boom"})
		if err != nil || !res.Failed() {
			t.Errorf("CallTool(fail) = %+v, %v; want a failed result", res, err)
		}

		_, err = c.CallTool(ctx, "no_such_tool", nil)
		if !errors.Is(err, jsonrpc.ErrInvalidParams) {
			t.Errorf("CallTool(no_such_tool) error = %v, want ErrInvalidParams", err)
		}

		_, err = c.CallTool(ctx, "echo", []int{1})
		var ve *handler.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("CallTool with array arguments error = %v, want *ValidationError", err)
		}

		// Progress callbacks run on the dispatcher goroutine and may trail
		// the result, so they are collected through a channel.
		progress := make(chan float64, 16)
		res, err = c.CallTool(ctx, "slow", map[string]any{"steps": 3}, client.WithProgress(func(pp protocol.ProgressParams) {
			progress <- pp.Progress
		}))
		if err != nil || res.Failed() {
			t.Fatalf("CallTool(slow) = %+v, %v", res, err)
		}
		var got []float64
		for len(got) < 3 {
			select {
			case v := <-progress:
				got = append(got, v)
			case <-ctx.Done():
				t.Fatalf("progress notifications = %v, want 3", got)
			}
		}
		if !slices.IsSorted(got) {
			t.Errorf("progress = %v, want increasing", got)
		}

		gp, err := c.GetPrompt(ctx, "greet", map[string]string{"name": "Ada"})
		if err != nil {
			t.Fatalf("GetPrompt = %v", err)
		}
		if len(gp.Messages) != 1 || gp.Messages[0].Content.Text != "Hello, Ada!" {
			t.Errorf("GetPrompt messages = %+v", gp.Messages)
		}

		rr, err := c.ReadResource(ctx, "file:///hello.txt")
		if err != nil {
			t.Fatalf("ReadResource = %v", err)
		}
		if len(rr.Contents) != 1 || rr.Contents[0].Text != "Hello, world!" {
			t.Errorf("ReadResource contents = %+v", rr.Contents)
		}
		_, err = c.ReadResource(ctx, "file:///missing.txt")
		if !jsonrpc.IsResourceNotFound(err) {
			t.Errorf("ReadResource(missing) error = %v, want resource not found", err)
		}

		cr, err := c.Complete(ctx, protocol.PromptReference("greet"), protocol.CompleteArgument{Name: "name", Value: "al"}, nil)
		if err != nil {
			t.Fatalf("Complete = %v", err)
		}
		if diff := cmp.Diff([]string{"albert", "alice"}, cr.Completion.Values); diff != "" {
			t.Errorf("Complete values (-want +got):\n%s", diff)
		}

		if err := c.SetLogLevel(ctx, protocol.LevelDebug); err != nil {
			t.Errorf("SetLogLevel = %v", err)
		}
		if err := c.NotifyRootsChanged(ctx); err != nil {
			t.Errorf("NotifyRootsChanged = %v", err)
		}
	})
}

// checkNames checks that got has no duplicates (every page was read once)
// and contains want.
func checkNames(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	seen := map[string]bool{}
	for _, n := range got {
		if seen[n] {
			t.Errorf("%s: %q listed twice in %v", what, n, got)
		}
		seen[n] = true
	}
	for _, n := range want {
		if !seen[n] {
			t.Errorf("%s = %v, missing %q", what, got, n)
		}
	}
}
