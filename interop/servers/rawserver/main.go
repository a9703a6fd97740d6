// Command rawserver is a hand-written MCP server with no SDK, the floor of
// the benchmarks: newline-delimited JSON-RPC on stdio, single-message
// JSON POSTs on HTTP (stateless, no SSE), or one JSON-RPC message per text
// message on a WebSocket (subprotocol "mcp"). It serves both eras: the
// legacy initialize handshake and the modern server/discover + per-request
// _meta.
//
// Tools: echo {text}, add {a,b}, big {size} and -tools N filler tools. On
// stdio and WebSocket, where messages are handled one at a time, also
// hold (its answer is withheld), held (answers how many are withheld) and
// release (sends every withheld answer, then its own): the tools of the
// many-calls-in-flight measurement.
// Flags: -transport stdio|http|ws, -addr 127.0.0.1:0, -tools N. Over HTTP
// and WebSocket it prints its endpoint URL (http://…/mcp) on stdout.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/coder/websocket"
)

const modernVersion = "2026-07-28"

var versions = []string{modernVersion, "2025-11-25", "2025-06-18"}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type server struct {
	tools []map[string]any
}

// holder withholds the answers of hold calls on one sequential connection
// (stdio or a WebSocket) until a release call.
type holder struct {
	held []*response
}

// serve answers one message through write, applying hold/held/release.
func (h *holder) serve(s *server, line []byte, write func(*response) error) error {
	res := s.handle(line)
	if res == nil {
		return nil
	}
	switch res.Result {
	case holdResult:
		res.Result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "released"}}, "resultType": "complete"}
		h.held = append(h.held, res)
		return nil
	case heldResult:
		res.Result = map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprint(len(h.held))}}, "resultType": "complete"}
	case releaseResult:
		for _, r := range h.held {
			if err := write(r); err != nil {
				return err
			}
		}
		h.held = nil
		res.Result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}, "resultType": "complete"}
	}
	return write(res)
}

// Markers that handle returns for the hold tools, replaced by holder.
var holdResult, heldResult, releaseResult = new(int), new(int), new(int)

func newServer(fillers int) *server {
	obj := func(props map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": props}
	}
	s := &server{tools: []map[string]any{
		{"name": "echo", "description": "Echoes text", "inputSchema": obj(map[string]any{"text": map[string]any{"type": "string"}})},
		{"name": "add", "description": "Adds a and b", "inputSchema": obj(map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}})},
		{"name": "big", "description": "Returns size bytes of text", "inputSchema": obj(map[string]any{"size": map[string]any{"type": "integer"}})},
	}}
	for i := range fillers {
		s.tools = append(s.tools, map[string]any{
			"name": fmt.Sprintf("filler-%04d", i), "description": "Filler tool for list benchmarks",
			"inputSchema": obj(map[string]any{"text": map[string]any{"type": "string"}}),
		})
	}
	return s
}

// handle answers one message; it returns nil for notifications.
func (s *server) handle(line []byte) *response {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return &response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: -32700, Message: "parse error"}}
	}
	if len(req.ID) == 0 {
		return nil
	}
	var params struct {
		Meta            map[string]json.RawMessage `json:"_meta"`
		ProtocolVersion string                     `json:"protocolVersion"`
		Name            string                     `json:"name"`
		Arguments       map[string]any             `json:"arguments"`
	}
	_ = json.Unmarshal(req.Params, &params)
	var metaVersion string
	_ = json.Unmarshal(params.Meta["io.modelcontextprotocol/protocolVersion"], &metaVersion)
	modern := metaVersion >= modernVersion
	res := &response{JSONRPC: "2.0", ID: req.ID}
	complete := func(m map[string]any) map[string]any {
		if modern {
			m["resultType"] = "complete"
		}
		return m
	}
	info := map[string]any{"name": "interop-rawserver", "version": "1.0.0"}
	switch req.Method {
	case "initialize":
		v := params.ProtocolVersion
		if v >= modernVersion || !contains(versions, v) {
			v = "2025-11-25"
		}
		res.Result = map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": info}
	case "server/discover":
		res.Result = map[string]any{
			"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
			"supportedVersions": versions, "capabilities": map[string]any{"tools": map[string]any{}},
			"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": info},
		}
	case "ping":
		res.Result = complete(map[string]any{})
	case "tools/list":
		m := complete(map[string]any{"tools": s.tools})
		if modern {
			m["ttlMs"], m["cacheScope"] = 0, "private"
		}
		res.Result = m
	case "tools/call":
		s.callTool(params.Name, params.Arguments, res, complete)
	default:
		res.Error = &rpcError{Code: -32601, Message: "method not found: " + req.Method}
	}
	return res
}

// callTool answers tools/call of tool name with args into res.
func (s *server) callTool(name string, args map[string]any, res *response, complete func(map[string]any) map[string]any) {
	var text string
	switch name {
	case "echo":
		text, _ = args["text"].(string)
	case "add":
		a, _ := args["a"].(float64)
		b, _ := args["b"].(float64)
		text = fmt.Sprint(a + b)
	case "hold":
		res.Result = holdResult
		return
	case "held":
		res.Result = heldResult
		return
	case "release":
		res.Result = releaseResult
		return
	case "big":
		n, _ := args["size"].(float64)
		if n < 0 || n > 64<<20 {
			res.Error = &rpcError{Code: -32602, Message: "size out of range"}
			return
		}
		text = strings.Repeat("x", int(n))
	default:
		if !strings.HasPrefix(name, "filler-") {
			res.Error = &rpcError{Code: -32602, Message: "unknown tool " + name}
			return
		}
		text, _ = args["text"].(string)
	}
	res.Result = complete(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func serveStdio(s *server) error {
	r := bufio.NewReaderSize(os.Stdin, 1<<20)
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	enc := json.NewEncoder(w)
	var h holder
	write := func(res *response) error {
		if err := enc.Encode(res); err != nil {
			return err
		}
		return w.Flush()
	}
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if err := h.serve(s, line, write); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// listenLoopback listens on addr, which must be 127.0.0.1:<port>.
func listenLoopback(addr string) (net.Listener, error) {
	if host, _, err := net.SplitHostPort(addr); err != nil || host != "127.0.0.1" {
		return nil, fmt.Errorf("-addr must be 127.0.0.1:<port>, got %q", addr)
	}
	return net.Listen("tcp", addr)
}

func serveHTTP(s *server, addr string) error {
	ln, err := listenLoopback(addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		res := s.handle(body)
		if res == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(res)
	})
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	return http.Serve(ln, mux)
}

// serveWebSocket serves MCP over WebSockets at /mcp, one connection per
// client, its messages handled one at a time.
func serveWebSocket(s *server, addr string) error {
	ln, err := listenLoopback(addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ws.SetReadLimit(64 << 20)
		ctx := r.Context()
		var h holder
		write := func(res *response) error {
			b, err := json.Marshal(res)
			if err != nil {
				return err
			}
			return ws.Write(ctx, websocket.MessageText, b)
		}
		for {
			_, msg, err := ws.Read(ctx)
			if err != nil {
				return
			}
			if err := h.serve(s, msg, write); err != nil {
				return
			}
		}
	})
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	return http.Serve(ln, mux)
}

func main() {
	transport := flag.String("transport", "stdio", "stdio, http or ws")
	addr := flag.String("addr", "127.0.0.1:0", "HTTP listen address")
	fillers := flag.Int("tools", 0, "number of extra filler tools")
	flag.String("mode", "dual", "ignored: the raw server always serves both eras")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("rawserver: ")
	s := newServer(*fillers)
	var err error
	switch *transport {
	case "stdio":
		err = serveStdio(s)
	case "http":
		err = serveHTTP(s, *addr)
	case "ws":
		err = serveWebSocket(s, *addr)
	default:
		err = fmt.Errorf("unknown -transport %q", *transport)
	}
	if err != nil {
		log.Fatal(err)
	}
}
