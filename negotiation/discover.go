package negotiation

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"unicode/utf8"

	"github.com/conduitmcp/conduit/internal/jsonscan"
	"github.com/conduitmcp/conduit/protocol"
)

// DiscoverResult is a modern server's answer to server/discover, read with
// the lenient rules of the seed (ConduitMCP Client.DiscoverResult).
type DiscoverResult struct {
	// SupportedVersions is supportedVersions, in the server's order.
	SupportedVersions []string
	// Capabilities is the server's capabilities. A member whose value has
	// the wrong shape is dropped (not declared); the others read as the
	// object decoded without it (members naming one capability twice
	// merge in order, the last value of a flag winning).
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
	d, top, ok := readDiscover(append(json.RawMessage(nil), raw...))
	if !ok {
		return nil, invalidDiscover("result is not a JSON object")
	}
	return parseDiscover(d, top)
}

// readDiscover makes a new result of raw, which becomes its Raw, and
// reads its top-level members, which alias raw; false when raw is not a
// JSON object. The result keeps raw: the caller gives it up.
func readDiscover(raw json.RawMessage) (*DiscoverResult, *discoverMembers, bool) {
	d := &discoverRead{DiscoverResult: DiscoverResult{
		CacheScope: protocol.CacheScopePrivate,
		Raw:        raw[:len(raw):len(raw)],
	}}
	if eachMember(d.Raw, d.top.set) != nil {
		return nil, nil, false
	}
	return &d.DiscoverResult, &d.top, true
}

// discoverRead is a result being read and its members, in one allocation.
type discoverRead struct {
	DiscoverResult
	top discoverMembers
}

// shaped reports whether the result has a resultType or a
// supportedVersions member: DiscoverResult-shaped.
func (m *discoverMembers) shaped() bool { return m.resultType != nil || m.supportedVersions != nil }

// parseDiscover checks and reads the members top of d (readDiscover).
func parseDiscover(d *DiscoverResult, top *discoverMembers) (*DiscoverResult, error) {
	if rt := top.resultType; rt != nil && !isJSONNull(rt) && !stringIs(rt, protocol.ResultTypeComplete) {
		return nil, invalidDiscover(`resultType is not "complete"`)
	}
	sv := top.supportedVersions
	if sv == nil || !isJSONArray(sv) {
		return nil, invalidDiscover("supportedVersions is not a list of strings")
	}
	if vs, ok := plainStrings(sv); ok {
		d.SupportedVersions = vs
	} else if !stringsOrNulls(sv) || json.Unmarshal(sv, &d.SupportedVersions) != nil {
		// Checked first: decoding a list of a million numbers into a
		// []string costs an error value apiece before it fails.
		return nil, invalidDiscover("supportedVersions is not a list of strings")
	}
	if d.SupportedVersions == nil {
		d.SupportedVersions = []string{}
	}
	caps := top.capabilities
	if caps == nil {
		return nil, invalidDiscover("capabilities is missing")
	}
	if !isJSONObject(caps) { // valid JSON already: the whole result was checked
		return nil, invalidDiscover("capabilities is not an object")
	}
	lenientCapabilities(caps, &d.Capabilities)
	if in := bytes.TrimSpace(top.instructions); len(in) > 0 && in[0] == '"' {
		d.Instructions = unquoteKey(in) // not a string: ""
	}
	if ttl := top.ttlMs; ttl != nil {
		d.TTLMs = readTTL(ttl)
	}
	if cs := top.cacheScope; cs != nil && stringIs(cs, protocol.CacheScopePublic) {
		d.CacheScope = protocol.CacheScopePublic
	}
	if m := top.meta; m != nil {
		d.Meta, _ = objectMembers(m)
	}
	if d.Meta == nil {
		d.Meta = map[string]json.RawMessage{}
	}
	if si, ok := d.Meta[protocol.MetaServerInfo]; ok {
		d.ServerInfo = readServerInfo(si)
	}
	return d, nil
}

// discoverMembers holds the raw values of the top-level members of a
// DiscoverResult that ParseDiscoverResult reads; nil when absent. As when
// decoding into a map, keys match exactly (after unescaping) and the last
// of duplicate keys wins.
type discoverMembers struct {
	resultType, supportedVersions, capabilities []byte
	instructions, ttlMs, cacheScope, meta       []byte
}

func (m *discoverMembers) set(key, val []byte) {
	inner := key[1 : len(key)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		inner = []byte(unquoteKey(key)) // rare: escapes in a key
	}
	var dst *[]byte
	switch string(inner) { // does not allocate
	case "resultType":
		dst = &m.resultType
	case "supportedVersions":
		dst = &m.supportedVersions
	case "capabilities":
		dst = &m.capabilities
	case "instructions":
		dst = &m.instructions
	case "ttlMs":
		dst = &m.ttlMs
	case "cacheScope":
		dst = &m.cacheScope
	case "_meta":
		dst = &m.meta
	default:
		return
	}
	*dst = val
}

func invalidDiscover(detail string) *Error {
	return &Error{Kind: KindProtocol, Reason: ReasonInvalidDiscoverResult, Err: errors.New(detail)}
}

var errNotObject = errors.New("not an object")

// eachMember calls fn with the quoted key and the raw value of every
// top-level member of raw, in order, checking as it goes that raw is a
// valid JSON object: it fails otherwise, after calling fn for the members
// before the fault (callers drop what fn built then). It does not
// allocate; the values alias raw.
func eachMember(raw []byte, fn func(key, val []byte)) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return errNotObject
	}
	r := jsonscan.ObjectReader{Data: raw, Depth: 1}
	for {
		key, val, ok, err := r.Next()
		switch {
		case err != nil:
			return errNotObject
		case !ok:
			if r.I != len(raw) {
				return errNotObject // something after the object
			}
			return nil
		}
		fn(key.Raw(raw), val.Raw(raw))
	}
}

// keyIs reports whether the quoted key, unescaped, is exactly name (as a
// map key decoded by encoding/json would be).
func keyIs(quoted []byte, name string) bool {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == name
	}
	return unquoteKey(quoted) == name
}

// unquoteKey returns the quoted key unescaped, as encoding/json decodes a
// map key (invalid UTF-8 becomes U+FFFD).
func unquoteKey(quoted []byte) string {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(quoted, &s) // valid: the object was checked
	return s
}

// objectMembers decodes raw as a JSON object (never nil on success), with
// the outcome of decoding it into a map[string]json.RawMessage, except
// that the values alias raw instead of being copied.
func objectMembers(raw []byte) (map[string]json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	err := eachMember(raw, func(key, val []byte) {
		m[unquoteKey(key)] = val[:len(val):len(val)]
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// stringIs reports whether the valid JSON value raw is a string equal to
// want, as decoding it into a string would find: without decoding when
// it has no escapes (want has no characters that need them).
func stringIs(raw []byte, want string) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' {
		return false
	}
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == want
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && s == want
}

func isJSONNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

// plainStrings reads raw, a valid JSON array, when it holds only strings
// without escapes and of valid UTF-8, which decode to their bytes: the
// same list as json.Unmarshal into a []string, from one string of all
// their bytes (two allocations, not one per element and the decoder's).
// ok is false for any other array (the caller decodes it then).
func plainStrings(raw []byte) (vs []string, ok bool) {
	raw = bytes.TrimSpace(raw)
	n := 0
	for i := 1; ; n++ { // raw[0] == '[' (see isJSONArray)
		i = jsonscan.SkipSpace(raw, i)
		if i >= len(raw) {
			return nil, false
		}
		if raw[i] == ']' && n == 0 {
			break
		}
		if raw[i] != '"' {
			return nil, false
		}
		end := bytes.IndexByte(raw[i+1:], '"')
		if end < 0 {
			return nil, false
		}
		s := raw[i+1 : i+1+end]
		if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
			return nil, false
		}
		i = jsonscan.SkipSpace(raw, i+end+2)
		if i >= len(raw) {
			return nil, false
		}
		if raw[i] == ']' {
			n++
			break
		}
		if raw[i] != ',' {
			return nil, false
		}
		i++
	}
	vs = make([]string, 0, n)
	all := string(raw)
	for i := 1; len(vs) < n; {
		i = jsonscan.SkipSpace(raw, i)
		end := i + 1 + bytes.IndexByte(raw[i+1:], '"')
		vs = append(vs, all[i+1:end])
		i = jsonscan.SkipSpace(raw, end+1) + 1 // past ',' or ']'
	}
	return vs, true
}

// stringsOrNulls reports whether raw, a valid JSON array, holds only
// strings and nulls: the arrays that decode into a []string.
func stringsOrNulls(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	i := jsonscan.SkipSpace(raw, 1)
	if raw[i] == ']' {
		return true
	}
	for {
		e, err := jsonscan.SkipNested(raw, i)
		if err != nil || e.Kind != jsonscan.KindString && e.Kind != jsonscan.KindNull {
			return false
		}
		i = jsonscan.SkipSpace(raw, e.End)
		if raw[i] == ']' {
			return true
		}
		i = jsonscan.SkipSpace(raw, i+1) // past the comma
	}
}

func isJSONObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func isJSONArray(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '['
}

// readTTL reads ttlMs, a value of an object already checked to be valid
// JSON: an integer JSON number; negative or non-integer (a fraction or an
// exponent) reads as 0, too large as math.MaxInt64.
func readTTL(raw []byte) int64 {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] < '0' || raw[0] > '9' {
		return 0 // negative, or not a number (a string "123" included)
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0
		}
	}
	var v int64
	for _, c := range raw {
		d := int64(c - '0')
		if v > (math.MaxInt64-d)/10 {
			return math.MaxInt64
		}
		v = v*10 + d
	}
	return v
}

// lenientCapabilities decodes a capabilities object into *c, the zero
// value (the result's own field: a local would escape to the scan's
// closure), without the members that do not fit
// protocol.ServerCapabilities (capabilityFits), so that members naming
// one capability twice (a duplicate, or a key differing in case) merge in
// order as they do when the whole object decodes. The members are told
// apart by scanning, not by decoding each: a server's object of a million
// members costs two scans and one decoding.
func lenientCapabilities(raw []byte, c *protocol.ServerCapabilities) {
	if plainCapabilities(raw, c) {
		return
	}
	all := true
	_ = eachMember(raw, func(key, val []byte) { all = all && capabilityFits(key, val) })
	kept := raw
	if !all {
		kept = make([]byte, 1, len(raw))
		kept[0] = '{'
		_ = eachMember(raw, func(key, val []byte) {
			if !capabilityFits(key, val) {
				return
			}
			if len(kept) > 1 {
				kept = append(kept, ',')
			}
			kept = append(append(append(kept, key...), ':'), val...)
		})
		kept = append(kept, '}')
	}
	if json.Unmarshal(kept, c) != nil {
		*c = protocol.ServerCapabilities{} // unreachable: every member kept fits
	}
}

// capabilityFits reports whether the member key: val of a valid
// capabilities object decodes into protocol.ServerCapabilities, matched
// to its field as encoding/json matches names: experimental, extensions,
// logging and completions take an object or null; tools, prompts and
// resources an object whose listChanged (and, for resources, subscribe)
// members are true, false or null, or null; tasks any value. A member that
// names no field decodes to nothing and fits nowhere: it is left out.
func capabilityFits(key, val []byte) bool {
	null := isJSONNull(val)
	switch {
	case jsonscan.KeyIs(key, "tasks"):
		return true
	case jsonscan.KeyIs(key, "experimental"), jsonscan.KeyIs(key, "extensions"),
		jsonscan.KeyIs(key, "logging"), jsonscan.KeyIs(key, "completions"):
		return null || isJSONObject(val)
	case jsonscan.KeyIs(key, "tools"), jsonscan.KeyIs(key, "prompts"):
		return null || isJSONObject(val) && flagsFit(val, false)
	case jsonscan.KeyIs(key, "resources"):
		return null || isJSONObject(val) && flagsFit(val, true)
	}
	return false
}

// flagsFit reports whether the members of obj named listChanged (and
// subscribe, with subscribe) as encoding/json matches names are true,
// false or null.
func flagsFit(obj []byte, subscribe bool) bool {
	fits := true
	jsonscan.EachMember(obj, func(key, val []byte) bool {
		if jsonscan.KeyIs(key, "listChanged") || subscribe && jsonscan.KeyIs(key, "subscribe") {
			v := string(bytes.TrimSpace(val))
			fits = v == "true" || v == "false" || v == "null"
		}
		return fits
	})
	return fits
}

// plainCapabilities reads the common shape of a valid capabilities object
// into the zero c without encoding/json, with the outcome of decoding it:
// members named exactly tools, prompts, resources (objects whose members
// listChanged and subscribe are true or false; others are ignored),
// logging and completions (objects). A duplicate member decodes into the
// value before it, as encoding/json does. Anything else returns false,
// and c is to be decoded.
func plainCapabilities(raw []byte, c *protocol.ServerCapabilities) bool {
	plain := true
	jsonscan.EachMember(raw, func(key, val []byte) bool {
		val = bytes.TrimSpace(val)
		if len(val) == 0 || val[0] != '{' {
			plain = false
			return false
		}
		switch string(key) {
		case `"logging"`:
			c.Logging = &protocol.Empty{}
		case `"completions"`:
			c.Completions = &protocol.Empty{}
		case `"tools"`:
			if c.Tools == nil {
				c.Tools = &protocol.ToolsCapability{}
			}
			plain = plainFlags(val, &c.Tools.ListChanged, nil)
		case `"prompts"`:
			if c.Prompts == nil {
				c.Prompts = &protocol.PromptsCapability{}
			}
			plain = plainFlags(val, &c.Prompts.ListChanged, nil)
		case `"resources"`:
			if c.Resources == nil {
				c.Resources = &protocol.ResourcesCapability{}
			}
			plain = plainFlags(val, &c.Resources.ListChanged, &c.Resources.Subscribe)
		default:
			plain = false
		}
		return plain
	})
	if !plain {
		*c = protocol.ServerCapabilities{}
	}
	return plain
}

// plainFlags reads the members listChanged and subscribe (when subscribe
// is not nil) of a capability object, each true or false; a member whose
// name only folds to one of them, or another value, returns false.
// Other members are ignored, as when decoding.
func plainFlags(obj []byte, listChanged, subscribe *bool) bool {
	plain := true
	jsonscan.EachMember(obj, func(key, val []byte) bool {
		var dst *bool
		switch {
		case string(key) == `"listChanged"`:
			dst = listChanged
		case subscribe != nil && string(key) == `"subscribe"`:
			dst = subscribe
		case jsonscan.KeyIs(key, "listChanged") || jsonscan.KeyIs(key, "subscribe"):
			plain = false // spelled otherwise: decoding matches it
			return false
		default:
			return true
		}
		switch string(bytes.TrimSpace(val)) {
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			plain = false
		}
		return plain
	})
	return plain
}

// readServerInfo reads an Implementation from raw, a valid JSON value (a
// member of the result, which was validated whole); nil unless it is an
// object with string name and version that decodes as a whole.
func readServerInfo(raw []byte) *protocol.Implementation {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	// The common shape first: its members are exactly name, version and
	// title, strings all, so the checks below would pass.
	if impl := plainImplementation(raw); impl != nil {
		return impl
	}
	// name and version must be strings, as a decode into *string fields
	// would find them (the last member whose key folds to the name).
	for _, field := range [...]string{"name", "version"} {
		if v, err := jsonscan.LastMemberFold(raw, field); err != nil || v.Kind != jsonscan.KindString {
			return nil
		}
	}
	var impl protocol.Implementation
	if json.Unmarshal(raw, &impl) != nil {
		return nil
	}
	return &impl
}

// plainImplementation reads the common shape of an Implementation without
// encoding/json: members named exactly name, version and title, each a
// string without escapes in valid UTF-8 (the last of duplicates wins, as
// when decoding). Anything else returns nil, to be decoded.
func plainImplementation(obj []byte) *protocol.Implementation {
	var name, version, title []byte
	plain := true
	jsonscan.EachMember(obj, func(key, val []byte) bool {
		s, ok := plainString(val)
		switch {
		case !ok:
			plain = false
		case string(key) == `"name"`:
			name = s
		case string(key) == `"version"`:
			version = s
		case string(key) == `"title"`:
			title = s
		default:
			plain = false
		}
		return plain
	})
	if !plain || name == nil || version == nil {
		return nil
	}
	// One string for the three (through a buffer on the stack when they
	// are short): one allocation, not one each.
	var buf [128]byte
	all := string(append(append(append(buf[:0], name...), version...), title...))
	n, v := len(name), len(name)+len(version)
	return &protocol.Implementation{Name: all[:n], Version: all[n:v], Title: all[v:]}
}

// plainString returns the content of the JSON string val when it has no
// escapes and is valid UTF-8 (so decoding it would give the same bytes).
func plainString(val []byte) ([]byte, bool) {
	val = bytes.TrimSpace(val)
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return nil, false
	}
	inner := val[1 : len(val)-1]
	if bytes.IndexByte(inner, '\\') >= 0 || !utf8.Valid(inner) {
		return nil, false
	}
	return inner, true
}
