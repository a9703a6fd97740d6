package testserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// The conformance fixtures: the tools, prompts and resources the MCP
// conformance suite's server scenarios call by name. They are served only
// with Options.Conformance, so the default lists stay small.

const (
	// redPixelPNG is a 1x1 red PNG.
	redPixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	// silentWAV is a 44-byte WAV header with no samples.
	silentWAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="
)

var noArgs = `{"type":"object","properties":{}}`

var fixtureTools []*toolDef

func init() {
	fixtureTools = slices.Concat(contentFixtures(), inputFixtures(), otherFixtures())
}

// contentFixtures returns the tools that return each kind of content, log, fail and report progress.
func contentFixtures() []*toolDef {
	return []*toolDef{
		{name: "test_simple_text", description: "Returns simple text.", input: noArgs, run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
			return textResult("This is a simple text response for testing."), nil
		}},
		{name: "test_image_content", description: "Returns an image.", input: noArgs, run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
			return map[string]any{"content": []any{map[string]any{"type": "image", "data": redPixelPNG, "mimeType": "image/png"}}}, nil
		}},
		{name: "test_audio_content", description: "Returns audio.", input: noArgs, run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
			return map[string]any{"content": []any{map[string]any{"type": "audio", "data": silentWAV, "mimeType": "audio/wav"}}}, nil
		}},
		{name: "test_embedded_resource", description: "Returns an embedded resource.", input: noArgs, run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
			return map[string]any{"content": []any{map[string]any{"type": "resource", "resource": map[string]any{
				"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content.",
			}}}}, nil
		}},
		{name: "test_multiple_content_types", description: "Returns text, image and resource.", input: noArgs, run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
			return map[string]any{"content": []any{
				protocol.TextContent("Multiple content types test:"),
				map[string]any{"type": "image", "data": redPixelPNG, "mimeType": "image/png"},
				map[string]any{"type": "resource", "resource": map[string]any{"uri": "test://mixed-content-resource", "mimeType": "application/json", "text": `{"test":"data","value":123}`}},
			}}, nil
		}},
		{name: "test_tool_with_logging", description: "Sends three info logs.", input: noArgs, run: fixtureLogging},
		{name: "test_error_handling", description: "Returns a tool error.", input: noArgs, run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
			res := textResult("This tool intentionally returns an error for testing")
			res["isError"] = true
			return res, nil
		}},
		{name: "test_tool_with_progress", description: "Reports progress 0, 50, 100.", input: noArgs, run: fixtureProgress},
	}
}

// inputFixtures returns the tools that ask the client for input (sampling, elicitation, MRTR).
func inputFixtures() []*toolDef {
	return []*toolDef{
		{name: "test_sampling", description: "Asks the client's model.", input: `{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`, run: fixtureSampling},
		{name: "test_elicitation", description: "Asks the user.", input: `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`, run: fixtureElicitation},
		{name: "test_elicitation_sep1034_defaults", description: "Elicitation with defaults.", input: noArgs, run: fixtureElicitSchema(`{"type":"object","properties":{
			"name":{"type":"string","default":"John Doe"},
			"age":{"type":"integer","default":30},
			"score":{"type":"number","default":95.5},
			"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
			"verified":{"type":"boolean","default":true}}}`)},
		{name: "test_elicitation_sep1330_enums", description: "Elicitation with every enum form.", input: noArgs, run: fixtureElicitSchema(`{"type":"object","properties":{
			"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
			"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
			"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
			"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},
			"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`)},
		{name: "test_input_required_result_elicitation", description: "MRTR: one elicitation, no requestState.", input: noArgs, run: fixtureStateless("user_name", elicitReq("What is your name?", "name", "string"), func(r json.RawMessage) string {
			var er protocol.ElicitResult
			_ = json.Unmarshal(r, &er)
			return fmt.Sprintf("Hello, %v!", er.Content["name"])
		})},
		{name: "test_input_required_result_sampling", description: "MRTR: one sampling request.", input: noArgs, run: fixtureStateless("capital_question", inputRequest{Method: protocol.MethodSamplingCreateMessage, Params: map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": protocol.TextContent("What is the capital of France?")}}, "maxTokens": 100,
		}}, func(r json.RawMessage) string { return "Sampling response: " + samplingText(r) })},
		{name: "test_input_required_result_list_roots", description: "MRTR: one roots/list request.", input: noArgs, run: fixtureStateless("client_roots", inputRequest{Method: protocol.MethodRootsList, Params: map[string]any{}}, func(r json.RawMessage) string {
			var lr protocol.ListRootsResult
			_ = json.Unmarshal(r, &lr)
			uris := make([]string, len(lr.Roots))
			for i, root := range lr.Roots {
				uris[i] = root.URI
			}
			return "Roots: " + strings.Join(uris, ", ")
		})},
		{name: "test_input_required_result_request_state", description: "MRTR with requestState.", input: noArgs, run: fixtureStateful(map[string]inputRequest{"confirm": elicitReq("Please confirm", "ok", "boolean")}, "state-ok: confirmed")},
		{name: "test_input_required_result_multiple_inputs", description: "MRTR with three input requests.", input: noArgs, run: fixtureStateful(map[string]inputRequest{
			"user_name": elicitReq("What is your name?", "name", "string"),
			"greeting": {Method: protocol.MethodSamplingCreateMessage, Params: map[string]any{
				"messages": []any{map[string]any{"role": "user", "content": protocol.TextContent("Generate a greeting")}}, "maxTokens": 50,
			}},
			"client_roots": {Method: protocol.MethodRootsList, Params: map[string]any{}},
		}, "all inputs received")},
		{name: "test_input_required_result_multi_round", description: "MRTR over two rounds.", input: noArgs, run: fixtureMultiRound},
	}
}

// otherFixtures returns the capability, streaming, logging, change-notification and schema tools.
func otherFixtures() []*toolDef {
	return []*toolDef{
		{name: "test_missing_capability", description: "Needs the sampling capability (-32021 without it).", input: noArgs, run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
			if err := checkInputCaps(c, map[string]inputRequest{"x": {Method: protocol.MethodSamplingCreateMessage}}); err != nil {
				return nil, err
			}
			return textResult("sampling capability present"), nil
		}},
		{name: "test_streaming_elicitation", description: "Streams progress, then asks for input.", input: noArgs, run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
			c.progress(1, 2, "preparing")
			got, early, err := s.gather(c, "test_streaming_elicitation", map[string]inputRequest{"answer": elicitReq("Anything to add?", "text", "string")})
			if err != nil || early != nil {
				return early, err
			}
			return textResult("got " + string(got["answer"])), nil
		}},
		{name: "test_logging_tool", description: "Logs at info (only with a logLevel).", input: noArgs, run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
			c.log(protocol.LevelInfo, "test_logging_tool ran")
			return textResult("logged"), nil
		}},
		{name: "test_input_required_result_capabilities", description: "Asks only for what the client declared.", input: noArgs, run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
			reqs := map[string]inputRequest{}
			if c.caps.Elicitation != nil {
				reqs["user_name"] = elicitReq("What is your name?", "name", "string")
			}
			if c.caps.Sampling != nil {
				reqs["greeting"] = inputRequest{Method: protocol.MethodSamplingCreateMessage, Params: map[string]any{
					"messages": []any{map[string]any{"role": "user", "content": protocol.TextContent("Generate a greeting")}}, "maxTokens": 50,
				}}
			}
			if c.caps.Roots != nil {
				reqs["client_roots"] = inputRequest{Method: protocol.MethodRootsList, Params: map[string]any{}}
			}
			if len(reqs) == 0 {
				return textResult("no input capabilities declared"), nil
			}
			return fixtureStateful(reqs, "capabilities respected")(s, c, args)
		}},
		{name: "test_trigger_tool_change", description: "Fires notifications/tools/list_changed.", input: noArgs, run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
			s.NotifyToolsChanged()
			return textResult("tools changed"), nil
		}},
		{name: "test_trigger_prompt_change", description: "Fires notifications/prompts/list_changed.", input: noArgs, run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
			s.NotifyPromptsChanged()
			return textResult("prompts changed"), nil
		}},
		{name: "json_schema_2020_12_tool", description: "Tool with JSON Schema 2020-12 features.", input: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`,
			run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
				return textResult("ok"), nil
			}},
		{name: "test_input_required_result_tampered_state", description: "MRTR with signed requestState.", input: noArgs, run: fixtureStateful(map[string]inputRequest{"confirm": elicitReq("Please confirm", "ok", "boolean")}, "state-ok")},
	}
}

func elicitReq(msg, prop, typ string) inputRequest {
	return inputRequest{Method: protocol.MethodElicitationCreate, Params: map[string]any{
		"message":         msg,
		"requestedSchema": json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{%q:{"type":%q}},"required":[%q]}`, prop, typ, prop)),
	}}
}

func samplingText(r json.RawMessage) string {
	var cr protocol.CreateMessageResult
	_ = json.Unmarshal(r, &cr)
	blocks, _ := cr.Blocks()
	var parts []string
	for _, b := range blocks {
		if b.Type == protocol.ContentText {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, " ")
}

// sleepCtx waits d or until the call ends; false means it ended.
func sleepCtx(c *call, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.ctx.Done():
		return false
	}
}

func fixtureLogging(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 && !sleepCtx(c, 50*time.Millisecond) {
			return nil, jsonrpc.ErrRequestCancelled
		}
		// Legacy sessions get the logs unless they asked for less.
		if !c.modern && c.sess != nil && c.sess.level() == "" {
			c.notify(protocol.NotificationMessage, map[string]any{"level": protocol.LevelInfo, "logger": "testserver", "data": msg})
			continue
		}
		c.log(protocol.LevelInfo, msg)
	}
	return textResult("Tool with logging executed successfully"), nil
}

func fixtureProgress(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	for i, p := range []float64{0, 50, 100} {
		if i > 0 && !sleepCtx(c, 50*time.Millisecond) {
			return nil, jsonrpc.ErrRequestCancelled
		}
		c.progress(p, 100, "")
	}
	return textResult("Tool with progress executed successfully"), nil
}

func fixtureSampling(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	got, early, err := s.gather(c, "test_sampling", map[string]inputRequest{"sample": {Method: protocol.MethodSamplingCreateMessage, Params: map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": protocol.TextContent(argString(args, "prompt", ""))}},
		"maxTokens": 100,
	}}})
	if err != nil || early != nil {
		return early, err
	}
	return textResult("LLM response: " + samplingText(got["sample"])), nil
}

func fixtureElicitation(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	got, early, err := s.gather(c, "test_elicitation", map[string]inputRequest{"user": {Method: protocol.MethodElicitationCreate, Params: map[string]any{
		"message":         argString(args, "message", ""),
		"requestedSchema": json.RawMessage(`{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`),
	}}})
	if err != nil || early != nil {
		return early, err
	}
	var er protocol.ElicitResult
	_ = json.Unmarshal(got["user"], &er)
	content, _ := json.Marshal(er.Content)
	return textResult(fmt.Sprintf("User response: <action: %s, content: %s>", er.Action, content)), nil
}

func fixtureElicitSchema(schema string) toolFunc {
	return func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
		var compact strings.Builder
		for _, line := range strings.Split(schema, "\n") {
			compact.WriteString(strings.TrimSpace(line))
		}
		got, early, err := s.gather(c, "elicit", map[string]inputRequest{"form": {Method: protocol.MethodElicitationCreate, Params: map[string]any{
			"message": "Please review the defaults", "requestedSchema": json.RawMessage(compact.String()),
		}}})
		if err != nil || early != nil {
			return early, err
		}
		var er protocol.ElicitResult
		_ = json.Unmarshal(got["form"], &er)
		content, _ := json.Marshal(er.Content)
		return textResult(fmt.Sprintf("Elicitation completed: action=%s, content=%s", er.Action, content)), nil
	}
}

// fixtureStateless is an MRTR tool without requestState: it re-asks until
// inputResponses holds key (extra keys are ignored).
func fixtureStateless(key string, req inputRequest, done func(json.RawMessage) string) toolFunc {
	return func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
		if err := checkInputCaps(c, map[string]inputRequest{key: req}); err != nil {
			return nil, err
		}
		if !c.modern {
			raw, err := c.ask(req.Method, req.Params)
			if err != nil {
				return nil, err
			}
			return textResult(done(raw)), nil
		}
		var responses map[string]json.RawMessage
		if raw, ok := c.params["inputResponses"]; ok && json.Unmarshal(raw, &responses) != nil {
			return nil, jsonrpc.ErrInvalidParams.WithMessage("inputResponses must be an object")
		}
		if r, ok := responses[key]; ok && validInputResponse(req.Method, r) {
			return textResult(done(r)), nil
		}
		return map[string]any{"resultType": protocol.ResultTypeInputRequired, "inputRequests": map[string]inputRequest{key: req}}, nil
	}
}

// validInputResponse checks the shape of one input response.
func validInputResponse(method string, raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	switch method {
	case protocol.MethodElicitationCreate:
		_, ok := m["action"]
		return ok
	case protocol.MethodSamplingCreateMessage:
		_, ok := m["content"]
		return ok
	case protocol.MethodRootsList:
		_, ok := m["roots"]
		return ok
	}
	return true
}

// fixtureStateful is an MRTR tool with signed requestState.
func fixtureStateful(reqs map[string]inputRequest, text string) toolFunc {
	return func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
		var name string
		c.param("name", &name)
		got, early, err := s.gather(c, name, reqs)
		if err != nil || early != nil {
			return early, err
		}
		keys := make([]string, 0, len(got))
		for k := range got {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return textResult(text + " (" + strings.Join(keys, ", ") + ")"), nil
	}
}

func fixtureMultiRound(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	const name = "test_input_required_result_multi_round"
	step1 := elicitReq("Step 1: What is your name?", "name", "string")
	step2 := elicitReq("Step 2: What is your favorite color?", "color", "string")
	if err := checkInputCaps(c, map[string]inputRequest{"step1": step1}); err != nil {
		return nil, err
	}
	if !c.modern {
		for _, r := range []inputRequest{step1, step2} {
			if _, err := c.ask(r.Method, r.Params); err != nil {
				return nil, err
			}
		}
		return textResult("multi-round complete"), nil
	}
	ask := func(round int, key string, r inputRequest) map[string]any {
		return map[string]any{
			"resultType":    protocol.ResultTypeInputRequired,
			"inputRequests": map[string]inputRequest{key: r},
			"requestState":  s.sealState(requestState{Method: c.req.Method, Name: name, Keys: []string{key}, Round: round}),
		}
	}
	raw, ok := c.params["requestState"]
	if !ok {
		return ask(1, "step1", step1), nil
	}
	var tok string
	_ = json.Unmarshal(raw, &tok)
	st, valid := s.openState(tok)
	if !valid || st.Name != name {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("invalid requestState")
	}
	var responses map[string]json.RawMessage
	c.param("inputResponses", &responses)
	switch st.Round {
	case 1:
		if _, ok := responses["step1"]; !ok {
			return ask(1, "step1", step1), nil
		}
		return ask(2, "step2", step2), nil
	default:
		if _, ok := responses["step2"]; !ok {
			return ask(2, "step2", step2), nil
		}
		return textResult("multi-round complete"), nil
	}
}

var fixturePrompts = []promptDef{
	{name: "test_simple_prompt", description: "A simple prompt."},
	{name: "test_prompt_with_arguments", description: "A prompt with two arguments.", args: []map[string]any{
		{"name": "arg1", "description": "First test argument", "required": true},
		{"name": "arg2", "description": "Second test argument", "required": true},
	}},
	{name: "test_prompt_with_embedded_resource", description: "A prompt embedding a resource.", args: []map[string]any{
		{"name": "resourceUri", "description": "URI of the resource to embed", "required": true},
	}},
	{name: "test_prompt_with_image", description: "A prompt with an image."},
	{name: "test_input_required_result_prompt", description: "A prompt that needs elicitation first."},
}

// fixturePrompt serves the conformance prompts; ok is false for others.
func (s *Server) fixturePrompt(c *call, name string, args map[string]string) (map[string]any, *jsonrpc.Error, bool) {
	msg := func(content any) map[string]any { return map[string]any{"role": "user", "content": content} }
	switch name {
	case "test_simple_prompt":
		return map[string]any{"messages": []any{msg(protocol.TextContent("This is a simple prompt for testing."))}}, nil, true
	case "test_prompt_with_arguments":
		return map[string]any{"messages": []any{msg(protocol.TextContent(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])))}}, nil, true
	case "test_prompt_with_embedded_resource":
		return map[string]any{"messages": []any{
			msg(map[string]any{"type": "resource", "resource": map[string]any{"uri": args["resourceUri"], "mimeType": "text/plain", "text": "Embedded resource content for testing."}}),
			msg(protocol.TextContent("Please process the embedded resource above.")),
		}}, nil, true
	case "test_prompt_with_image":
		return map[string]any{"messages": []any{
			msg(map[string]any{"type": "image", "data": redPixelPNG, "mimeType": "image/png"}),
			msg(protocol.TextContent("Please analyze the image above.")),
		}}, nil, true
	case "test_input_required_result_prompt":
		run := fixtureStateless("user_context", elicitReq("What context should the prompt use?", "context", "string"), func(r json.RawMessage) string {
			var er protocol.ElicitResult
			_ = json.Unmarshal(r, &er)
			return fmt.Sprintf("Use this context: %v", er.Content["context"])
		})
		res, err := run(s, c, nil)
		if err != nil || res["resultType"] != nil {
			return res, err, true
		}
		return map[string]any{"messages": []any{msg(res["content"].([]any)[0])}}, nil, true
	}
	return nil, nil, false
}

var fixtureResources = []resourceDef{
	{uri: "test://static-text", name: "static-text", mime: "text/plain", text: "This is the content of the static text resource."},
	{uri: "test://static-binary", name: "static-binary", mime: "image/png", blob: redPixelPNG},
	{uri: "test://watched-resource", name: "watched-resource", mime: "text/plain", text: "Watched resource content."},
}

// fixtureRead serves the conformance resources; ok is false for others.
func fixtureRead(uri string) (map[string]any, bool) {
	for _, r := range fixtureResources {
		if r.uri == uri {
			return resourceResult(r), true
		}
	}
	if id, ok := strings.CutPrefix(uri, "test://template/"); ok {
		if id, ok = strings.CutSuffix(id, "/data"); ok && id != "" && !strings.Contains(id, "/") {
			text, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return map[string]any{"contents": []any{map[string]any{"uri": uri, "mimeType": "application/json", "text": string(text)}}}, true
		}
	}
	return nil, false
}

func resourceResult(r resourceDef) map[string]any {
	rc := map[string]any{"uri": r.uri, "mimeType": r.mime}
	if r.blob != "" {
		rc["blob"] = r.blob
	} else {
		rc["text"] = r.text
	}
	return map[string]any{"contents": []any{rc}}
}
