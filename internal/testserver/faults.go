package testserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// FaultKind says how a [Fault] misbehaves.
type FaultKind int

// Fault kinds. Unless noted, a fault matches server/discover by default
// (its Method is empty); set [Fault.Method] to target another method or "*"
// for every request.
const (
	// FaultNone does nothing.
	FaultNone FaultKind = iota

	// FaultResult answers with Fault.Result (raw JSON) as the result.
	FaultResult
	// FaultDiscoverInvalid answers a DiscoverResult-shaped but invalid
	// result (supportedVersions is not a list of strings).
	FaultDiscoverInvalid
	// FaultDiscoverNotShaped answers a result that is not
	// DiscoverResult-shaped (no resultType, no supportedVersions).
	FaultDiscoverNotShaped
	// FaultDiscoverNoMutual answers a valid DiscoverResult whose
	// supportedVersions are Fault.Supported (default ["2099-01-01"]).
	FaultDiscoverNoMutual
	// FaultRPCError answers the JSON-RPC error Code/Message/Data; on HTTP
	// with Fault.Status (0 means 404 for -32601, 400 for modern codes,
	// else 200).
	FaultRPCError
	// FaultUnsupportedVersion answers -32022 with data {supported:
	// Fault.Supported (default the server's modern versions), requested}.
	// With Times 1 it models "rejects the requested version only the
	// first time"; with Times 2 the corrective retry is rejected too.
	FaultUnsupportedVersion
	// FaultMissingCapability answers -32021 with data
	// {requiredCapabilities: Fault.Data or {"elicitation":{}}}.
	FaultMissingCapability
	// FaultHeaderMismatch answers -32020.
	FaultHeaderMismatch
	// FaultSilent never answers (HTTP: holds the request until the client
	// gives up or the server closes).
	FaultSilent
	// FaultLegacyVersion makes initialize answer protocolVersion
	// Fault.Version (default "2024-11-05"). Default method: initialize.
	FaultLegacyVersion
	// FaultRepeatCursor makes list results return the cursor they were
	// given (or "loop" on the first page) as nextCursor, forever. Default
	// method: tools/list.
	FaultRepeatCursor
	// FaultOversized pads the response to at least Fault.Size bytes
	// (default 1 MiB). Default method: every request.
	FaultOversized

	// FaultExit makes [Server.ServeStream] return [ErrExit] without
	// answering (the stdio main then exits); on HTTP it resets the
	// connection.
	FaultExit
	// FaultExitAfter runs the request (a tool executes), then makes
	// [Server.ServeStream] return [ErrExit] without sending the answer: a
	// server process that dies after doing the work. Default method:
	// tools/call. Streams only.
	FaultExitAfter
	// FaultNoise writes non-JSON lines (Fault.Body split on newlines,
	// default a banner) on a stream before the response. Default method:
	// every request.
	FaultNoise

	// FaultHTTPStatus answers with Fault.Status, Fault.Header and
	// Fault.Body (Content-Type Fault.ContentType). HTTP only.
	FaultHTTPStatus
	// FaultReset hijacks the HTTP connection and closes it. HTTP only.
	FaultReset
	// FaultBreakStream answers with an event stream that ends before the
	// response. In the legacy era the response is still produced and can
	// be recovered by resuming with Last-Event-ID. HTTP only.
	FaultBreakStream
	// FaultRespondSSE answers this request with an event stream. HTTP only.
	FaultRespondSSE
	// FaultRespondJSON answers this request with application/json even if
	// SSE responses are configured. HTTP only.
	FaultRespondJSON
	// FaultExpireSession ends the legacy session before handling the
	// request, which is answered 404. Default method: every request. HTTP
	// only.
	FaultExpireSession
	// FaultBreakExpire runs the request, answers with an event stream
	// that ends after its priming event (before the response), and ends
	// the legacy session: a server that restarted without it, so that
	// the resumption GET gets 404. In the modern era it is
	// FaultBreakStream. HTTP only.
	FaultBreakExpire

	faultKindEnd
)

// faultTable holds, per kind, the kebab-case name used by [ParseFault]
// and what the kind does, in one line.
var faultTable = [...]struct{ name, desc string }{
	FaultNone:               {"none", "does nothing"},
	FaultResult:             {"result", "answers with the raw JSON result=…"},
	FaultDiscoverInvalid:    {"discover-invalid", "server/discover answers a DiscoverResult-shaped but invalid result"},
	FaultDiscoverNotShaped:  {"discover-not-shaped", "server/discover answers a result that is not DiscoverResult-shaped (legacy evidence)"},
	FaultDiscoverNoMutual:   {"discover-no-mutual", "server/discover answers only versions the client does not speak (supported=…)"},
	FaultRPCError:           {"rpc-error", "answers the JSON-RPC error code=…, message=…, data=… (HTTP status=…)"},
	FaultUnsupportedVersion: {"unsupported-version", "answers -32022 naming supported=… (default the server's modern versions)"},
	FaultMissingCapability:  {"missing-capability", "answers -32021 requiring the capabilities in data=… (default elicitation)"},
	FaultHeaderMismatch:     {"header-mismatch", "answers -32020 (HTTP headers contradict the body)"},
	FaultSilent:             {"silent", "never answers (HTTP: holds the request open)"},
	FaultLegacyVersion:      {"legacy-version", "initialize answers protocolVersion version=… (default 2024-11-05)"},
	FaultRepeatCursor:       {"repeat-cursor", "tools/list returns the same nextCursor forever"},
	FaultOversized:          {"oversized", "pads every response to at least size=… bytes (default 1 MiB)"},
	FaultExit:               {"exit", "stdio: the server exits without answering; HTTP: the connection is reset"},
	FaultExitAfter:          {"exit-after", "stdio: the server runs the request, then exits without answering"},
	FaultNoise:              {"noise", "stdio: writes non-JSON lines (body=…) before the response"},
	FaultHTTPStatus:         {"http-status", "HTTP: answers status=… with body=…, ctype=… and header=Name=Value"},
	FaultReset:              {"reset", "HTTP: closes the connection without a response"},
	FaultBreakStream:        {"break-stream", "HTTP: answers with an event stream that ends before the response"},
	FaultRespondSSE:         {"respond-sse", "HTTP: answers with an event stream"},
	FaultRespondJSON:        {"respond-json", "HTTP: answers with application/json"},
	FaultExpireSession:      {"expire-session", "HTTP: ends the legacy session first, so the request gets 404"},
	FaultBreakExpire:        {"break-expire", "HTTP: runs the request, breaks its event stream after the priming event and ends the legacy session, so resuming gets 404"},
}

// String returns the kebab-case name used by [ParseFault].
func (k FaultKind) String() string {
	if k >= 0 && k < faultKindEnd {
		return faultTable[k].name
	}
	return "fault(" + strconv.Itoa(int(k)) + ")"
}

// httpOnly reports whether the kind only has meaning on HTTP transports.
func (k FaultKind) httpOnly() bool {
	switch k {
	case FaultHTTPStatus, FaultReset, FaultBreakStream, FaultRespondSSE, FaultRespondJSON, FaultExpireSession, FaultBreakExpire:
		return true
	}
	return false
}

func (k FaultKind) streamOnly() bool { return k == FaultNoise || k == FaultExitAfter }

func (k FaultKind) defaultMethod() string {
	switch k {
	case FaultLegacyVersion:
		return "initialize"
	case FaultExitAfter:
		return "tools/call"
	case FaultRepeatCursor:
		return "tools/list"
	case FaultOversized, FaultNoise, FaultExpireSession:
		return "*"
	}
	return "server/discover"
}

// Fault makes the server misbehave on matching requests.
type Fault struct {
	// Kind selects the misbehaviour.
	Kind FaultKind
	// Method is the JSON-RPC method the fault applies to; "" means the
	// kind's default (server/discover for most kinds), "*" every request.
	Method string
	// Transport restricts the fault to one transport (a Transport*
	// constant); "" means any.
	Transport string
	// Skip lets this many matching requests through before the fault
	// applies.
	Skip int
	// Times is how many matching requests (after Skip) the fault applies
	// to; 0 means every one.
	Times int

	// Code, Message and Data form the JSON-RPC error of FaultRPCError.
	Code    int64
	Message string
	Data    json.RawMessage
	// Status is the HTTP status of FaultHTTPStatus and FaultRPCError.
	Status int
	// Header holds extra response headers (WWW-Authenticate, Retry-After).
	Header http.Header
	// Body and ContentType are the body of FaultHTTPStatus and the lines
	// of FaultNoise.
	Body        string
	ContentType string
	// Supported is data.supported of FaultUnsupportedVersion and the
	// supportedVersions of FaultDiscoverNoMutual.
	Supported []string
	// Version is the protocolVersion of FaultLegacyVersion.
	Version string
	// Result is the raw result of FaultResult.
	Result json.RawMessage
	// Size is the minimum response size of FaultOversized.
	Size int
}

// Preset bodies for [FaultHTTPStatus].
const (
	// BodyNonJSON is a body that is not JSON.
	BodyNonJSON = "<html><body>Bad Request</body></html>"
	// BodyJSONNotRPC is JSON that is not a JSON-RPC message.
	BodyJSONNotRPC = `{"error":"bad request","status":400}`
	// BodyLegacyError is a non-modern JSON-RPC error, as legacy servers
	// send for a request without a session.
	BodyLegacyError = `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`
	// BodyModernError is a modern JSON-RPC error (-32022).
	BodyModernError = `{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"1900-01-01"}}}`
	// BodyMethodNotFound is a JSON-RPC -32601 error.
	BodyMethodNotFound = `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}`
)

type faultState struct {
	f    Fault
	seen int // matching requests seen; guarded by Server.mu
}

// SetFaults replaces the installed faults (none: the server behaves).
func (s *Server) SetFaults(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = s.faults[:0]
	for _, f := range faults {
		s.faults = append(s.faults, &faultState{f: cloneFault(f)})
	}
}

// AddFault installs one more fault after the existing ones.
func (s *Server) AddFault(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &faultState{f: cloneFault(f)})
}

// FaultHits returns, for each installed fault, how many times it applied.
func (s *Server) FaultHits() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	hits := make([]int, len(s.faults))
	for i, fs := range s.faults {
		n := fs.seen - fs.f.Skip
		if n < 0 {
			n = 0
		}
		if fs.f.Times > 0 && n > fs.f.Times {
			n = fs.f.Times
		}
		hits[i] = n
	}
	return hits
}

func cloneFault(f Fault) Fault {
	f.Data = slices.Clone(f.Data)
	f.Result = slices.Clone(f.Result)
	f.Supported = slices.Clone(f.Supported)
	f.Header = f.Header.Clone()
	return f
}

// takeFault returns the first installed fault that applies to a request of
// method on transport, counting the request against every fault that
// matches it up to the one that applies.
func (s *Server) takeFault(transport, method string, httpish bool) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fs := range s.faults {
		f := &fs.f
		if f.Kind == FaultNone {
			continue
		}
		if f.Kind.httpOnly() && !httpish || f.Kind.streamOnly() && httpish {
			continue
		}
		if f.Transport != "" && f.Transport != transport {
			continue
		}
		m := f.Method
		if m == "" {
			m = f.Kind.defaultMethod()
		}
		if m != "*" && m != method {
			continue
		}
		fs.seen++
		n := fs.seen - f.Skip
		if n <= 0 || f.Times > 0 && n > f.Times {
			continue
		}
		c := cloneFault(*f)
		return &c
	}
	return nil
}

// ParseFault parses the command-line form of a fault:
//
//	kind[:key=value[,key=value…]]
//
// with keys method, transport, skip, times, code, message, data (raw JSON),
// status, header (Name=Value; repeatable), body, ctype, supported
// (versions separated by '|'), version, result (raw JSON), size. For
// example "rpc-error:code=-32601,times=1" or
// "http-status:status=401,header=WWW-Authenticate=Bearer".
func ParseFault(spec string) (Fault, error) {
	kindName, rest, _ := strings.Cut(spec, ":")
	var f Fault
	found := false
	for k := FaultNone; k < faultKindEnd; k++ {
		if faultTable[k].name == kindName {
			f.Kind, found = k, true
			break
		}
	}
	if !found {
		return f, fmt.Errorf("testserver: unknown fault kind %q", kindName)
	}
	if rest == "" {
		return f, nil
	}
	for _, kv := range splitFaultArgs(rest) {
		key, val, ok := strings.Cut(kv, "=")
		if !ok {
			return f, fmt.Errorf("testserver: fault argument %q is not key=value", kv)
		}
		var err error
		switch key {
		case "method":
			f.Method = val
		case "transport":
			f.Transport = val
		case "skip":
			f.Skip, err = strconv.Atoi(val)
		case "times":
			f.Times, err = strconv.Atoi(val)
		case "code":
			f.Code, err = strconv.ParseInt(val, 10, 64)
		case "message":
			f.Message = val
		case "data":
			f.Data, err = rawJSON(val)
		case "status":
			f.Status, err = strconv.Atoi(val)
		case "header":
			name, v, _ := strings.Cut(val, "=")
			if f.Header == nil {
				f.Header = http.Header{}
			}
			f.Header.Add(name, v)
		case "body":
			f.Body = val
		case "ctype":
			f.ContentType = val
		case "supported":
			f.Supported = strings.Split(val, "|")
		case "version":
			f.Version = val
		case "result":
			f.Result, err = rawJSON(val)
		case "size":
			f.Size, err = strconv.Atoi(val)
		default:
			err = fmt.Errorf("unknown key")
		}
		if err != nil {
			return f, fmt.Errorf("testserver: fault argument %q: %v", kv, err)
		}
	}
	return f, nil
}

// rawJSON returns val as raw JSON, with an error when it is not valid JSON.
func rawJSON(val string) (json.RawMessage, error) {
	if !json.Valid([]byte(val)) {
		return json.RawMessage(val), fmt.Errorf("not JSON")
	}
	return json.RawMessage(val), nil
}

// splitFaultArgs splits on commas that are outside JSON brackets and
// quotes, so data={"a":1,"b":2} stays whole.
func splitFaultArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	inStr := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// Description returns what the kind does, in one line (for conduit serve
// --list-faults and the conduittest documentation).
func (k FaultKind) Description() string {
	if k >= 0 && k < faultKindEnd {
		return faultTable[k].desc
	}
	return ""
}

// DefaultMethod returns the JSON-RPC method a fault of this kind applies to
// when its Method is empty ("*" for every request).
func (k FaultKind) DefaultMethod() string { return k.defaultMethod() }

// FaultKinds returns every fault kind but [FaultNone], in declaration order.
func FaultKinds() []FaultKind {
	out := make([]FaultKind, 0, int(faultKindEnd)-1)
	for k := FaultNone + 1; k < faultKindEnd; k++ {
		out = append(out, k)
	}
	return out
}
