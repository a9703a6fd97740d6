package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/conduitmcp/conduit/protocol"
)

var (
	errParamsNotObject = errors.New("params must be a JSON object")
	errMetaNotObject   = errors.New("params._meta must be a JSON object")
	errMalformedJSON   = errors.New("malformed JSON object")
)

// marshalParams encodes params once. json.RawMessage and []byte pass
// through untouched.
func marshalParams(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	case []byte:
		return p, nil
	}
	return json.Marshal(params)
}

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
// once per negotiated connection and spliced into every request.
func buildPrefix(version string, caps protocol.ClientCapabilities, info protocol.Implementation) ([]byte, error) {
	capsJSON, err := json.Marshal(caps)
	if err != nil {
		return nil, err
	}
	infoJSON, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	vJSON, _ := json.Marshal(version)
	b := make([]byte, 0, 128+len(capsJSON)+len(infoJSON))
	b = append(b, `"`+protocol.MetaProtocolVersion+`":`...)
	b = append(b, vJSON...)
	b = append(b, `,"`+protocol.MetaClientCapabilities+`":`...)
	b = append(b, capsJSON...)
	b = append(b, `,"`+protocol.MetaClientInfo+`":`...)
	b = append(b, infoJSON...)
	return b, nil
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
			if j := skipWS(p, vs+1); p[j] != '}' && (len(prefix) > 0 || token != 0 || level != "") {
				out = append(out, ',')
			}
			return append(out, p[vs+1:]...), nil
		}
	}
	out = append(out, `{"_meta":{`...)
	out = members(out)
	out = append(out, '}')
	if j := skipWS(p, 1); j < len(p) && p[j] != '}' {
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
	if j := skipWS(p, 1); j < len(p) && p[j] != '}' {
		out = append(out, ',')
	}
	return append(out, p[1:]...)
}

var resultTypeKey = []byte(`"resultType"`)

// resultType returns a modern result's resultType ("" when absent) without
// decoding the result.
func resultType(raw []byte) (string, error) {
	if !bytes.Contains(raw, resultTypeKey) {
		return "", nil
	}
	vs, ve, found, err := topLevelMember(raw, "resultType")
	if err != nil || !found {
		return "", err
	}
	v := raw[vs:ve]
	switch string(v) {
	case `"complete"`:
		return protocol.ResultTypeComplete, nil
	case `"input_required"`:
		return protocol.ResultTypeInputRequired, nil
	case `"task"`:
		return protocol.ResultTypeTask, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", errors.New("resultType is not a string")
	}
	if s == "" {
		return "", errors.New("resultType is empty")
	}
	return s, nil
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// topLevelMember finds the member key of the JSON object obj and returns
// the bounds of its value. It scans without allocating; keys are compared
// in their raw (escaped) form.
func topLevelMember(obj []byte, key string) (start, end int, found bool, err error) {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return 0, 0, false, errParamsNotObject
	}
	i = skipWS(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return 0, 0, false, nil
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return 0, 0, false, errMalformedJSON
		}
		ke, ok := scanString(obj, i)
		if !ok {
			return 0, 0, false, errMalformedJSON
		}
		k := obj[i+1 : ke-1]
		i = skipWS(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return 0, 0, false, errMalformedJSON
		}
		i = skipWS(obj, i+1)
		vs := i
		ve, ok := skipValue(obj, i)
		if !ok {
			return 0, 0, false, errMalformedJSON
		}
		if string(k) == key {
			return vs, ve, true, nil
		}
		i = skipWS(obj, ve)
		if i >= len(obj) {
			return 0, 0, false, errMalformedJSON
		}
		switch obj[i] {
		case ',':
			i = skipWS(obj, i+1)
		case '}':
			return 0, 0, false, nil
		default:
			return 0, 0, false, errMalformedJSON
		}
	}
}

// scanString returns the index just past the JSON string starting at b[i].
func scanString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); {
		switch b[j] {
		case '\\':
			j += 2
		case '"':
			return j + 1, true
		default:
			j++
		}
	}
	return 0, false
}

// skipValue returns the index just past the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return scanString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); {
			switch b[j] {
			case '"':
				e, ok := scanString(b, j)
				if !ok {
					return 0, false
				}
				j = e
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
			j++
		}
		return 0, false
	}
	j := i
	for j < len(b) {
		c := b[j]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			break
		}
		j++
	}
	if j == i {
		return 0, false
	}
	return j, true
}
