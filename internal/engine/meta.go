package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/conduitmcp/conduit/internal/jsonscan"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

var (
	errParamsNotObject = errors.New("params must be a JSON object")
	errMetaNotObject   = errors.New("params._meta must be a JSON object")
	errMalformedJSON   = errors.New("malformed JSON object")
)

// marshalParams encodes params once; json.RawMessage and []byte pass
// through untouched. It is jsonrpc's, the module's one.
var marshalParams = jsonrpc.MarshalParams

// checkRaw validates params given as raw JSON (json.Marshal output needs
// no check): it must be valid JSON, since it is sent as it is.
func checkRaw(params any, raw []byte) error {
	switch params.(type) {
	case json.RawMessage, []byte:
		if len(raw) > 0 && !json.Valid(raw) {
			return errMalformedJSON
		}
	}
	return nil
}

// buildPrefix pre-encodes the constant members of a modern request's
// _meta: protocol version, client capabilities and client info. It is done
// once per negotiated connection and spliced into every request; the
// common shapes are appended without encoding/json (see prefix.go).
func buildPrefix(version string, caps protocol.ClientCapabilities, info protocol.Implementation) ([]byte, error) {
	b := make([]byte, 0, 128+len(protocol.MetaProtocolVersion)+len(protocol.MetaClientCapabilities)+
		len(protocol.MetaClientInfo)+len(version)+len(info.Name)+len(info.Version))
	return appendIdentity(b, &metaKeys, version, &caps, &info)
}

// identityKeys are the keys (each with its quotes, colon and any
// separator before it) under which appendIdentity writes a version, the
// client capabilities and the client info.
type identityKeys [3]string

var (
	metaKeys = identityKeys{`"` + protocol.MetaProtocolVersion + `":`,
		`,"` + protocol.MetaClientCapabilities + `":`, `,"` + protocol.MetaClientInfo + `":`}
	// initKeys are protocol.InitializeParams's, in its field order.
	initKeys = identityKeys{`{"protocolVersion":`, `,"capabilities":`, `,"clientInfo":`}
)

// appendIdentity appends version, caps and info under keys, as
// encoding/json encodes them (see prefix.go).
func appendIdentity(b []byte, keys *identityKeys, version string, caps *protocol.ClientCapabilities, info *protocol.Implementation) ([]byte, error) {
	b = append(b, keys[0]...)
	var err error
	if plainString(version) {
		b = append(b, '"')
		b = append(b, version...)
		b = append(b, '"')
	} else if b, err = appendJSON(b, version); err != nil {
		return nil, err
	}
	b = append(b, keys[1]...)
	var ok bool
	if b, ok = appendCaps(b, caps); !ok {
		if b, err = appendJSON(b, *caps); err != nil {
			return nil, err
		}
	}
	b = append(b, keys[2]...)
	if b, ok = appendInfo(b, info); !ok {
		if b, err = appendJSON(b, *info); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// initParams encodes initialize's params, a protocol.InitializeParams
// without _meta, exactly as json.Marshal does, without encoding/json for
// the common shapes (TestAppendPrefixMatchesMarshal).
func initParams(version string, caps *protocol.ClientCapabilities, info *protocol.Implementation) ([]byte, error) {
	b := make([]byte, 0, 96+len(version)+len(info.Name)+len(info.Version))
	b, err := appendIdentity(b, &initKeys, version, caps, info)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

var metaKey = []byte(`"_meta"`)

// spliceMeta returns params with the _meta members prefix (pre-encoded),
// progressToken (when token != 0) and logLevel (when level != "") added,
// without decoding or re-encoding params: a missing _meta is inserted after
// the opening brace; an existing _meta object gets the members inserted
// after its own opening brace (keys the caller put there come after ours).
// nil params become {"_meta":{…}}. The result is appended to dst[:0].
func spliceMeta(dst, params []byte, prefix []byte, token int64, level protocol.LoggingLevel) ([]byte, error) {
	p := bytes.TrimSpace(params)
	out := dst[:0]
	members := func(b []byte) []byte {
		b = append(b, prefix...)
		if token != 0 {
			if len(prefix) > 0 {
				b = append(b, ',')
			}
			b = append(b, `"progressToken":`...)
			b = strconv.AppendInt(b, token, 10)
		}
		if level != "" {
			if len(prefix) > 0 || token != 0 {
				b = append(b, ',')
			}
			b = append(b, `"`+protocol.MetaLogLevel+`":`...)
			b = strconv.AppendQuote(b, string(level))
		}
		return b
	}
	if len(p) == 0 || string(p) == "null" {
		out = append(out, `{"_meta":{`...)
		out = members(out)
		return append(out, "}}"...), nil
	}
	if p[0] != '{' {
		return nil, errParamsNotObject
	}
	if bytes.Contains(p, metaKey) {
		vs, ve, found, err := topLevelMember(p, "_meta")
		if err != nil {
			return nil, err
		}
		if found {
			v := p[vs:ve]
			if v[0] != '{' {
				return nil, errMetaNotObject
			}
			out = append(out, p[:vs+1]...)
			out = members(out)
			if j := jsonscan.SkipSpace(p, vs+1); p[j] != '}' && (len(prefix) > 0 || token != 0 || level != "") {
				out = append(out, ',')
			}
			return append(out, p[vs+1:]...), nil
		}
	}
	out = append(out, `{"_meta":{`...)
	out = members(out)
	out = append(out, '}')
	if j := jsonscan.SkipSpace(p, 1); j < len(p) && p[j] != '}' {
		out = append(out, ',')
	}
	return append(out, p[1:]...), nil
}

// prependMembers returns the object obj with the raw members inserted
// first: {members,…obj's members}.
func prependMembers(obj []byte, members []byte) []byte {
	p := bytes.TrimSpace(obj)
	if len(p) == 0 || string(p) == "null" {
		p = []byte("{}")
	}
	out := make([]byte, 0, len(p)+len(members)+2)
	out = append(out, '{')
	out = append(out, members...)
	if j := jsonscan.SkipSpace(p, 1); j < len(p) && p[j] != '}' {
		out = append(out, ',')
	}
	return append(out, p[1:]...)
}

// resultType reads a modern result's resultType with the module's one
// reader, [protocol.ResultTypeOf]: absent reads as "complete"; null, ""
// and non-strings fail, as does a result that is not an object.
func resultType(raw []byte) (string, error) { return protocol.ResultTypeOf(raw) }

// topLevelMember finds the member key of the JSON object obj (compared in
// its raw, escaped form) and returns the bounds of its value.
func topLevelMember(obj []byte, key string) (start, end int, found bool, err error) {
	if i := jsonscan.SkipSpace(obj, 0); i >= len(obj) || obj[i] != '{' {
		return 0, 0, false, errParamsNotObject
	}
	v, found, err := jsonscan.Member(obj, key)
	if err != nil {
		return 0, 0, false, errMalformedJSON
	}
	return v.Start, v.End, found, nil
}
