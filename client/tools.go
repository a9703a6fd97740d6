package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// toolInfo is what calls read of one tool of the current connection. It
// is never changed once in the registry: a listing that changes any of it
// replaces it, so a call keeps reading the one it looked up; a listing
// that changes none of it keeps it (with its compiled schema) and
// allocates nothing.
type toolInfo struct {
	name        string
	annotations *protocol.ToolAnnotations
	execution   *protocol.ToolExecution
	schemaRaw   json.RawMessage         // the outputSchema, raw
	headers     []transport.ParamHeader // valid x-mcp-header annotations
	out         compiledSchema
}

// compiledSchema is a tool's outputSchema, compiled on first use.
type compiledSchema struct {
	once   sync.Once
	schema *jsonschema.Schema // nil when the tool has none
	graph  *schemaGraph       // schema's graph, for the cost of a validation
	err    error
}

// sameAs reports whether info already says what t and headers say.
func (info *toolInfo) sameAs(t *protocol.Tool, headers []transport.ParamHeader) bool {
	return sameAnnotations(info.annotations, t.Annotations) &&
		(info.execution == nil) == (t.Execution == nil) && (info.execution == nil || *info.execution == *t.Execution) &&
		bytes.Equal(info.schemaRaw, t.OutputSchema) &&
		slices.EqualFunc(info.headers, headers, func(a, b transport.ParamHeader) bool { return a.Name == b.Name && slices.Equal(a.Path, b.Path) })
}

func sameAnnotations(a, b *protocol.ToolAnnotations) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Title == b.Title && sameBool(a.ReadOnlyHint, b.ReadOnlyHint) && sameBool(a.DestructiveHint, b.DestructiveHint) &&
		sameBool(a.IdempotentHint, b.IdempotentHint) && sameBool(a.OpenWorldHint, b.OpenWorldHint)
}

func sameBool(a, b *bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// toolRegistry caches tool metadata per connection. A tools list_changed
// notification resets it; a full walk forgets the tools that no listing
// since its start listed (a server that sends no list_changed).
type toolRegistry struct {
	mu       sync.Mutex
	m        map[string]*toolInfo // guarded by mu
	dropped  map[string]error     // guarded by mu; tools left out of listings, with the reason
	dropSeq  map[string]uint64    // guarded by mu; the seq of the drop of each tool in dropped
	complete bool                 // guarded by mu; a full walk ended since the last reset
	gen      uint64               // guarded by mu; bumped by reset
	seq      uint64               // guarded by mu; bumped by add
	listed   map[string]uint64    // guarded by mu; the seq of the add of each tool in m
}

func (r *toolRegistry) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m = nil
	r.dropped = nil
	r.dropSeq = nil
	r.listed = nil
	r.complete = false
	r.gen++
}

// drop records a tool left out of a listing.
func (r *toolRegistry) drop(name string, why error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dropped == nil {
		r.dropped = make(map[string]error)
		r.dropSeq = make(map[string]uint64)
	}
	r.seq++
	r.dropped[name] = why
	r.dropSeq[name] = r.seq
	delete(r.m, name)
	delete(r.listed, name)
}

// droppedTools returns a copy of the dropped tools.
func (r *toolRegistry) droppedTools() map[string]error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.dropped) == 0 {
		return nil
	}
	return maps.Clone(r.dropped)
}

// start returns what a walk starting now passes to markComplete.
func (r *toolRegistry) start() (gen, seq uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gen, r.seq
}

func (r *toolRegistry) add(t protocol.Tool, headers []transport.ParamHeader) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[string]*toolInfo)
		r.listed = make(map[string]uint64)
	}
	delete(r.dropped, t.Name)
	delete(r.dropSeq, t.Name)
	r.seq++
	r.listed[t.Name] = r.seq
	if old, ok := r.m[t.Name]; ok && old.sameAs(&t, headers) {
		return
	}
	r.m[t.Name] = &toolInfo{name: t.Name, annotations: t.Annotations, execution: t.Execution, schemaRaw: t.OutputSchema, headers: headers}
}

// markComplete records the end of a full walk that start returned gen
// and seq for: unless the registry was reset since, the tools no listing
// since then listed are gone from the server's list, and are forgotten,
// with the drops of those no listing since then dropped.
func (r *toolRegistry) markComplete(gen, seq uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gen != gen {
		return
	}
	for name, s := range r.listed {
		if s <= seq {
			delete(r.m, name)
			delete(r.listed, name)
		}
	}
	for name, s := range r.dropSeq {
		if s <= seq {
			delete(r.dropped, name)
			delete(r.dropSeq, name)
		}
	}
	r.complete = true
}

func (r *toolRegistry) lookup(name string) (info *toolInfo, complete bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[name], r.complete
}

func (c *Client) listTools(ctx context.Context, cursor *string) (*protocol.ListToolsResult, error) {
	if err := c.require(protocol.MethodToolsList, "tools", c.ServerCapabilities().Tools != nil); err != nil {
		return nil, err
	}
	r, err := listPage[protocol.ListToolsResult](ctx, c, protocol.MethodToolsList, cursor)
	if err != nil {
		return nil, err
	}
	kept := r.Tools[:0:0]
	for _, t := range r.Tools {
		var headers []transport.ParamHeader
		if c.isHTTP() && c.isModern() {
			h, err := transport.ValidateToolHeaders(t.InputSchema)
			if err != nil {
				c.cfg.logger.Warn("conduit: dropping tool with invalid x-mcp-header", "tool", t.Name, "reason", err)
				c.tools.drop(t.Name, err)
				continue
			}
			headers = h
		}
		c.tools.add(t, headers)
		kept = append(kept, t)
	}
	r.Tools = kept
	return r, nil
}

// Tools iterates over every tool, walking the pages. An error ends the
// iteration: it is yielded with the zero Tool. A server that repeats a
// cursor, or sends more than 1000 pages, yields an [*Error] of kind
// [KindProtocol].
//
// On modern Streamable HTTP, tools whose x-mcp-header annotations are
// invalid are left out, as the specification requires; each is logged as
// a warning and listed by [Client.DroppedTools].
func (c *Client) Tools(ctx context.Context) iter.Seq2[protocol.Tool, error] {
	inner := walk(ctx, c, protocol.MethodToolsList, func(ctx context.Context, cur *string) ([]protocol.Tool, *string, error) {
		r, err := c.listTools(ctx, cur)
		if err != nil {
			return nil, nil, err
		}
		return r.Tools, r.NextCursor, nil
	})
	return func(yield func(protocol.Tool, error) bool) {
		gen, seq := c.tools.start()
		failed := false
		for t, err := range inner {
			if err != nil {
				failed = true
			}
			if !yield(t, err) {
				return
			}
		}
		if !failed {
			c.tools.markComplete(gen, seq)
		}
	}
}

// DroppedTools returns the tools left out of listings because their
// x-mcp-header annotations are invalid (modern Streamable HTTP only, as
// the specification requires), keyed by name, with the reason. Each drop
// is also logged as a warning ([WithLogger]). The record covers the
// listings since connect or since the last tools list_changed
// notification; a tool listed valid again leaves it, and so does one a
// complete [Client.Tools] walk no longer lists. It is nil when nothing
// was dropped.
func (c *Client) DroppedTools() map[string]error { return c.tools.droppedTools() }

// loadTools walks the whole tools list so the registry knows every tool.
func (c *Client) loadTools(ctx context.Context) error {
	for _, err := range c.Tools(ctx) {
		if err != nil {
			return err
		}
	}
	return nil
}

// annotationWait bounds the tools listing a replay decision makes for a
// tool that was never listed (see replaySafety).
const annotationWait = 15 * time.Second

// replaySafety returns what [ReplaySafe] asks, when a tools/call of tool
// name may have run without an answer: whether the tool's annotations say
// readOnlyHint or idempotentHint true, so that sending the call twice
// does no harm, and why (or why not) in words. A tool the registry does
// not know yet (never listed, or the list changed since) is looked up
// with one tools/list walk first, on the caller's goroutine: the caller
// is waiting for the heal anyway, the listing goes out after it, bounded
// by ctx and annotationWait, and a call that is not lost never pays for
// it. The listing stays cached for the next decision (until a tools
// list_changed notification).
func (c *Client) replaySafety(name string) func(ctx context.Context) (bool, string) {
	return func(ctx context.Context) (bool, string) {
		info, complete := c.tools.lookup(name)
		if info == nil && !complete {
			lctx, cancel := context.WithTimeout(ctx, annotationWait)
			err := c.loadTools(lctx)
			cancel()
			if err != nil {
				return false, "tool " + name + " was never listed and listing the tools failed (" + err.Error() + "), so its annotations are unknown"
			}
			info, _ = c.tools.lookup(name)
		}
		if info == nil {
			return false, "tool " + name + " is not in the server's tools list, so its annotations are unknown"
		}
		a := info.annotations
		switch {
		case a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint:
			return true, "tool " + name + " is annotated readOnlyHint"
		case a != nil && a.IdempotentHint != nil && *a.IdempotentHint:
			return true, "tool " + name + " is annotated idempotentHint"
		}
		return false, "tool " + name + " is not annotated readOnlyHint or idempotentHint"
	}
}

// toolInfo returns the metadata of tool name, walking the tools list when
// the registry does not have it yet (or refresh is set).
func (c *Client) toolInfo(ctx context.Context, name string, refresh bool) (*toolInfo, error) {
	if !refresh {
		info, complete := c.tools.lookup(name)
		if info != nil || complete {
			// A complete registry without the tool: the tool does not
			// exist (a tools list_changed notification resets it).
			return info, nil
		}
	}
	if refresh {
		c.tools.reset()
	}
	if err := c.loadTools(ctx); err != nil {
		return nil, err
	}
	info, _ := c.tools.lookup(name)
	return info, nil
}

// CallOption tunes one call ([Client.CallTool] and friends).
type CallOption interface {
	applyCall(*callConfig)
}

type callOptionFunc func(*callConfig)

func (f callOptionFunc) applyCall(c *callConfig) { f(c) }

type callConfig struct {
	progress func(protocol.ProgressParams)
	timeout  time.Duration // the deadline; 0: the client's default
	idle     time.Duration // the idle timeout; 0: the client's default
	task     bool
	replay   engine.ReplayPolicy        // ReplayDefault: the client's
	replayed *bool                      // set when the result came from a replay
	meta     map[string]json.RawMessage // WithCallMeta, encoded
	headers  http.Header                // WithCallHeaders
	optErr   error                      // a call option that cannot apply
	manual   bool                       // WithManualInput
	ident    *engine.Identity           // WithClientIdentity
}

func newCallConfig(opts []CallOption) callConfig {
	if len(opts) == 0 {
		return callConfig{} // no escape through applyCall: no allocation
	}
	var cc callConfig
	for _, o := range opts {
		if o != nil {
			o.applyCall(&cc)
		}
	}
	return cc
}

func (cc *callConfig) sessionOptions() *engine.CallOptions {
	o := &engine.CallOptions{Progress: cc.progress, Timeout: cc.timeout, IdleTimeout: cc.idle, Replay: cc.replay,
		Meta: cc.meta, Headers: cc.headers, ManualInput: cc.manual}
	if p := cc.replayed; p != nil {
		*p = false
		o.OnReplay = func() { *p = true }
	}
	return o
}

// WithProgress receives the server's progress notifications for the call,
// in order, on the session's dispatcher goroutine (f must not block for
// long). Progress restarts the idle timeout ([WithIdleTimeout]), never the
// deadline ([WithTimeout]). Default: none.
func WithProgress(f func(protocol.ProgressParams)) CallOption {
	return callOptionFunc(func(c *callConfig) { c.progress = f })
}

// WithTimeout is this call's deadline: a hard limit counted from the
// moment the call starts (a reconnection it waits for, the write and a
// server slow to send its headers or body included), which progress does
// not extend. When it elapses the call fails with an [*Error] of kind
// [KindTimeout] and the server is told the request is cancelled. It
// overrides the client's default ([WithCallDefaults]); zero or negative
// selects that default, which is no deadline beyond ctx's.
func WithTimeout(d time.Duration) CallOption {
	return callOptionFunc(func(c *callConfig) { c.timeout = max(d, 0) })
}

// WithIdleTimeout bounds this call's silence: it elapses when the server
// sent neither the response nor a progress notification for d (counted
// from the call's start, then from the last progress), so a long tool that
// reports progress runs as long as it needs. A progress token is sent
// with the request so that the server can report it, with or without
// [WithProgress]. It overrides the client's default
// ([WithCallDefaults]); zero or negative selects that default, which is
// none.
func WithIdleTimeout(d time.Duration) CallOption {
	return callOptionFunc(func(c *callConfig) { c.idle = max(d, 0) })
}

// WithTaskAugmentation(true) asks for this tool call to run as a task
// where the era needs a per-request opt-in: in 2025-11-25 the call is
// task-augmented when the server and the tool support it. In the modern
// era the tasks extension ([CapabilityOptions.TasksExtension]) has no
// opt-in: the server decides for every tools/call, so this call option
// changes nothing there. [Client.CallTool] polls a task and returns its
// final result; [Client.StartTool] returns the task instead. Default:
// false.
func WithTaskAugmentation(augment bool) CallOption {
	return callOptionFunc(func(c *callConfig) { c.task = augment })
}

// marshalArgs encodes tool arguments; they must encode as a JSON object
// (or be nil). A string, []byte or json.RawMessage is taken as JSON text.
func marshalArgs(args any) (json.RawMessage, error) {
	var raw json.RawMessage
	encoded := false // raw is json.Marshal's output, hence valid JSON
	switch a := args.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		raw = a
	case []byte:
		raw = a
	case string:
		raw = json.RawMessage(a)
	default:
		encoded = true
		b, err := json.Marshal(args)
		if err != nil {
			return nil, &handler.ValidationError{Subject: "tool arguments", Problems: []string{"not JSON-encodable"}, Err: err}
		}
		raw = b
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		// A nil (or empty) json.RawMessage, []byte or string, like a nil
		// map or a JSON null, means "no arguments".
		return nil, nil
	}
	// Neither check allocates; only a failure decodes, for the error's
	// detail.
	if trimmed[0] != '{' || !encoded && !json.Valid(trimmed) {
		var obj map[string]json.RawMessage
		err := json.Unmarshal(raw, &obj)
		return nil, &handler.ValidationError{Subject: "tool arguments", Problems: []string{notObject(trimmed)}, Err: err}
	}
	return raw, nil
}

// notObject says what JSON text that is not an object is instead.
func notObject(b []byte) string {
	if !json.Valid(b) {
		return "not valid JSON (want a JSON object)"
	}
	kind := "a number"
	switch b[0] {
	case '[':
		kind = "an array"
	case '"':
		kind = "a string"
	case 't', 'f':
		kind = "a boolean"
	}
	return "not a JSON object but " + kind
}

// CallTool calls a tool. args is a map or struct that encodes as a JSON
// object, or the object as JSON text: a json.RawMessage, []byte or string
// (such as the arguments string of an LLM's function call). nil, a nil
// map, empty JSON text and JSON null all mean "no arguments". Anything
// else (an array, a number, text that is not JSON) fails with an [*Error]
// of kind [KindInvalid] wrapping a [*handler.ValidationError], before anything is
// sent.
//
// A tool that fails reports it in the result (res.Failed()); the error is
// for protocol and transport failures: a [*jsonrpc.Error] from the server
// (e.g. errors.Is(err, jsonrpc.ErrInvalidParams) for an unknown tool),
// [ErrClosed], ctx.Err(), the session's and transport's errors, all inside
// an [*Error] whose Kind classifies them.
//
// On modern Streamable HTTP the call carries the Mcp-Param-* headers the
// tool's x-mcp-header annotations ask for; when the server answers -32020
// (header mismatch) the tools list is refreshed and the call retried once.
func (c *Client) CallTool(ctx context.Context, name string, args any, opts ...CallOption) (*protocol.CallToolResult, error) {
	cc := c.callOptions(opts)
	res, task, err := c.startTool(ctx, name, args, &cc)
	if err != nil {
		return nil, opError(protocol.MethodToolsCall, err)
	}
	if task != nil {
		return c.AwaitTask(ctx, task)
	}
	return res, nil
}

// startTool sends tools/call and returns either the final result or the
// task the server created.
func (c *Client) startTool(ctx context.Context, name string, args any, cc *callConfig) (*protocol.CallToolResult, *Task, error) {
	if err := cc.optionError(protocol.MethodToolsCall); err != nil {
		return nil, nil, err
	}
	if err := c.require(protocol.MethodToolsCall, "tools", c.ServerCapabilities().Tools != nil); err != nil {
		return nil, nil, err
	}
	rawArgs, err := marshalArgs(args)
	if err != nil {
		return nil, nil, err
	}
	params := &protocol.CallToolParams{Name: name, Arguments: rawArgs}
	opts := cc.sessionOptions()
	opts.Safety = c.replaySafety(name)
	legacyTask := false
	if c.isModern() {
		// The tasks extension has no per-request opt-in: once advertised,
		// the server alone decides whether a call becomes a task.
		opts.AcceptTask = c.cfg.capOpts.TasksExtension
	} else if cc.task {
		if ok, err := c.legacyTaskable(ctx, name); err != nil {
			return nil, nil, err
		} else if ok {
			params.Task = &protocol.TaskMetadata{}
			legacyTask = true
		}
	}
	withHeaders := c.isHTTP() && c.isModern()
	for attempt := 0; ; attempt++ {
		if withHeaders {
			info, _ := c.tools.lookup(name)
			opts.Headers = cc.headers
			if info != nil && len(info.headers) > 0 {
				h, err := transport.ParamHeaders(info.headers, rawArgs)
				if err != nil {
					return nil, nil, err
				}
				opts.Headers = mergeHeaders(cc.headers, h)
			}
		}
		raw, err := c.call(identityContext(ctx, cc), protocol.MethodToolsCall, params, opts)
		if err != nil {
			if withHeaders && attempt == 0 && errors.Is(err, jsonrpc.ErrHeaderMismatch) {
				// The schema may have changed: refresh and retry once.
				if _, lerr := c.toolInfo(ctx, name, true); lerr == nil {
					continue
				}
			}
			return nil, nil, err
		}
		return c.decodeToolResult(ctx, raw, legacyTask)
	}
}

// decodeToolResult decodes a tools/call result, recognizing tasks.
func (c *Client) decodeToolResult(ctx context.Context, raw json.RawMessage, legacyTask bool) (*protocol.CallToolResult, *Task, error) {
	rt, err := protocol.ResultTypeOf(raw)
	if err != nil {
		return nil, nil, resultError(protocol.MethodToolsCall, err)
	}
	if rt == protocol.ResultTypeTask {
		var tr protocol.TaskCreatedResult
		if err := decode(protocol.MethodToolsCall, raw, &tr); err != nil {
			return nil, nil, err
		}
		if tr.TaskID == "" {
			// As for a 2025-11-25 task below: a task without an id
			// cannot be followed (it would be polled as tasks/get of "").
			return nil, nil, resultError(protocol.MethodToolsCall, errors.New("the task has no taskId"))
		}
		return nil, extTask(&tr.ExtTask), nil
	}
	if legacyTask {
		// A 2025-11-25 server answers a task-augmented call with
		// {"task": Task} (CreateTaskResult). A task member that is not a
		// task fails the call: read as a tool result it would be an empty
		// one, a tool that ran and said nothing.
		var probe struct {
			Task json.RawMessage `json:"task"`
		}
		if json.Unmarshal(raw, &probe) == nil && len(probe.Task) > 0 && string(probe.Task) != "null" {
			var task protocol.Task
			if err := json.Unmarshal(probe.Task, &task); err != nil {
				return nil, nil, resultError(protocol.MethodToolsCall, fmt.Errorf("the result's task: %w", err))
			}
			if task.TaskID == "" {
				return nil, nil, resultError(protocol.MethodToolsCall, errors.New("the result's task has no taskId"))
			}
			return nil, legacyTaskOf(&task), nil
		}
	}
	var res protocol.CallToolResult
	if err := decode(protocol.MethodToolsCall, raw, &res); err != nil {
		return nil, nil, err
	}
	return &res, nil, nil
}
