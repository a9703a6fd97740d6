package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/google/go-cmp/cmp"
)

// TestStreamProbeFaults drives server/discover through every JSON-RPC level
// probe outcome of the seed table.
func TestStreamProbeFaults(t *testing.T) {
	cases := []struct {
		name   string
		fault  Fault
		result string // want exactly this result (raw), or
		check  func(t *testing.T, resp *jsonrpc.Response)
	}{
		{name: "invalid discover", fault: Fault{Kind: FaultDiscoverInvalid}, check: func(t *testing.T, resp *jsonrpc.Response) {
			res := result(t, resp)
			if _, ok := res["supportedVersions"].(string); !ok || res["resultType"] != "complete" {
				t.Errorf("result = %v, want shaped but invalid", res)
			}
		}},
		{name: "not shaped", fault: Fault{Kind: FaultDiscoverNotShaped}, result: `{"hello":"world"}`},
		{name: "custom result", fault: Fault{Kind: FaultResult, Result: json.RawMessage(`{"x":1}`)}, result: `{"x":1}`},
		{name: "no mutual version", fault: Fault{Kind: FaultDiscoverNoMutual}, check: func(t *testing.T, resp *jsonrpc.Response) {
			res := result(t, resp)
			if d := cmp.Diff([]any{"2099-01-01"}, res["supportedVersions"]); d != "" || res["ttlMs"] == nil {
				t.Errorf("supportedVersions (-want +got):\n%s", d)
			}
		}},
		{name: "-32022 mutual", fault: Fault{Kind: FaultUnsupportedVersion, Supported: []string{"2099-01-01", "2026-07-28"}}, check: wantError(-32022, `{"requested":"2026-07-28","supported":["2099-01-01","2026-07-28"]}`)},
		{name: "-32022 legacy only", fault: Fault{Kind: FaultUnsupportedVersion, Supported: []string{"2025-11-25", "2025-06-18"}}, check: wantError(-32022, `{"requested":"2026-07-28","supported":["2025-11-25","2025-06-18"]}`)},
		{name: "-32021", fault: Fault{Kind: FaultMissingCapability}, check: wantError(-32021, `{"requiredCapabilities":{"elicitation":{}}}`)},
		{name: "-32020", fault: Fault{Kind: FaultHeaderMismatch}, check: wantError(-32020, "")},
		{name: "-32601", fault: Fault{Kind: FaultRPCError, Code: -32601}, check: wantError(-32601, "")},
		{name: "-32602", fault: Fault{Kind: FaultRPCError, Code: -32602}, check: wantError(-32602, "")},
		{name: "-32603", fault: Fault{Kind: FaultRPCError}, check: wantError(-32603, "")},
		{name: "-32000 with data", fault: Fault{Kind: FaultRPCError, Code: -32000, Message: "Bad Request", Data: json.RawMessage(`{"a":1}`)}, check: wantError(-32000, `{"a":1}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := New(Options{Faults: []Fault{tc.fault}})
			defer srv.Close()
			c := newStreamClient(t, srv)
			resp := c.call("server/discover", withMeta(nil, modernMeta("")))
			if tc.result != "" {
				if resp.Error != nil || string(resp.Result) != tc.result {
					t.Errorf("result = %s %v, want %s", resp.Result, resp.Error, tc.result)
				}
			} else {
				tc.check(t, resp)
			}
			// Other methods are unaffected by a server/discover fault.
			result(t, c.call("tools/list", withMeta(nil, modernMeta(""))))
		})
	}
}

func wantError(code int64, data string) func(*testing.T, *jsonrpc.Response) {
	return func(t *testing.T, resp *jsonrpc.Response) {
		t.Helper()
		e := rpcErr(t, resp)
		if e.Code != code {
			t.Errorf("code = %d, want %d", e.Code, code)
		}
		if data != "" {
			var got, want any
			_ = json.Unmarshal(e.Data, &got)
			_ = json.Unmarshal([]byte(data), &want)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("data (-want +got):\n%s", d)
			}
		}
	}
}

func TestFaultCounting(t *testing.T) {
	// Rejects the requested version the first time only: the corrective
	// retry succeeds. With Times 2 the retry is rejected too.
	for _, times := range []int{1, 2} {
		srv := New(Options{Faults: []Fault{{Kind: FaultUnsupportedVersion, Times: times}}})
		c := newStreamClient(t, srv)
		var codes []int64
		for range 3 {
			resp := c.call("server/discover", withMeta(nil, modernMeta("")))
			if resp.Error != nil {
				codes = append(codes, resp.Error.Code)
			} else {
				codes = append(codes, 0)
			}
		}
		want := []int64{-32022, 0, 0}
		if times == 2 {
			want = []int64{-32022, -32022, 0}
		}
		if d := cmp.Diff(want, codes); d != "" {
			t.Errorf("Times %d codes (-want +got):\n%s", times, d)
		}
		if hits := srv.FaultHits(); hits[0] != times {
			t.Errorf("FaultHits = %v, want [%d]", hits, times)
		}
		srv.Close()
	}
}

func TestStreamFaults(t *testing.T) {
	t.Run("silent", func(t *testing.T) {
		srv := New(Options{Faults: []Fault{{Kind: FaultSilent, Times: 1}}})
		defer srv.Close()
		c := newStreamClient(t, srv)
		c.request("server/discover", withMeta(nil, modernMeta("")))
		// No answer to the probe: the next response is the initialize.
		c.initialize("2025-11-25", "")
	})
	t.Run("noise", func(t *testing.T) {
		srv := New(Options{Banner: []string{"booting"}, Faults: []Fault{{Kind: FaultNoise, Method: "tools/list"}}})
		defer srv.Close()
		c := newStreamClient(t, srv)
		if line := string(c.nextLine()); line != "booting" {
			t.Errorf("banner = %q", line)
		}
		c.request("tools/list", withMeta(nil, modernMeta("")))
		for _, want := range []string{"conduit-testserver starting...", "listening on stdio"} {
			if line := string(c.nextLine()); line != want {
				t.Errorf("noise line = %q, want %q", line, want)
			}
		}
		if _, err := jsonrpc.DecodeMessage(c.nextLine()); err != nil {
			t.Errorf("after the noise: %v", err)
		}
	})
	t.Run("oversized", func(t *testing.T) {
		srv := New(Options{Faults: []Fault{{Kind: FaultOversized, Method: "ping", Size: 3 << 20}}})
		defer srv.Close()
		c := newStreamClient(t, srv)
		c.request("ping", nil)
		if line := c.nextLine(); len(line) < 3<<20 {
			t.Errorf("oversized response is %d bytes", len(line))
		}
	})
	t.Run("repeat cursor", func(t *testing.T) {
		srv := New(Options{PageSize: 2, Faults: []Fault{{Kind: FaultRepeatCursor}}})
		defer srv.Close()
		c := newStreamClient(t, srv)
		first := result(t, c.call("tools/list", withMeta(nil, modernMeta(""))))
		second := result(t, c.call("tools/list", withMeta(map[string]any{"cursor": first["nextCursor"]}, modernMeta(""))))
		if first["nextCursor"] == nil || first["nextCursor"] != second["nextCursor"] {
			t.Errorf("cursors %v then %v, want the same twice", first["nextCursor"], second["nextCursor"])
		}
	})
	t.Run("incoming too large", func(t *testing.T) {
		srv := New(Options{MaxMessageSize: 1024})
		defer srv.Close()
		c := newStreamClient(t, srv)
		c.sendRaw(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 4096) + `"}}`)
		resp := c.next().(*jsonrpc.Response)
		if resp.Error == nil || resp.ID.IsValid() {
			t.Errorf("oversized request answered %+v, want an id-less error", resp)
		}
		c.initialize("2025-11-25", "") // still serving
	})
}

func TestServeStreamExit(t *testing.T) {
	srv := New(Options{Faults: []Fault{{Kind: FaultExit}}})
	defer srv.Close()
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStream(context.Background(), cr, sw) }()
	go func() { _, _ = io.Copy(io.Discard, sr) }()
	req, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "server/discover", withMeta(nil, modernMeta("")))
	b, _ := jsonrpc.EncodeMessage(req)
	if _, err := cw.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrExit) {
			t.Errorf("ServeStream = %v, want ErrExit", err)
		}
	case <-time.After(watchdog):
		t.Fatal("watchdog: ServeStream did not exit")
	}
	cw.Close()
	sr.Close()
}

func TestHTTPFaults(t *testing.T) {
	cases := []struct {
		name   string
		fault  Fault
		status int
		ctype  string
		body   string
		header string // header "Name: value" expected
		code   int64  // JSON-RPC error code expected in the body
		badVer bool   // send an unsupported version
	}{
		{name: "401", fault: Fault{Kind: FaultHTTPStatus, Status: 401, Header: http.Header{"Www-Authenticate": {`Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"`}}},
			status: 401, header: `Www-Authenticate: Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"`},
		{name: "403", fault: Fault{Kind: FaultHTTPStatus, Status: 403, Header: http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope", scope="a b"`}}}, status: 403},
		{name: "429", fault: Fault{Kind: FaultHTTPStatus, Status: 429, Header: http.Header{"Retry-After": {"1"}}}, status: 429, header: "Retry-After: 1"},
		{name: "503", fault: Fault{Kind: FaultHTTPStatus, Status: 503}, status: 503},
		{name: "408", fault: Fault{Kind: FaultHTTPStatus, Status: 408}, status: 408},
		{name: "400 empty", fault: Fault{Kind: FaultHTTPStatus, Status: 400}, status: 400, body: ""},
		{name: "404 non-JSON", fault: Fault{Kind: FaultHTTPStatus, Status: 404, Body: BodyNonJSON}, status: 404, ctype: "text/plain; charset=utf-8", body: BodyNonJSON},
		{name: "405 JSON not RPC", fault: Fault{Kind: FaultHTTPStatus, Status: 405, Body: BodyJSONNotRPC}, status: 405, ctype: "application/json", body: BodyJSONNotRPC},
		{name: "400 legacy error", fault: Fault{Kind: FaultHTTPStatus, Status: 400, Body: BodyLegacyError}, status: 400, code: -32000},
		{name: "400 modern error", fault: Fault{Kind: FaultHTTPStatus, Status: 400, Body: BodyModernError}, status: 400, code: -32022},
		{name: "-32601 at 500", fault: Fault{Kind: FaultRPCError, Code: -32601, Status: 500}, status: 500, code: -32601},
		{name: "-32601 at 200", fault: Fault{Kind: FaultRPCError, Code: -32601, Status: 200}, status: 200, code: -32601},
		{name: "-32601 default 404", fault: Fault{Kind: FaultRPCError, Code: -32601}, status: 404, code: -32601},
		{name: "-32022 default 400", fault: Fault{Kind: FaultUnsupportedVersion}, status: 400, code: -32022},
		{name: "-32022 as SSE", fault: Fault{Kind: FaultRespondSSE}, badVer: true, status: 400, ctype: "text/event-stream", code: -32022},
		{name: "-32022 as JSON", fault: Fault{Kind: FaultRespondJSON}, badVer: true, status: 400, ctype: "application/json", code: -32022},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := New(Options{Faults: []Fault{tc.fault}})
			url := startHTTP(t, srv, srv.Handler())
			req, h := modernRequest(t, 1, "server/discover", nil, "")
			if tc.badVer {
				req.Params = json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`)
				h.Set("MCP-Protocol-Version", "2099-01-01")
			}
			r := post(t, url, req, h)
			if r.status != tc.status {
				t.Errorf("status = %d, want %d", r.status, tc.status)
			}
			if tc.ctype != "" && !strings.HasPrefix(r.ctype, tc.ctype) {
				t.Errorf("content type = %q, want %q", r.ctype, tc.ctype)
			}
			if tc.body != "" && string(r.body) != tc.body {
				t.Errorf("body = %q, want %q", r.body, tc.body)
			}
			if tc.header != "" {
				name, val, _ := strings.Cut(tc.header, ": ")
				if got := r.header.Get(name); got != val {
					t.Errorf("%s = %q, want %q", name, got, val)
				}
			}
			if tc.code != 0 {
				if e := rpcErr(t, r.response(t)); e.Code != tc.code {
					t.Errorf("code = %d, want %d", e.Code, tc.code)
				}
			}
		})
	}
}

func TestHTTPTransientFaults(t *testing.T) {
	srv := New(Options{Faults: []Fault{{Kind: FaultHTTPStatus, Status: 503, Times: 2}}})
	url := startHTTP(t, srv, srv.Handler())
	req, h := modernRequest(t, 1, "server/discover", nil, "")
	var statuses []int
	for range 3 {
		statuses = append(statuses, post(t, url, req, h).status)
	}
	if d := cmp.Diff([]int{503, 503, 200}, statuses); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}

	t.Run("reset", func(t *testing.T) {
		srv.SetFaults(Fault{Kind: FaultReset, Times: 1})
		ctx, cancel := context.WithTimeout(context.Background(), watchdog)
		defer cancel()
		if resp, err := doPost(ctx, url, req, h); err == nil {
			resp.Body.Close()
			t.Errorf("reset: got status %d, want a transport error", resp.StatusCode)
		}
		if r := post(t, url, req, h); r.status != 200 {
			t.Errorf("after reset status = %d", r.status)
		}
	})
	t.Run("silent", func(t *testing.T) {
		srv.SetFaults(Fault{Kind: FaultSilent, Times: 1})
		srv.Reset()
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			resp, err := doPost(ctx, url, req, h)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			errc <- err
		}()
		// Wait until the server has the request, then give up as a
		// client would on its probe timeout.
		wctx, wcancel := context.WithTimeout(context.Background(), watchdog)
		defer wcancel()
		if _, err := srv.WaitReceived(wctx, "server/discover"); err != nil {
			t.Fatalf("WaitReceived: %v", err)
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("silent request ended with %v, want context.Canceled", err)
		}
	})
	t.Run("break modern stream", func(t *testing.T) {
		srv.SetFaults(Fault{Kind: FaultBreakStream, Times: 1})
		r := post(t, url, req, h)
		if !strings.HasPrefix(r.ctype, "text/event-stream") || len(r.messages) != 0 {
			t.Errorf("broken stream: %s %q", r.ctype, r.body)
		}
	})
}

// An exit fault fired by the last request before the end of input still
// makes ServeStream return ErrExit (conduit serve exits 3 then).
func TestExitFaultBeforeEOF(t *testing.T) {
	for i := 0; i < 20; i++ {
		srv := New(Options{Faults: []Fault{{Kind: FaultExit, Method: "tools/call"}}})
		in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}` + "\n")
		var out bytes.Buffer
		err := srv.ServeStream(context.Background(), in, &out)
		srv.Close()
		if !errors.Is(err, ErrExit) || out.Len() != 0 {
			t.Fatalf("run %d: ServeStream = %v, wrote %q; want ErrExit and nothing", i, err, out.String())
		}
	}
}
