package conduittest

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// Redacted replaces a credential in a transcript.
const Redacted = "[REDACTED]"

// credentialNames are the members a [Recorder] redacts, lower case: the
// credential headers (a server may echo them, a host may pass them in
// _meta) and the OAuth and API-key fields.
var credentialNames = map[string]bool{
	"authorization":       true,
	"proxy-authorization": true,
	"cookie":              true,
	"set-cookie":          true,
	"dpop":                true,
	"x-api-key":           true,
	"api-key":             true,
	"api_key":             true,
	"apikey":              true,
	"access_token":        true,
	"refresh_token":       true,
	"id_token":            true,
	"client_secret":       true,
	"password":            true,
}

// credentialSchemes are the authorization schemes whose string values a
// Recorder redacts wherever they appear ("Bearer eyJ…").
var credentialSchemes = []string{"bearer ", "basic ", "dpop "}

// mayHoldCredential is a quick test that lets most messages through
// byte for byte. A message with a \u escape may spell a name or scheme
// with it ("access\u005ftoken"), which only decoding reveals.
func mayHoldCredential(msg []byte) bool {
	if bytes.Contains(msg, []byte(`\u`)) {
		return true
	}
	low := bytes.ToLower(msg)
	for name := range credentialNames {
		if bytes.Contains(low, []byte(`"`+name+`"`)) {
			return true
		}
	}
	for _, s := range credentialSchemes {
		if bytes.Contains(low, []byte(`"`+s)) {
			return true
		}
	}
	return false
}

// redactJSON returns msg with the value of every member named like a
// credential ([credentialNames], any case, at any depth) and every string
// that starts with an authorization scheme ("Bearer …", "Basic …",
// "DPoP …") replaced by [Redacted]. Member order and numbers are kept;
// input that is not JSON is returned as it is.
func redactJSON(msg []byte) []byte {
	if !mayHoldCredential(msg) {
		return msg
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	var out bytes.Buffer
	if err := redactValue(dec, &out); err != nil {
		return msg
	}
	return out.Bytes()
}

// redactValue copies one JSON value from dec to out, redacting.
func redactValue(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		return redactComposite(dec, out, t)
	case string:
		if credentialValue(t) {
			t = Redacted
		}
		return writeJSON(out, t)
	default:
		return writeJSON(out, t)
	}
}

// redactComposite copies the rest of an object or array opened by open.
func redactComposite(dec *json.Decoder, out *bytes.Buffer, open json.Delim) error {
	out.WriteByte(byte(open))
	for i := 0; dec.More(); i++ {
		if i > 0 {
			out.WriteByte(',')
		}
		if open == '[' {
			if err := redactValue(dec, out); err != nil {
				return err
			}
			continue
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if err := writeJSON(out, key); err != nil {
			return err
		}
		out.WriteByte(':')
		if credentialNames[strings.ToLower(key)] {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			if err := writeJSON(out, Redacted); err != nil {
				return err
			}
			continue
		}
		if err := redactValue(dec, out); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil && err != io.EOF { // the closing delimiter
		return err
	}
	if open == '{' {
		out.WriteByte('}')
	} else {
		out.WriteByte(']')
	}
	return nil
}

// credentialValue reports whether s is an authorization header value.
func credentialValue(s string) bool {
	low := strings.ToLower(s)
	for _, scheme := range credentialSchemes {
		if strings.HasPrefix(low, scheme) && len(s) > len(scheme) {
			return true
		}
	}
	return false
}

func writeJSON(out *bytes.Buffer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	out.Write(b)
	return nil
}
