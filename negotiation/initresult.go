package negotiation

import (
	"bytes"
	"encoding/json"

	"github.com/conduitmcp/conduit/internal/jsonscan"
	"github.com/conduitmcp/conduit/protocol"
)

// ParseInitializeResult decodes raw, a legacy initialize result, exactly
// as encoding/json decodes it into a [protocol.InitializeResult] (the
// same value, or its error). The common shape — members named exactly
// protocolVersion, capabilities, serverInfo and instructions, once each,
// with strings free of escapes — is read without encoding/json, at a
// fraction of its cost.
func ParseInitializeResult(raw json.RawMessage) (protocol.InitializeResult, error) {
	var r protocol.InitializeResult
	if plainInitializeResult(raw, &r) {
		return r, nil
	}
	r = protocol.InitializeResult{}
	err := json.Unmarshal(raw, &r)
	return r, err
}

// plainInitializeResult reads the common shape of a valid initialize
// result into the zero r (see ParseInitializeResult). Anything else
// returns false, and r is to be decoded.
func plainInitializeResult(raw []byte, r *protocol.InitializeResult) bool {
	if !json.Valid(raw) {
		return false
	}
	raw = bytes.TrimSpace(raw) // JSON whitespace only, once valid
	if raw[0] != '{' {
		return false
	}
	var seen [4]bool
	plain := true
	jsonscan.EachMember(raw, func(key, val []byte) bool {
		i := -1
		switch string(key) {
		case `"protocolVersion"`:
			i = 0
		case `"capabilities"`:
			i = 1
		case `"serverInfo"`:
			i = 2
		case `"instructions"`:
			i = 3
		}
		if i < 0 || seen[i] {
			plain = false
			return false
		}
		seen[i] = true
		val = bytes.TrimSpace(val)
		switch i {
		case 0, 3:
			s, ok := plainString(val)
			if !ok {
				plain = false
			} else if i == 0 {
				r.ProtocolVersion = string(s)
			} else {
				r.Instructions = string(s)
			}
		case 1:
			plain = val[0] == '{' && plainCapabilities(val, &r.Capabilities)
		case 2:
			impl := (*protocol.Implementation)(nil)
			if val[0] == '{' {
				impl = plainImplementation(val)
			}
			if plain = impl != nil; plain {
				r.ServerInfo = *impl
			}
		}
		return plain
	})
	return plain
}
