package testserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// outbound is where the messages of one request other than its response go:
// progress and log notifications, legacy server-to-client requests, listen
// notifications. Implementations must be safe for concurrent use.
type outbound interface {
	send(m jsonrpc.Message) error
}

// call is one request being handled.
type call struct {
	s         *Server
	ctx       context.Context
	transport string
	httpish   bool
	req       *jsonrpc.Request
	modern    bool
	version   string                      // modern: the _meta version; legacy: the session's
	params    map[string]json.RawMessage  // the params object; nil when absent
	meta      map[string]json.RawMessage  // params._meta; nil when absent
	caps      protocol.ClientCapabilities // modern: from _meta; legacy: from initialize
	headers   http.Header                 // HTTP only
	sess      *session                    // legacy only; may be nil before initialize on streams
	out       outbound                    // request-scoped stream; never nil
	fault     *Fault                      // the fault that applies, if any
	logLevel  protocol.LoggingLevel       // modern: per request
}

// reply is the outcome of a call.
type reply struct {
	result any // map[string]any or json.RawMessage
	err    *jsonrpc.Error
	status int  // HTTP status override; 0 means the default for the era and code
	silent bool // send no response
	exit   bool // FaultExit: stop serving the stream
}

func errReply(err *jsonrpc.Error) reply { return reply{err: err} }

func okReply(result map[string]any) reply { return reply{result: result} }

// wantsModern decides the era of a request the way a dual-era server does:
// modern when params._meta carries a modern key (protocolVersion or
// clientCapabilities), legacy otherwise. An initialize is legacy unless it
// carries a modern protocolVersion (then it is a removed method).
func (s *Server) wantsModern(req *jsonrpc.Request) bool {
	switch s.opts.Era {
	case ModernOnly:
		return true
	case LegacyOnly:
		return false
	}
	meta := metaOf(req.Params)
	_, v := meta[protocol.MetaProtocolVersion]
	_, c := meta[protocol.MetaClientCapabilities]
	if req.Method == protocol.MethodInitialize {
		return v
	}
	return v || c
}

// metaOf returns params._meta, or nil.
func metaOf(params json.RawMessage) map[string]json.RawMessage {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p.Meta
}

// dispatch answers one request. It never panics on peer input.
func (s *Server) dispatch(c *call) reply {
	if len(c.req.Params) > 0 {
		if err := json.Unmarshal(c.req.Params, &c.params); err != nil {
			return errReply(jsonrpc.ErrInvalidParams.WithMessage("params must be an object"))
		}
		if m, ok := c.params["_meta"]; ok {
			if err := json.Unmarshal(m, &c.meta); err != nil {
				return errReply(jsonrpc.ErrInvalidParams.WithMessage("_meta must be an object"))
			}
		}
	}
	if c.fault != nil {
		if rep, ok := s.applyFault(c); ok {
			return rep
		}
	}
	var rep reply
	if c.modern {
		rep = s.dispatchModern(c)
	} else {
		rep = s.dispatchLegacy(c)
	}
	if f := c.fault; f != nil && f.Kind == FaultExitAfter {
		rep.exit = true
	}
	if f := c.fault; f != nil && f.Kind == FaultOversized {
		if m, ok := rep.result.(map[string]any); ok {
			size := f.Size
			if size <= 0 {
				size = 1 << 20
			}
			m["padding"] = strings.Repeat("x", size)
		}
	}
	return rep
}

// applyFault answers a call from its fault, when the fault replaces the
// answer.
func (s *Server) applyFault(c *call) (reply, bool) {
	f := c.fault
	switch f.Kind {
	case FaultResult:
		return reply{result: json.RawMessage(f.Result)}, true
	case FaultDiscoverInvalid:
		return reply{result: json.RawMessage(`{"resultType":"complete","supportedVersions":"2026-07-28","capabilities":[],"ttlMs":"soon"}`)}, true
	case FaultDiscoverNotShaped:
		return reply{result: json.RawMessage(`{"hello":"world"}`)}, true
	case FaultDiscoverNoMutual:
		r := s.discoverResult()
		if len(f.Supported) > 0 {
			r["supportedVersions"] = f.Supported
		} else {
			r["supportedVersions"] = []string{"2099-01-01"}
		}
		return reply{result: s.decorateModern(c, protocol.MethodDiscover, r)}, true
	case FaultRPCError:
		code := f.Code
		if code == 0 {
			code = jsonrpc.CodeInternalError
		}
		msg := f.Message
		if msg == "" {
			msg = defaultMessage(code)
		}
		return reply{err: &jsonrpc.Error{Code: code, Message: msg, Data: f.Data}, status: f.Status}, true
	case FaultUnsupportedVersion:
		sup := f.Supported
		if len(sup) == 0 {
			sup = s.opts.ModernVersions
		}
		var requested string
		_ = json.Unmarshal(c.meta[protocol.MetaProtocolVersion], &requested)
		return reply{err: jsonrpc.ErrUnsupportedProtocolVersion.WithData(map[string]any{"supported": sup, "requested": requested}), status: f.Status}, true
	case FaultMissingCapability:
		data := json.RawMessage(`{"requiredCapabilities":{"elicitation":{}}}`)
		if len(f.Data) > 0 {
			data = f.Data
		}
		return reply{err: &jsonrpc.Error{Code: jsonrpc.CodeMissingRequiredClientCapability, Message: "missing required client capability", Data: data}, status: f.Status}, true
	case FaultHeaderMismatch:
		return reply{err: jsonrpc.ErrHeaderMismatch.WithMessage("header mismatch (fault)"), status: f.Status}, true
	case FaultSilent:
		return reply{silent: true}, true
	case FaultExit:
		return reply{exit: true}, true
	}
	return reply{}, false
}

func defaultMessage(code int64) string {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return "Method not found"
	case jsonrpc.CodeInvalidParams:
		return "Invalid params"
	case jsonrpc.CodeInvalidRequest:
		return "Invalid request"
	case jsonrpc.CodeParseError:
		return "Parse error"
	case jsonrpc.CodeInternalError:
		return "Internal error"
	}
	return "Server error"
}

// httpStatus is the HTTP status of a JSON response carrying rep.
func (c *call) httpStatus(rep reply) int {
	if rep.status != 0 {
		return rep.status
	}
	if rep.err == nil || !c.modern {
		return http.StatusOK
	}
	switch rep.err.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeHeaderMismatch, jsonrpc.CodeMissingRequiredClientCapability, jsonrpc.CodeUnsupportedProtocolVersion,
		jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// response builds the JSON-RPC response of rep.
func response(id jsonrpc.ID, rep reply) *jsonrpc.Response {
	if rep.err != nil {
		return jsonrpc.NewErrorResponse(id, rep.err)
	}
	resp, err := jsonrpc.NewResponse(id, rep.result)
	if err != nil {
		return jsonrpc.NewErrorResponse(id, jsonrpc.ErrInternal.WithMessage("encoding result: "+err.Error()))
	}
	return resp
}

// notify sends a notification on the call's stream, best effort.
func (c *call) notify(method string, params any) {
	n, err := jsonrpc.NewNotification(method, params)
	if err != nil {
		return
	}
	if err := c.out.send(n); err != nil {
		c.s.logger.Debug("testserver: sending notification", "method", method, "err", err)
	}
}

// progressToken returns params._meta.progressToken, or nil.
func (c *call) progressToken() json.RawMessage {
	return c.meta[protocol.MetaProgressToken]
}

// progress sends notifications/progress when the request asked for it.
func (c *call) progress(done, total float64, msg string) {
	tok := c.progressToken()
	if tok == nil {
		return
	}
	p := map[string]any{"progressToken": tok, "progress": done}
	if total > 0 {
		p["total"] = total
	}
	if msg != "" {
		p["message"] = msg
	}
	c.notify(protocol.NotificationProgress, p)
}

var levelRank = map[protocol.LoggingLevel]int{
	protocol.LevelDebug: 0, protocol.LevelInfo: 1, protocol.LevelNotice: 2, protocol.LevelWarning: 3,
	protocol.LevelError: 4, protocol.LevelCritical: 5, protocol.LevelAlert: 6, protocol.LevelEmergency: 7,
}

// log sends notifications/message at level when the client asked for that
// level: per request in the modern era, per session in the legacy era.
func (c *call) log(level protocol.LoggingLevel, data any) {
	threshold := c.logLevel
	if !c.modern && c.sess != nil {
		threshold = c.sess.level()
	}
	if threshold == "" || levelRank[level] < levelRank[threshold] {
		return
	}
	c.notify(protocol.NotificationMessage, map[string]any{"level": level, "logger": "testserver", "data": data})
}

// param decodes params[name] into v; it reports whether the member existed
// and decoded.
func (c *call) param(name string, v any) bool {
	raw, ok := c.params[name]
	if !ok {
		return false
	}
	return json.Unmarshal(raw, v) == nil
}

// hasTasksExtension reports whether the modern request declared the tasks
// extension.
func (c *call) hasTasksExtension() bool {
	_, ok := c.caps.Extensions[protocol.ExtensionTasks]
	return c.modern && ok
}
