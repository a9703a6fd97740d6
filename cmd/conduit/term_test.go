package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile is text a server puts in every field the CLI prints: an OSC 52
// clipboard write, a screen clear, a carriage return that would draw over
// the line, an 8-bit CSI and a bidi override.
const hostile = "x\x1b]52;c;aGk=\x07\x1b[2J\rOVER\u009b31m\u202eevil"

// hostileServer is a legacy-era Streamable HTTP server (JSON answers) that
// puts hostile text in its server info, instructions, tools, results,
// resources and errors.
func hostileServer(t *testing.T) string {
	t.Helper()
	h := func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result any
		var rpcErr any
		switch req.Method {
		case "initialize":
			result = map[string]any{
				"protocolVersion": "2025-06-18",
				"capabilities":    map[string]any{"tools": map[string]any{}, "resources": map[string]any{}},
				"serverInfo":      map[string]any{"name": hostile, "version": hostile},
				"instructions":    hostile,
			}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{
				"name": "t" + hostile, "title": hostile, "description": hostile,
				"inputSchema": map[string]any{"type": "object"},
			}}}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": hostile}}}
		case "resources/read":
			result = map[string]any{"contents": []any{map[string]any{"uri": "file:///x" + hostile, "text": hostile}}}
		case "prompts/get":
			rpcErr = map[string]any{"code": -32000, "message": hostile}
		default:
			rpcErr = map[string]any{"code": -32601, "message": "no"}
		}
		w.Header().Set("Content-Type", "application/json")
		resp := map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}
		if rpcErr != nil {
			resp = map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": rpcErr}
		}
		json.NewEncoder(w).Encode(resp)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			h(w, r)
			return
		}
		http.Error(w, "no", http.StatusMethodNotAllowed)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// terminalUnsafe returns the first rune of s that a terminal would act on
// rather than show: a control character other than newline and tab, a C1
// control or a bidi override, or -1.
func terminalUnsafe(s string) rune {
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f, r >= 0x80 && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == utf8.RuneError:
			return r
		}
	}
	return -1
}

// TestTerminalSafeOutput checks that nothing a server sends reaches the
// terminal as a control sequence, in tables, plain lines, results,
// resources and errors, with and without --json.
func TestTerminalSafeOutput(t *testing.T) {
	url := hostileServer(t)
	for _, args := range [][]string{
		{"probe"},
		{"tools"},
		{"tools", "--json"},
		{"call", url, "t" + hostile},
		{"call", "--json", url, "t" + hostile},
		{"read", url, "file:///x"},
		{"prompt", url, "p"},
	} {
		full := append([]string{args[0], "--protocol", "2025-06-18"}, args[1:]...)
		if len(args) == 1 || args[1] == "--json" && len(args) == 2 {
			full = append(full, url)
		}
		r := runConduit(t, "", full...)
		for _, out := range []struct{ name, s string }{{"stdout", r.stdout}, {"stderr", r.stderr}} {
			if c := terminalUnsafe(out.s); c != -1 {
				t.Errorf("conduit %s: %s holds %U:\n%q", args[0], out.name, c, out.s)
			}
		}
		if all := r.stdout + r.stderr; !strings.Contains(all, `\u202eevil`) || !strings.HasSuffix(all, "\n") {
			t.Errorf("conduit %s: the server's text is missing or not escaped:\nstdout: %q\nstderr: %q", args[0], r.stdout, r.stderr)
		}
	}
}

// TestTerminalSafeJSON checks that --json output stays valid under the
// escaping and decodes to what the server sent.
func TestTerminalSafeJSON(t *testing.T) {
	url := hostileServer(t)
	r := runConduit(t, "", "tools", "--json", "--protocol", "2025-06-18", url)
	var out struct {
		Tools []struct{ Name, Description string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("conduit tools --json: %v:\n%s", err, r.stdout)
	}
	if len(out.Tools) != 1 || out.Tools[0].Name != "t"+hostile || out.Tools[0].Description != hostile {
		t.Errorf("conduit tools --json decoded to %+q, want the server's text", out.Tools)
	}
}

// TestTermWriterSplitWrites checks that a character cut between two
// writes is escaped (or kept) as a whole, and conduit's own escape
// sequences pass.
func TestTermWriterSplitWrites(t *testing.T) {
	var b strings.Builder
	w := newTermWriter(&b)
	in := []byte("a\u009bb\u202ec é\r\nd\re")
	for i := range in {
		w.Write(in[i : i+1])
	}
	writeControl(w, "\r\x1b[K")
	w.Write([]byte{0xc2})
	writeControl(w, "!")
	// The "\r\n" is cut between writes: the "\r" is escaped.
	if got, want := b.String(), `a\u009bb\u202ec é\r`+"\n"+`d\re`+"\r\x1b[K"+`\xc2!`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestTermSafe(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain\ttext\nline é", "plain\ttext\nline é"},
		{"a\r\nb", "a\r\nb"},
		{"\x1b[2J\x07\x7f", `\x1b[2J\x07\x7f`},
		{"\u0085\u2066x\u2069", `\u0085\u2066x\u2069`},
		{"bad\xff\xc2", `bad\xff\xc2`},
	} {
		if got := termSafe(tc.in); got != tc.want {
			t.Errorf("termSafe(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// rawResultServer is a legacy-era Streamable HTTP server with one tool,
// "t", whose tools/call result is the JSON text result, sent as it is
// (raw bytes a server's own encoder would not produce).
func rawResultServer(t *testing.T, result string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		res := `{"code":-32601,"message":"no"}`
		member := "error"
		switch req.Method {
		case "initialize":
			res, member = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`, "result"
		case "tools/list":
			res, member = `{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`, "result"
		case "tools/call":
			res, member = result, "result"
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"`+member+`":`+res+"}\n")
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// TestTerminalSafeJSONRawBytes checks that --json output stays valid JSON
// when the server's strings hold what JSON carries unescaped but a
// terminal would act on (DEL), or bytes that are not UTF-8 (kept as they
// are in structuredContent, a raw JSON value): the escaping must not turn
// them into "\x7f" or "\xff", which are no JSON escapes.
func TestTerminalSafeJSONRawBytes(t *testing.T) {
	url := rawResultServer(t, "{\"content\":[{\"type\":\"text\",\"text\":\"a\x7fb\"}],\"structuredContent\":{\"s\":\"c\xffd\x7fe\"}}")
	r := runConduit(t, "", "call", "--json", "--protocol", "2025-06-18", url, "t")
	if c := terminalUnsafe(r.stdout); c != -1 {
		t.Errorf("conduit call --json: stdout holds %U:\n%q", c, r.stdout)
	}
	var out struct {
		Content           []struct{ Text string }
		StructuredContent struct{ S string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("conduit call --json printed invalid JSON: %v:\n%q\nstderr: %s", err, r.stdout, r.stderr)
	}
	if len(out.Content) != 1 || out.Content[0].Text != "a\x7fb" || out.StructuredContent.S != "c\ufffdd\x7fe" {
		t.Errorf("conduit call --json decoded to %+q, want the server's text (the byte that is not UTF-8 as U+FFFD)", out)
	}
}
