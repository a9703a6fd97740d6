package testserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

type methodFunc func(s *Server, c *call) (map[string]any, *jsonrpc.Error)

// commonMethods are the methods both eras serve with the same shapes.
var commonMethods map[string]methodFunc

func init() {
	commonMethods = map[string]methodFunc{
		protocol.MethodToolsList:             (*Server).toolsList,
		protocol.MethodToolsCall:             (*Server).toolsCall,
		protocol.MethodPromptsList:           (*Server).promptsList,
		protocol.MethodPromptsGet:            (*Server).promptsGet,
		protocol.MethodResourcesList:         (*Server).resourcesList,
		protocol.MethodResourcesTemplateList: (*Server).templatesList,
		protocol.MethodResourcesRead:         (*Server).resourcesRead,
		protocol.MethodCompletionComplete:    (*Server).complete,
	}
	for m, h := range skillMethods {
		commonMethods[m] = h
	}
	for m, h := range eventMethods {
		commonMethods[m] = h
	}
}

const cursorPrefix = "page:"

func makeCursor(off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(off)))
}

func parseCursor(cur string) (int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cur)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return 0, false
	}
	n, err := strconv.Atoi(string(b[len(cursorPrefix):]))
	return n, err == nil && n >= 0
}

// page returns one page of items under key, honouring the cursor param,
// Options.PageSize and FaultRepeatCursor.
func (s *Server) page(c *call, key string, items []any) (map[string]any, *jsonrpc.Error) {
	off := 0
	var cur string
	if c.param("cursor", &cur) {
		n, ok := parseCursor(cur)
		if !ok || n > len(items) {
			return nil, jsonrpc.ErrInvalidParams.WithMessage("invalid cursor").WithData(map[string]any{"cursor": cur})
		}
		off = n
	}
	end := len(items)
	if ps := s.opts.PageSize; ps > 0 && off+ps < end {
		end = off + ps
	}
	res := map[string]any{key: items[off:end]}
	if end < len(items) {
		res["nextCursor"] = makeCursor(end)
	}
	if f := c.fault; f != nil && f.Kind == FaultRepeatCursor {
		if cur == "" {
			cur = makeCursor(off)
		}
		res["nextCursor"] = cur
	}
	return res, nil
}

type promptDef struct {
	name, description string
	args              []map[string]any
}

var prompts = []promptDef{
	{name: "greet", description: "Greets someone by name.", args: []map[string]any{
		{"name": "name", "description": "Who to greet", "required": true},
	}},
	{name: "simple", description: "A prompt without arguments."},
	{name: "ask_prompt", description: "Asks the user for a topic first (elicitation; MRTR in the modern era)."},
}

func (s *Server) promptsList(c *call) (map[string]any, *jsonrpc.Error) {
	defs := prompts
	if s.opts.Conformance {
		defs = append(append([]promptDef(nil), prompts...), fixturePrompts...)
	}
	items := make([]any, 0, len(defs))
	for _, p := range defs {
		m := map[string]any{"name": p.name, "description": p.description}
		if p.args != nil {
			m["arguments"] = p.args
		}
		items = append(items, m)
	}
	return s.page(c, "prompts", items)
}

func (s *Server) promptsGet(c *call) (map[string]any, *jsonrpc.Error) {
	var name string
	c.param("name", &name)
	var args map[string]string
	c.param("arguments", &args)
	if s.opts.Conformance {
		if res, err, ok := s.fixturePrompt(c, name, args); ok {
			return res, err
		}
	}
	switch name {
	case "greet":
		who, ok := args["name"]
		if !ok {
			return nil, jsonrpc.ErrInvalidParams.WithMessage("missing argument name")
		}
		return map[string]any{
			"description": "A greeting",
			"messages": []any{map[string]any{
				"role": "user", "content": protocol.TextContent("Hello, " + who + "!"),
			}},
		}, nil
	case "ask_prompt":
		got, early, err := s.gather(c, name, map[string]inputRequest{"topic": {Method: protocol.MethodElicitationCreate, Params: map[string]any{
			"message":         "Which topic?",
			"requestedSchema": json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}`),
		}}})
		if err != nil || early != nil {
			return early, err
		}
		var er protocol.ElicitResult
		if json.Unmarshal(got["topic"], &er) != nil {
			return nil, jsonrpc.ErrInvalidParams.WithMessage("invalid elicitation response")
		}
		return map[string]any{"messages": []any{map[string]any{
			"role": "user", "content": protocol.TextContent(fmt.Sprintf("Tell me about %v.", er.Content["topic"])),
		}}}, nil
	case "simple":
		return map[string]any{"messages": []any{map[string]any{
			"role": "user", "content": protocol.TextContent("Say something simple."),
		}}}, nil
	}
	return nil, jsonrpc.ErrInvalidParams.WithMessage("unknown prompt " + strconv.Quote(name)).WithData(map[string]any{"name": name})
}

type resourceDef struct {
	uri, name, mime, text, blob string
}

var resources = []resourceDef{
	{uri: "file:///hello.txt", name: "hello.txt", mime: "text/plain", text: "Hello, world!"},
	{uri: "file:///logo.png", name: "logo.png", mime: "image/png", blob: base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nfake"))},
	{uri: "file:///config.json", name: "config.json", mime: "application/json", text: `{"debug":false}`},
}

func (s *Server) resourcesList(c *call) (map[string]any, *jsonrpc.Error) {
	defs := resources
	if s.opts.Conformance {
		defs = append(append([]resourceDef(nil), resources...), fixtureResources...)
	}
	items := make([]any, 0, len(defs))
	for _, r := range defs {
		items = append(items, map[string]any{"uri": r.uri, "name": r.name, "mimeType": r.mime})
	}
	return s.page(c, "resources", items)
}

func (s *Server) templatesList(c *call) (map[string]any, *jsonrpc.Error) {
	items := []any{map[string]any{
		"uriTemplate": "file:///{path}", "name": "file", "description": "Any file by path", "mimeType": "text/plain",
	}}
	if s.opts.Conformance {
		items = append(items, map[string]any{
			"uriTemplate": "test://template/{id}/data", "name": "template", "description": "Data by id", "mimeType": "application/json",
		})
	}
	return s.page(c, "resourceTemplates", items)
}

func (s *Server) resourcesRead(c *call) (map[string]any, *jsonrpc.Error) {
	var uri string
	c.param("uri", &uri)
	if res, ok := s.skillRead(uri); ok {
		return res, nil
	}
	for _, r := range resources {
		if r.uri == uri {
			return resourceResult(r), nil
		}
	}
	if s.opts.Conformance {
		if res, ok := fixtureRead(uri); ok {
			return res, nil
		}
	}
	if uri == secretURI {
		got, early, err := s.gather(c, uri, map[string]inputRequest{"password": {Method: protocol.MethodElicitationCreate, Params: map[string]any{
			"message":         "Password for the secret?",
			"requestedSchema": json.RawMessage(`{"type":"object","properties":{"password":{"type":"string"}},"required":["password"]}`),
		}}})
		if err != nil || early != nil {
			return early, err
		}
		var er protocol.ElicitResult
		if json.Unmarshal(got["password"], &er) != nil || er.Action != protocol.ElicitAccept {
			return nil, jsonrpc.ErrInvalidParams.WithMessage("the secret needs a password")
		}
		return map[string]any{"contents": []any{map[string]any{"uri": uri, "mimeType": "text/plain", "text": "the secret is 42"}}}, nil
	}
	if path, ok := strings.CutPrefix(uri, "file:///"); ok && path != "" && !strings.HasPrefix(path, "missing") {
		return map[string]any{"contents": []any{map[string]any{
			"uri": uri, "mimeType": "text/plain", "text": "contents of " + path,
		}}}, nil
	}
	if c.modern {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("resource not found").WithData(map[string]any{"uri": uri})
	}
	return nil, jsonrpc.ErrResourceNotFound.WithMessage("resource not found").WithData(map[string]any{"uri": uri})
}

// secretURI is a resource whose read needs an elicitation (MRTR in the
// modern era).
const secretURI = "file:///secret.txt"

var (
	completionNames = []string{"alice", "albert", "bob", "carol"}
	completionPaths = []string{"README.md", "config.json", "hello.txt", "main.go"}
)

func (s *Server) complete(c *call) (map[string]any, *jsonrpc.Error) {
	var ref struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	var arg struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	if !c.param("ref", &ref) || !c.param("argument", &arg) {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("completion needs ref and argument")
	}
	var pool []string
	switch {
	case ref.Type == "ref/prompt" && ref.Name == "greet" && arg.Name == "name":
		pool = completionNames
	case ref.Type == "ref/resource" && ref.URI == "file:///{path}" && arg.Name == "path":
		pool = completionPaths
	case ref.Type != "ref/prompt" && ref.Type != "ref/resource":
		return nil, jsonrpc.ErrInvalidParams.WithMessage("unknown ref type")
	}
	values := []string{}
	for _, v := range pool {
		if strings.HasPrefix(v, arg.Value) {
			values = append(values, v)
		}
	}
	sort.Strings(values)
	return map[string]any{"completion": map[string]any{"values": values, "total": len(values), "hasMore": false}}, nil
}
