package testserver

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

type toolFunc func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error)

type toolDef struct {
	name        string
	description string
	input       string            // inputSchema, raw JSON
	output      string            // outputSchema, raw JSON; "" for none
	headers     map[string]string // valid x-mcp-header annotations: argument -> header name
	taskSupport string            // 2025-11-25 execution.taskSupport
	annotations string            // raw JSON ToolAnnotations; "" for none
	run         toolFunc
}

// tools is the tool list in deterministic order. It is filled in init to
// break the initialization cycle through toolsCall.
var tools []*toolDef

func init() {
	tools = []*toolDef{
		{name: "echo", description: "Returns its text.", input: `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, run: toolEcho},
		{name: "add", description: "Adds a and b.", input: `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`,
			output: `{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`, annotations: `{"readOnlyHint":true}`, run: toolAdd},
		{name: "slow", description: "Counts steps, sending progress when asked; args steps (default 3) and delayMs (default 0).",
			input: `{"type":"object","properties":{"steps":{"type":"integer"},"delayMs":{"type":"integer"}}}`, run: toolSlow},
		{name: "big", description: "Returns kib KiB of text (default 64).", input: `{"type":"object","properties":{"kib":{"type":"integer"}}}`, run: toolBig},
		{name: "structured", description: "Returns structured weather data.", input: `{"type":"object","properties":{"city":{"type":"string"}}}`,
			output:      `{"type":"object","properties":{"temperature":{"type":"number"},"conditions":{"type":"string"}},"required":["temperature","conditions"]}`,
			annotations: `{"idempotentHint":true}`, run: toolStructured},
		{name: "headers", description: "Reports the Mcp-Param-* headers it received.",
			input:   `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"priority":{"type":"integer","x-mcp-header":"Priority"},"verbose":{"type":"boolean","x-mcp-header":"Verbose"},"note":{"type":"string"}}}`,
			headers: map[string]string{"region": "Region", "priority": "Priority", "verbose": "Verbose"}, run: toolHeaders},
		{name: "bad_header_type", description: "INVALID: x-mcp-header on a number property; clients must drop it on HTTP.",
			input: `{"type":"object","properties":{"amount":{"type":"number","x-mcp-header":"Amount"}}}`, run: toolEcho},
		{name: "bad_header_name", description: "INVALID: x-mcp-header value is not a token; clients must drop it on HTTP.",
			input: `{"type":"object","properties":{"city":{"type":"string","x-mcp-header":"Bad Header"}}}`, run: toolEcho},
		{name: "ask_user", description: "Asks the user for their name (elicitation).", input: `{"type":"object","properties":{"message":{"type":"string"}}}`, run: toolAskUser},
		{name: "ask_url", description: "Asks the user to visit a URL (URL elicitation).", input: `{"type":"object","properties":{}}`, run: toolAskURL},
		{name: "sample", description: "Asks the client's model (sampling).", input: `{"type":"object","properties":{"prompt":{"type":"string"}}}`, run: toolSample},
		{name: "roots", description: "Lists the client's roots.", input: `{"type":"object","properties":{}}`, run: toolRoots},
		{name: "load_shed", description: "Answers requestState only once, then the result.", input: `{"type":"object","properties":{}}`, run: toolLoadShed},
		{name: "fail", description: "Returns a tool error (isError).", input: `{"type":"object","properties":{"message":{"type":"string"}}}`, run: toolFail},
		{name: "rpc_error", description: "Answers a JSON-RPC error (code, default -32603).", input: `{"type":"object","properties":{"code":{"type":"integer"}}}`, run: toolRPCError},
		{name: "log", description: "Sends a log message at level (needs a log level set).", input: `{"type":"object","properties":{"level":{"type":"string"},"message":{"type":"string"}}}`, run: toolLog},
		{name: "task", description: "A long-running task: steps polls (default 2); input asks for confirmation.",
			input: `{"type":"object","properties":{"steps":{"type":"integer"},"input":{"type":"boolean"},"fail":{"type":"boolean"}}}`, taskSupport: "optional", run: toolTaskSync},
	}
	tools = append(tools, inputTools...)
}

// toolDefs returns the tools this server lists, in order.
func (s *Server) toolDefs() []*toolDef {
	if s.opts.Conformance {
		return append(append([]*toolDef(nil), tools...), fixtureTools...)
	}
	return tools
}

func (s *Server) findTool(name string) *toolDef {
	for _, t := range s.toolDefs() {
		if t.name == name {
			return t
		}
	}
	return nil
}

// ToolNames returns the names of the default tools in list order (without
// the [Options.Conformance] fixtures).
func ToolNames() []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.name
	}
	return names
}

func (s *Server) toolsList(c *call) (map[string]any, *jsonrpc.Error) {
	defs := s.toolDefs()
	items := make([]any, 0, len(defs))
	for _, t := range defs {
		m := map[string]any{"name": t.name, "description": t.description, "inputSchema": json.RawMessage(t.input)}
		if t.output != "" {
			m["outputSchema"] = json.RawMessage(t.output)
		}
		if t.annotations != "" {
			m["annotations"] = json.RawMessage(t.annotations)
		}
		if t.taskSupport != "" && !c.modern && c.version == protocol.Version20251125 {
			m["execution"] = map[string]any{"taskSupport": t.taskSupport}
		}
		items = append(items, m)
	}
	return s.page(c, "tools", items)
}

func (s *Server) toolsCall(c *call) (map[string]any, *jsonrpc.Error) {
	var name string
	c.param("name", &name)
	t := s.findTool(name)
	if t == nil {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("unknown tool " + fmt.Sprintf("%q", name)).WithData(map[string]any{"name": name})
	}
	var args map[string]any
	if raw, ok := c.params["arguments"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, jsonrpc.ErrInvalidParams.WithMessage("arguments must be an object")
		}
	}
	if args == nil {
		args = map[string]any{}
	}
	if t.taskSupport == "required" {
		if c.modern && !c.hasTasksExtension() {
			return nil, missingTasksExtension()
		}
		if _, ok := c.params["task"]; !ok && !c.modern && t.name != "task" {
			return nil, jsonrpc.ErrMethodNotFound.WithMessage("tool " + name + " requires task augmentation")
		}
	}
	if name == "task" {
		if c.modern && c.hasTasksExtension() {
			return s.startModernTask(c, args)
		}
		if _, ok := c.params["task"]; ok && !c.modern {
			return s.startLegacyTask(c, args)
		}
	} else if _, ok := c.params["task"]; ok && !c.modern {
		return nil, jsonrpc.ErrMethodNotFound.WithMessage("tool " + name + " does not support tasks")
	}
	s.executed(name)
	return t.run(s, c, args)
}

// executed counts one run of tool name (see Executions).
func (s *Server) executed(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs == nil {
		s.runs = make(map[string]int)
	}
	s.runs[name]++
}

// Executions returns how many times tool name ran on this server (every
// connection and session): counted when the tool starts, so a request
// that a fault ends before it runs (exit, reset, expire-session) is not
// counted and one that a fault ends after it ran (exit-after,
// break-stream) is. Reset clears it.
func (s *Server) Executions(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[name]
}

func textResult(text string) map[string]any {
	return map[string]any{"content": []any{protocol.TextContent(text)}}
}

func argString(args map[string]any, k, def string) string {
	if v, ok := args[k].(string); ok {
		return v
	}
	return def
}

func argInt(args map[string]any, k string, def int) int {
	if v, ok := args[k].(float64); ok {
		return int(v)
	}
	return def
}

func toolEcho(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	text := argString(args, "text", "")
	c.log(protocol.LevelInfo, "echo: "+text)
	return textResult(text), nil
}

func toolAdd(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	a, ok1 := args["a"].(float64)
	b, ok2 := args["b"].(float64)
	if !ok1 || !ok2 {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("a and b must be numbers")
	}
	sum := a + b
	res := textResult(fmt.Sprint(sum))
	res["structuredContent"] = map[string]any{"sum": sum}
	return res, nil
}

func toolSlow(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	steps := min(max(argInt(args, "steps", 3), 0), 1000)
	delay := time.Duration(min(max(argInt(args, "delayMs", 0), 0), 60_000)) * time.Millisecond
	for i := 1; i <= steps; i++ {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-c.ctx.Done():
				t.Stop()
				return nil, jsonrpc.ErrRequestCancelled
			}
		}
		if c.ctx.Err() != nil {
			return nil, jsonrpc.ErrRequestCancelled
		}
		c.progress(float64(i), float64(steps), fmt.Sprintf("step %d of %d", i, steps))
		c.log(protocol.LevelDebug, fmt.Sprintf("slow: step %d", i))
	}
	return textResult(fmt.Sprintf("done after %d steps", steps)), nil
}

func toolBig(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	kib := min(max(argInt(args, "kib", 64), 0), 64<<10)
	return textResult(strings.Repeat("a", kib<<10)), nil
}

func toolStructured(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	sc := map[string]any{"temperature": 22.5, "conditions": "Partly cloudy"}
	b, _ := json.Marshal(sc)
	res := textResult(string(b))
	res["structuredContent"] = sc
	return res, nil
}

func toolHeaders(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	got := map[string]any{}
	for k, vs := range c.headers {
		if strings.HasPrefix(k, "Mcp-Param-") && len(vs) > 0 {
			got[k] = vs[0]
		}
	}
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	res := textResult(strings.Join(keys, ","))
	res["structuredContent"] = map[string]any{"headers": got}
	return res, nil
}

func toolFail(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	res := textResult(argString(args, "message", "the tool failed"))
	res["isError"] = true
	return res, nil
}

func toolRPCError(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	code := int64(argInt(args, "code", int(jsonrpc.CodeInternalError)))
	e := &jsonrpc.Error{Code: code, Message: defaultMessage(code) + " (rpc_error tool)"}
	if code == jsonrpc.CodeURLElicitationRequired {
		// The 2025-11-25 URLElicitationRequiredError shape.
		e = e.WithData(map[string]any{"elicitations": []any{map[string]any{
			"mode": protocol.ElicitModeURL, "elicitationId": "elicit-1", "url": "https://example.com/consent", "message": "Please sign in",
		}}})
	}
	return nil, e
}

func toolLog(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	lvl := protocol.LoggingLevel(argString(args, "level", "info"))
	if _, ok := levelRank[lvl]; !ok {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("unknown level")
	}
	msg := argString(args, "message", "hello from the log tool")
	c.log(lvl, msg)
	return textResult("logged " + string(lvl)), nil
}

// inputRequest is one request the server needs the client to answer.
type inputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params,omitempty"`
}

// gather obtains the client's answers to reqs. In the modern era it either
// returns the answers of a verified retry, or a non-nil input_required
// result to send instead; in the legacy era it sends real server-to-client
// requests.
func (s *Server) gather(c *call, tool string, reqs map[string]inputRequest) (map[string]json.RawMessage, map[string]any, *jsonrpc.Error) {
	if err := checkInputCaps(c, reqs); err != nil {
		return nil, nil, err
	}
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !c.modern {
		out := map[string]json.RawMessage{}
		for _, k := range keys {
			raw, err := c.ask(reqs[k].Method, reqs[k].Params)
			if err != nil {
				return nil, nil, err
			}
			out[k] = raw
		}
		return out, nil, nil
	}
	round := 0
	var responses map[string]json.RawMessage
	if raw, ok := c.params["requestState"]; ok {
		var tok string
		st, valid := requestState{}, false
		if json.Unmarshal(raw, &tok) == nil {
			st, valid = s.openState(tok)
		}
		if !valid || st.Method != c.req.Method || st.Name != tool {
			return nil, nil, jsonrpc.ErrInvalidParams.WithMessage("invalid requestState")
		}
		round = st.Round + 1
		c.param("inputResponses", &responses)
	} else if _, ok := c.params["inputResponses"]; ok {
		return nil, nil, jsonrpc.ErrInvalidParams.WithMessage("inputResponses without requestState")
	}
	missing := map[string]inputRequest{}
	for _, k := range keys {
		if _, ok := responses[k]; !ok {
			missing[k] = reqs[k]
		}
	}
	if len(missing) == 0 {
		return responses, nil, nil
	}
	if round > 8 {
		return nil, nil, jsonrpc.ErrInvalidParams.WithMessage("too many rounds without the input responses")
	}
	mk := make([]string, 0, len(missing))
	for k := range missing {
		mk = append(mk, k)
	}
	sort.Strings(mk)
	return nil, map[string]any{
		"resultType":    protocol.ResultTypeInputRequired,
		"inputRequests": missing,
		"requestState":  s.sealState(requestState{Method: c.req.Method, Name: tool, Keys: mk, Round: round}),
	}, nil
}

// checkInputCaps refuses input requests the client did not declare.
func checkInputCaps(c *call, reqs map[string]inputRequest) *jsonrpc.Error {
	need := map[string]any{}
	for _, r := range reqs {
		switch r.Method {
		case protocol.MethodElicitationCreate:
			url := false
			if p, ok := r.Params.(map[string]any); ok && p["mode"] == protocol.ElicitModeURL {
				url = true
			}
			e := c.caps.Elicitation
			if e == nil || url && e.URL == nil {
				if url {
					need["elicitation"] = map[string]any{"url": map[string]any{}}
				} else {
					need["elicitation"] = map[string]any{}
				}
			}
		case protocol.MethodSamplingCreateMessage:
			if c.caps.Sampling == nil {
				need["sampling"] = map[string]any{}
			}
		case protocol.MethodRootsList:
			if c.caps.Roots == nil {
				need["roots"] = map[string]any{}
			}
		}
	}
	if len(need) == 0 {
		return nil
	}
	if c.modern {
		return missingCapability(need)
	}
	return jsonrpc.ErrInvalidParams.WithMessage("the client did not declare the capability this tool needs").WithData(map[string]any{"requiredCapabilities": need})
}

func toolAskUser(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	reqs := map[string]inputRequest{"user": {Method: protocol.MethodElicitationCreate, Params: map[string]any{
		"message":         argString(args, "message", "What is your name?"),
		"requestedSchema": json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Your name"}},"required":["name"]}`),
	}}}
	got, early, err := s.gather(c, "ask_user", reqs)
	if err != nil || early != nil {
		return early, err
	}
	var er protocol.ElicitResult
	if json.Unmarshal(got["user"], &er) != nil {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("invalid elicitation response")
	}
	text := er.Action
	if er.Action == protocol.ElicitAccept {
		text = fmt.Sprintf("Hello, %v!", er.Content["name"])
	}
	res := textResult(text)
	res["structuredContent"] = map[string]any{"action": er.Action, "content": er.Content}
	return res, nil
}

func toolAskURL(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	p := map[string]any{"mode": protocol.ElicitModeURL, "message": "Please sign in", "url": "https://example.com/consent"}
	if !c.modern {
		p["elicitationId"] = "elicit-1"
	}
	got, early, err := s.gather(c, "ask_url", map[string]inputRequest{"consent": {Method: protocol.MethodElicitationCreate, Params: p}})
	if err != nil || early != nil {
		return early, err
	}
	var er protocol.ElicitResult
	if json.Unmarshal(got["consent"], &er) != nil {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("invalid elicitation response")
	}
	return textResult("url elicitation: " + er.Action), nil
}

func toolSample(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	prompt := argString(args, "prompt", "What is the capital of France?")
	reqs := map[string]inputRequest{"model": {Method: protocol.MethodSamplingCreateMessage, Params: map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": protocol.TextContent(prompt)}},
		"maxTokens": 100,
	}}}
	got, early, err := s.gather(c, "sample", reqs)
	if err != nil || early != nil {
		return early, err
	}
	var cr protocol.CreateMessageResult
	if json.Unmarshal(got["model"], &cr) != nil {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("invalid sampling response")
	}
	blocks, _ := cr.Blocks()
	var parts []string
	for _, b := range blocks {
		if b.Type == protocol.ContentText {
			parts = append(parts, b.Text)
		}
	}
	return textResult(fmt.Sprintf("%s said: %s", cr.Model, strings.Join(parts, " "))), nil
}

func toolRoots(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	got, early, err := s.gather(c, "roots", map[string]inputRequest{"roots": {Method: protocol.MethodRootsList, Params: map[string]any{}}})
	if err != nil || early != nil {
		return early, err
	}
	var lr protocol.ListRootsResult
	if json.Unmarshal(got["roots"], &lr) != nil {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("invalid roots response")
	}
	uris := make([]string, len(lr.Roots))
	for i, r := range lr.Roots {
		uris[i] = r.URI
	}
	res := textResult(strings.Join(uris, "\n"))
	res["structuredContent"] = map[string]any{"roots": uris}
	return res, nil
}

func toolLoadShed(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	if !c.modern {
		return textResult("served"), nil
	}
	raw, ok := c.params["requestState"]
	if !ok {
		return map[string]any{
			"resultType":   protocol.ResultTypeInputRequired,
			"requestState": s.sealState(requestState{Method: c.req.Method, Name: "load_shed", Nonce: s.newID("shed-")}),
		}, nil
	}
	var tok string
	if json.Unmarshal(raw, &tok) != nil {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("invalid requestState")
	}
	if st, valid := s.openState(tok); !valid || st.Name != "load_shed" {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("invalid requestState")
	}
	return textResult("served after load shedding"), nil
}
