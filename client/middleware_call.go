package client

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/protocol"
)

// WithCallMeta adds entries to this call's params._meta, in both eras:
// in the modern era beside the protocol's envelope, in the legacy era as
// the request's _meta. Each value is JSON-encoded (a json.RawMessage as it
// is). The keys the protocol's envelope uses (protocol version, client
// capabilities and info, logLevel, progressToken) cannot be set: the call
// then fails with an [*Error] of kind [KindInvalid]. Several WithCallMeta
// options add up; for one key the last wins. Default: none.
func WithCallMeta(meta map[string]any) CallOption {
	enc := make(map[string]json.RawMessage, len(meta))
	var err error
	for k, v := range meta {
		if engine.ReservedMeta(k) {
			err = fmt.Errorf("%w: %q", engine.ErrReservedMeta, k)
			break
		}
		b, merr := json.Marshal(v)
		if merr != nil {
			err = fmt.Errorf("encoding _meta %q: %w", k, merr)
			break
		}
		enc[k] = b
	}
	return callOptionFunc(func(c *callConfig) {
		if err != nil {
			c.optErr = err
			return
		}
		if c.meta == nil {
			c.meta = make(map[string]json.RawMessage, len(enc))
		}
		for k, v := range enc {
			c.meta[k] = v
		}
	})
}

// reservedHeaders are the headers the transports set for the protocol.
var reservedHeaders = []string{
	protocol.HeaderProtocolVersion, protocol.HeaderSessionID, protocol.HeaderMethod, protocol.HeaderName,
	"Content-Type", "Content-Length", "Accept", "Last-Event-Id",
}

// WithCallHeaders adds h to the HTTP request of this call (cloned). Only
// the Streamable HTTP transport (both eras) sends them; stdio, WebSocket,
// HTTP+SSE and in-memory connections ignore them. The protocol's own
// headers (MCP-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name,
// Content-Type, Accept, …) cannot be set: the call then fails with an
// [*Error] of kind [KindInvalid]. The Mcp-Param-* headers a tool's
// x-mcp-header annotations ask for win over h. Several WithCallHeaders
// options add up. Default: none.
func WithCallHeaders(h http.Header) CallOption {
	h = h.Clone()
	var err error
	for _, k := range reservedHeaders {
		if _, ok := h[http.CanonicalHeaderKey(k)]; ok {
			err = fmt.Errorf("the %s header is set by the transport", k)
		}
	}
	return callOptionFunc(func(c *callConfig) {
		if err != nil {
			c.optErr = err
			return
		}
		c.headers = mergeHeaders(c.headers, h)
	})
}

// mergeHeaders returns a with b's headers added (b wins); nil when both
// are empty. a is not modified.
func mergeHeaders(a, b http.Header) http.Header {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := a.Clone()
	for k, vs := range b {
		out[k] = vs
	}
	return out
}

// optionError is the error of a call option that cannot apply, or nil.
func (cc *callConfig) optionError(op string) error {
	if cc.optErr == nil {
		return nil
	}
	k, err := optionKind(cc.optErr)
	return &Error{Op: op, Kind: k, Err: err}
}
