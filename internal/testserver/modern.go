package testserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// cacheable lists the methods whose complete modern results carry ttlMs and
// cacheScope.
var cacheable = map[string]bool{
	protocol.MethodDiscover:              true,
	protocol.MethodToolsList:             true,
	protocol.MethodPromptsList:           true,
	protocol.MethodResourcesList:         true,
	protocol.MethodResourcesTemplateList: true,
	protocol.MethodResourcesRead:         true,
}

// dispatchModern handles a stateless 2026-07-28 request.
func (s *Server) dispatchModern(c *call) reply {
	if s.opts.Era == ModernOnly && c.req.Method == protocol.MethodInitialize {
		return reply{err: jsonrpc.ErrMethodNotFound.WithMessage("initialize is not supported; this server speaks " + strings.Join(s.opts.ModernVersions, ", ")).
			WithData(map[string]any{"supported": s.opts.ModernVersions})}
	}
	rawVersion, ok := c.meta[protocol.MetaProtocolVersion]
	if !ok {
		return reply{err: jsonrpc.ErrInvalidParams.WithMessage("missing _meta " + protocol.MetaProtocolVersion), status: http.StatusBadRequest}
	}
	if err := json.Unmarshal(rawVersion, &c.version); err != nil {
		return reply{err: jsonrpc.ErrInvalidParams.WithMessage("_meta protocolVersion must be a string"), status: http.StatusBadRequest}
	}
	rawCaps, ok := c.meta[protocol.MetaClientCapabilities]
	if !ok {
		return reply{err: jsonrpc.ErrInvalidParams.WithMessage("missing _meta " + protocol.MetaClientCapabilities), status: http.StatusBadRequest}
	}
	if err := json.Unmarshal(rawCaps, &c.caps); err != nil {
		return reply{err: jsonrpc.ErrInvalidParams.WithMessage("_meta clientCapabilities must be an object"), status: http.StatusBadRequest}
	}
	if c.headers != nil {
		// Headers first: a header that contradicts the body is a
		// HeaderMismatch even when the body's version is unsupported.
		if err := s.checkModernHeaders(c); err != nil {
			return reply{err: err}
		}
	}
	if !slices.Contains(s.opts.ModernVersions, c.version) {
		return reply{err: jsonrpc.ErrUnsupportedProtocolVersion.WithData(map[string]any{"supported": s.opts.ModernVersions, "requested": c.version})}
	}
	if raw, ok := c.meta[protocol.MetaLogLevel]; ok {
		var lvl protocol.LoggingLevel
		if json.Unmarshal(raw, &lvl) != nil {
			return errReply(jsonrpc.ErrInvalidParams.WithMessage("invalid logLevel"))
		}
		if _, known := levelRank[lvl]; !known {
			return errReply(jsonrpc.ErrInvalidParams.WithMessage("unknown logLevel " + strconv.Quote(string(lvl))))
		}
		c.logLevel = lvl
	}

	var res map[string]any
	var err *jsonrpc.Error
	switch c.req.Method {
	case protocol.MethodDiscover:
		res = s.discoverResult()
	case protocol.MethodSubscriptionsListen:
		return s.listen(c)
	case methodEventsStream:
		return s.eventsStream(c)
	case protocol.MethodTasksGet, protocol.MethodTasksUpdate, protocol.MethodTasksCancel:
		if !c.hasTasksExtension() {
			return errReply(missingTasksExtension())
		}
		res, err = s.modernTaskMethod(c)
	default:
		h := commonMethods[c.req.Method]
		if h == nil {
			return errReply(jsonrpc.ErrMethodNotFound.WithMessage("method not found: " + c.req.Method))
		}
		res, err = h(s, c)
	}
	if err != nil {
		return errReply(err)
	}
	return okReply(s.decorateModern(c, c.req.Method, res))
}

// decorateModern adds resultType, serverInfo and, for cacheable complete
// results, ttlMs and cacheScope.
func (s *Server) decorateModern(c *call, method string, res map[string]any) map[string]any {
	if res == nil {
		res = map[string]any{}
	}
	rt, _ := res["resultType"].(string)
	if rt == "" {
		rt = protocol.ResultTypeComplete
		res["resultType"] = rt
	}
	meta, _ := res["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[protocol.MetaServerInfo] = s.opts.ServerInfo
	res["_meta"] = meta
	if rt == protocol.ResultTypeComplete && cacheable[method] && s.opts.TTL >= 0 && !c.retry() {
		res["ttlMs"] = s.opts.TTL.Milliseconds()
		res["cacheScope"] = s.opts.CacheScope
	}
	return res
}

// retry reports whether the request is an MRTR retry.
func (c *call) retry() bool {
	_, a := c.params["inputResponses"]
	_, b := c.params["requestState"]
	return a || b
}

func (s *Server) serverCapabilities(modern bool, version string) map[string]any {
	caps := map[string]any{
		"logging":     map[string]any{},
		"completions": map[string]any{},
		"prompts":     map[string]any{"listChanged": true},
		"resources":   map[string]any{"subscribe": true, "listChanged": true},
		"tools":       map[string]any{"listChanged": true},
	}
	if s.opts.NoListChanged {
		caps["prompts"], caps["tools"] = map[string]any{}, map[string]any{}
		caps["resources"] = map[string]any{"subscribe": true}
	}
	if modern {
		caps["extensions"] = map[string]any{protocol.ExtensionTasks: map[string]any{}}
	} else if version == protocol.Version20251125 {
		caps["tasks"] = map[string]any{
			"list":     map[string]any{},
			"cancel":   map[string]any{},
			"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
		}
	}
	s.skillsCapability(caps)
	if modern {
		s.eventsCapability(caps)
	}
	return caps
}

func (s *Server) discoverResult() map[string]any {
	s.mu.Lock()
	s.discovers++
	s.mu.Unlock()
	return map[string]any{
		"supportedVersions": s.opts.ModernVersions,
		"capabilities":      s.serverCapabilities(true, ""),
		"instructions":      s.opts.Instructions,
	}
}

// checkModernHeaders verifies the modern HTTP headers against the body.
func (s *Server) checkModernHeaders(c *call) *jsonrpc.Error {
	h := c.headers
	if v := h.Get(protocol.HeaderProtocolVersion); v != "" && v != c.version {
		return jsonrpc.ErrHeaderMismatch.WithMessage("MCP-Protocol-Version header " + strconv.Quote(v) + " does not match _meta " + strconv.Quote(c.version))
	}
	m := strings.TrimSpace(h.Get(protocol.HeaderMethod))
	if m == "" && !s.opts.LenientHeaders {
		return jsonrpc.ErrHeaderMismatch.WithMessage("missing Mcp-Method header")
	}
	if m != "" && m != c.req.Method {
		return jsonrpc.ErrHeaderMismatch.WithMessage("Mcp-Method header " + strconv.Quote(m) + " does not match method " + strconv.Quote(c.req.Method))
	}
	var nameKey string
	switch c.req.Method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet:
		nameKey = "name"
	case protocol.MethodResourcesRead:
		nameKey = "uri"
	case protocol.MethodTasksGet, protocol.MethodTasksUpdate, protocol.MethodTasksCancel:
		nameKey = "taskId"
	}
	if nameKey != "" {
		var want string
		c.param(nameKey, &want)
		got, present, err := headerValue(h, protocol.HeaderName)
		if err != nil {
			return jsonrpc.ErrHeaderMismatch.WithMessage("Mcp-Name header: invalid Base64")
		}
		if !present && !s.opts.LenientHeaders {
			return jsonrpc.ErrHeaderMismatch.WithMessage("missing Mcp-Name header")
		}
		if present && got != want {
			return jsonrpc.ErrHeaderMismatch.WithMessage("Mcp-Name header " + strconv.Quote(got) + " does not match " + strconv.Quote(want))
		}
	}
	if c.req.Method == protocol.MethodToolsCall {
		var name string
		c.param("name", &name)
		if t := s.findTool(name); t != nil {
			var args map[string]any
			c.param("arguments", &args)
			for prop, hname := range t.headers {
				v, ok := args[prop]
				want, encodable := headerEncode(v)
				got, present, err := headerValue(h, protocol.HeaderParamPrefix+hname)
				switch {
				case err != nil:
					return jsonrpc.ErrHeaderMismatch.WithMessage("header " + protocol.HeaderParamPrefix + hname + ": invalid Base64")
				case !ok || v == nil:
					if present {
						return jsonrpc.ErrHeaderMismatch.WithMessage("unexpected header " + protocol.HeaderParamPrefix + hname)
					}
				case !present:
					if encodable {
						return jsonrpc.ErrHeaderMismatch.WithMessage("missing header " + protocol.HeaderParamPrefix + hname)
					}
				case got != want:
					return jsonrpc.ErrHeaderMismatch.WithMessage("header " + protocol.HeaderParamPrefix + hname + " " + strconv.Quote(got) + " does not match argument " + strconv.Quote(want))
				}
			}
		}
	}
	return nil
}

// headerValue returns the decoded value of header name (undoing the
// =?base64?…?= encoding) and whether it was present; a wrapped value that
// is not valid padded standard Base64 is returned as an error.
func headerValue(h http.Header, name string) (string, bool, error) {
	vs, ok := h[http.CanonicalHeaderKey(name)]
	if !ok || len(vs) == 0 {
		return "", false, nil
	}
	v := strings.TrimSpace(vs[0])
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len("=?base64?") : len(v)-2])
		if err != nil {
			return "", true, err
		}
		return string(b), true, nil
	}
	return v, true, nil
}

// headerEncode is the plain value an x-mcp-header argument must have in its
// header (before any base64 wrapping).
func headerEncode(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10), true
		}
		return strconv.FormatFloat(x, 'g', -1, 64), false
	}
	return "", false
}

// requestState is the payload of the opaque MRTR state: the server keeps
// nothing, it signs what it needs to recognize the retry.
type requestState struct {
	Method string   `json:"m"`
	Name   string   `json:"n"`
	Keys   []string `json:"k,omitempty"`
	Round  int      `json:"r"`
	Nonce  string   `json:"x,omitempty"`
}

// sealState returns base64url(payload) "." base64url(HMAC-SHA256(payload)).
func (s *Server) sealState(st requestState) string {
	payload, _ := json.Marshal(st)
	mac := hmac.New(sha256.New, s.key)
	mac.Write(payload)
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// openState verifies and decodes a requestState produced by sealState.
func (s *Server) openState(tok string) (requestState, bool) {
	var st requestState
	p, m, ok := strings.Cut(tok, ".")
	if !ok {
		return st, false
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	sum, err2 := base64.RawURLEncoding.DecodeString(m)
	if err1 != nil || err2 != nil {
		return st, false
	}
	mac := hmac.New(sha256.New, s.key)
	mac.Write(payload)
	if !hmac.Equal(mac.Sum(nil), sum) {
		return st, false
	}
	return st, json.Unmarshal(payload, &st) == nil
}

// VerifyRequestState reports whether tok is a requestState this server
// issued, so tests can check that a client echoed it byte for byte.
func (s *Server) VerifyRequestState(tok string) bool {
	_, ok := s.openState(tok)
	return ok
}

// DiscoverCount returns how many server/discover requests reached the
// handler (faults that replaced the answer excluded).
func (s *Server) DiscoverCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.discovers
}

func missingCapability(caps map[string]any) *jsonrpc.Error {
	return jsonrpc.ErrMissingRequiredClientCapability.WithData(map[string]any{"requiredCapabilities": caps})
}

func missingTasksExtension() *jsonrpc.Error {
	return missingCapability(map[string]any{"extensions": map[string]any{protocol.ExtensionTasks: map[string]any{}}})
}
