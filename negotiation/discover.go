package negotiation

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"github.com/conduitmcp/conduit/protocol"
)

// DiscoverResult is a modern server's answer to server/discover, read with
// the lenient rules of the seed (ConduitMCP Client.DiscoverResult).
type DiscoverResult struct {
	// SupportedVersions is supportedVersions, in the server's order.
	SupportedVersions []string
	// Capabilities is the server's capabilities. A member whose value has
	// the wrong shape is dropped (not declared).
	Capabilities protocol.ServerCapabilities
	// Instructions is the optional instructions string, "" when absent or
	// not a string.
	Instructions string
	// TTLMs is how long the result may be cached, in milliseconds. An
	// absent, negative or non-integer ttlMs reads as 0; an integer too
	// large for int64 reads as math.MaxInt64. Any upper clamp is the
	// cache's job.
	TTLMs int64
	// CacheScope is protocol.CacheScopePublic when cacheScope is exactly
	// "public", else protocol.CacheScopePrivate.
	CacheScope string
	// ServerInfo is _meta["io.modelcontextprotocol/serverInfo"], or nil
	// when absent or malformed (not an object with string name and
	// version).
	ServerInfo *protocol.Implementation
	// Meta is the result's _meta, or an empty map; never nil.
	Meta map[string]json.RawMessage
	// Raw is the whole result as received.
	Raw json.RawMessage
}

// ParseDiscoverResult builds a [DiscoverResult] from a server/discover
// result. supportedVersions must be a list of strings, capabilities an
// object, and resultType absent (or null) or "complete"; otherwise it
// returns an [*Error] of kind [KindProtocol] with reason
// [ReasonInvalidDiscoverResult].
func ParseDiscoverResult(raw json.RawMessage) (*DiscoverResult, error) {
	members, err := objectMembers(raw)
	if err != nil {
		return nil, invalidDiscover("result is not a JSON object")
	}
	if rt, ok := members["resultType"]; ok && !isJSONNull(rt) {
		var s string
		if json.Unmarshal(rt, &s) != nil || s != protocol.ResultTypeComplete {
			return nil, invalidDiscover(`resultType is not "complete"`)
		}
	}
	d := &DiscoverResult{
		CacheScope: protocol.CacheScopePrivate,
		Meta:       map[string]json.RawMessage{},
		Raw:        append(json.RawMessage(nil), raw...),
	}
	sv, ok := members["supportedVersions"]
	if !ok || !isJSONArray(sv) || json.Unmarshal(sv, &d.SupportedVersions) != nil {
		return nil, invalidDiscover("supportedVersions is not a list of strings")
	}
	if d.SupportedVersions == nil {
		d.SupportedVersions = []string{}
	}
	caps, ok := members["capabilities"]
	if !ok {
		return nil, invalidDiscover("capabilities is missing")
	}
	capMembers, err := objectMembers(caps)
	if err != nil {
		return nil, invalidDiscover("capabilities is not an object")
	}
	d.Capabilities = lenientCapabilities(caps, capMembers)
	if in, ok := members["instructions"]; ok {
		_ = json.Unmarshal(in, &d.Instructions) // not a string: ""
	}
	if ttl, ok := members["ttlMs"]; ok {
		d.TTLMs = readTTL(ttl)
	}
	if cs, ok := members["cacheScope"]; ok {
		var s string
		if json.Unmarshal(cs, &s) == nil && s == protocol.CacheScopePublic {
			d.CacheScope = protocol.CacheScopePublic
		}
	}
	if m, ok := members["_meta"]; ok {
		if mm, err := objectMembers(m); err == nil {
			d.Meta = mm
		}
	}
	if si, ok := d.Meta[protocol.MetaServerInfo]; ok {
		d.ServerInfo = readServerInfo(si)
	}
	return d, nil
}

func invalidDiscover(detail string) *Error {
	return &Error{Kind: KindProtocol, Reason: ReasonInvalidDiscoverResult, Err: errors.New(detail)}
}

// objectMembers decodes raw as a JSON object (never nil on success).
func objectMembers(raw []byte) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("not an object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func isJSONNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

func isJSONArray(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '['
}

// readTTL reads ttlMs: an integer JSON number; negative or non-integer
// reads as 0, too large as math.MaxInt64.
func readTTL(raw []byte) int64 {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0 // not a JSON number (json.Number would accept "123")
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) && n[0] != '-' {
			return math.MaxInt64
		}
		return 0
	}
	return max(v, 0)
}

// lenientCapabilities decodes a capabilities object; when the whole object
// does not fit protocol.ServerCapabilities, each member is decoded alone
// and the ones with a wrong shape are dropped.
func lenientCapabilities(raw []byte, members map[string]json.RawMessage) protocol.ServerCapabilities {
	var c protocol.ServerCapabilities
	if json.Unmarshal(raw, &c) == nil {
		return c
	}
	c = protocol.ServerCapabilities{}
	for k, v := range members {
		one, err := json.Marshal(map[string]json.RawMessage{k: v})
		if err != nil {
			continue
		}
		var part protocol.ServerCapabilities
		if json.Unmarshal(one, &part) != nil {
			continue
		}
		mergeCapability(&c, &part)
	}
	return c
}

// mergeCapability copies the members set in part into c.
func mergeCapability(c, part *protocol.ServerCapabilities) {
	if part.Experimental != nil {
		c.Experimental = part.Experimental
	}
	if part.Logging != nil {
		c.Logging = part.Logging
	}
	if part.Completions != nil {
		c.Completions = part.Completions
	}
	if part.Prompts != nil {
		c.Prompts = part.Prompts
	}
	if part.Resources != nil {
		c.Resources = part.Resources
	}
	if part.Tools != nil {
		c.Tools = part.Tools
	}
	if part.Tasks != nil {
		c.Tasks = part.Tasks
	}
	if part.Extensions != nil {
		c.Extensions = part.Extensions
	}
}

// readServerInfo reads an Implementation; nil unless it is an object with
// string name and version that decodes as a whole.
func readServerInfo(raw []byte) *protocol.Implementation {
	var probe struct {
		Name    *string `json:"name"`
		Version *string `json:"version"`
	}
	if _, err := objectMembers(raw); err != nil {
		return nil
	}
	if json.Unmarshal(raw, &probe) != nil || probe.Name == nil || probe.Version == nil {
		return nil
	}
	var impl protocol.Implementation
	if json.Unmarshal(raw, &impl) != nil {
		return nil
	}
	return &impl
}
