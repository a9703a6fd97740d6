package engine

import (
	"encoding/json"

	"github.com/conduitmcp/conduit/protocol"
)

// The modern _meta prefix of every connect: the common shapes of the
// client capabilities (no tasks, experimental or extension members) and
// of the client info (name and version of plain characters only) are
// appended directly, exactly as encoding/json writes them
// (TestAppendPrefixMatchesMarshal); anything else goes through
// json.Marshal.

// appendCaps appends caps as json.Marshal encodes it, or reports false
// (nothing appended) for a shape it does not encode itself.
func appendCaps(b []byte, c *protocol.ClientCapabilities) ([]byte, bool) {
	if c.Tasks != nil || len(c.Experimental) > 0 || len(c.Extensions) > 0 {
		return b, false
	}
	b = append(b, '{')
	n := len(b)
	if c.Roots != nil {
		b = append(b, `"roots":{`...)
		if c.Roots.ListChanged {
			b = append(b, `"listChanged":true`...)
		}
		b = append(b, '}')
	}
	if c.Sampling != nil {
		b = comma(b, n)
		b = append(b, `"sampling":`...)
		b = appendFlags(b, "context", c.Sampling.Context != nil, "tools", c.Sampling.Tools != nil)
	}
	if c.Elicitation != nil {
		b = comma(b, n)
		b = append(b, `"elicitation":`...)
		b = appendFlags(b, "form", c.Elicitation.Form != nil, "url", c.Elicitation.URL != nil)
	}
	return append(b, '}'), true
}

// appendFlags appends an object of up to two {} members.
func appendFlags(b []byte, k1 string, on1 bool, k2 string, on2 bool) []byte {
	b = append(b, '{')
	if on1 {
		b = append(b, '"')
		b = append(b, k1...)
		b = append(b, `":{}`...)
	}
	if on2 {
		if on1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k2...)
		b = append(b, `":{}`...)
	}
	return append(b, '}')
}

// comma appends a member separator unless b has grown no member past n.
func comma(b []byte, n int) []byte {
	if len(b) > n {
		return append(b, ',')
	}
	return b
}

// appendInfo appends info as json.Marshal encodes it, or reports false for
// a shape it does not encode itself.
func appendInfo(b []byte, info *protocol.Implementation) ([]byte, bool) {
	if info.Title != "" || len(info.Icons) > 0 || info.Description != "" || info.WebsiteURL != "" ||
		!plainString(info.Name) || !plainString(info.Version) {
		return b, false
	}
	b = append(b, `{"name":"`...)
	b = append(b, info.Name...)
	b = append(b, `","version":"`...)
	b = append(b, info.Version...)
	return append(b, `"}`...), true
}

// plainString reports whether json.Marshal writes s between quotes as it
// is: printable ASCII without the characters it escapes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// appendJSON appends v's json.Marshal encoding. It is generic so that
// only the fallback copies its argument to the heap.
func appendJSON[T any](b []byte, v T) ([]byte, error) {
	j, err := json.Marshal(v)
	return append(b, j...), err
}
