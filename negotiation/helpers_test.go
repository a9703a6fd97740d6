package negotiation_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
)

// summary is the comparable face of a Verdict.
type summary struct {
	Kind    negotiation.VerdictKind
	Version string
	Status  int
	Reason  string
	Err     string
	// Discover is the DiscoverResult's supported versions, when present.
	Discover []string
}

func summarize(v negotiation.Verdict) summary {
	s := summary{Kind: v.Kind, Version: v.Version, Status: v.Status, Reason: v.Reason, Err: errSummary(v.Err)}
	if v.Discover != nil {
		s.Discover = v.Discover.SupportedVersions
	}
	return s
}

// errSummary renders the typed shape of err: "error kind|reason|code|status
// <- wrapped" or "upve requested [supported]".
func errSummary(err error) string {
	if err == nil {
		return ""
	}
	var ne *negotiation.Error
	var upv *negotiation.UnsupportedProtocolVersionError
	switch {
	case errors.As(err, &upv) && !errors.As(err, &ne):
		return fmt.Sprintf("upve %s [%s]", upv.Requested, strings.Join(upv.Supported, " "))
	case errors.As(err, &ne):
		s := fmt.Sprintf("error %s|%s|%d|%d", ne.Kind, ne.Reason, ne.Code, ne.Status)
		if ne.Err != nil {
			s += " <- " + errSummary(ne.Err)
		}
		return s
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return fmt.Sprintf("jsonrpc %d", je.Code)
	}
	return "other " + err.Error()
}

func discoverJSON(versions ...string) string {
	b, _ := json.Marshal(map[string]any{
		"resultType":        "complete",
		"supportedVersions": versions,
		"capabilities":      map[string]any{"tools": map[string]any{}},
		"ttlMs":             1000,
		"cacheScope":        "public",
	})
	return string(b)
}

// respJSON wraps a result in a JSON-RPC response.
func respJSON(result string) string {
	return `{"jsonrpc":"2.0","id":1,"result":` + result + `}`
}

// errJSON is a JSON-RPC error response with optional data ("" for none).
func errJSON(code int64, data string) string {
	s := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"error":{"code":%d,"message":"m"`, code)
	if data != "" {
		s += `,"data":` + data
	}
	return s + `}}`
}

func rpcErr(code int64, data string) *jsonrpc.Error {
	e := &jsonrpc.Error{Code: code, Message: "m"}
	if data != "" {
		e.Data = json.RawMessage(data)
	}
	return e
}

func resultOutcome(raw string) negotiation.Outcome {
	return negotiation.Outcome{Kind: negotiation.OutcomeResult, Result: json.RawMessage(raw)}
}

func rpcErrorOutcome(code int64, data string) negotiation.Outcome {
	return negotiation.Outcome{Kind: negotiation.OutcomeRPCError, Error: rpcErr(code, data)}
}

func httpOutcome(status int, contentType, body string) negotiation.Outcome {
	o := negotiation.Outcome{Kind: negotiation.OutcomeHTTP, Status: status, ContentType: contentType}
	if body != "" {
		o.Body = []byte(body)
	}
	return o
}

func httpJSON(status int, body string) negotiation.Outcome {
	return httpOutcome(status, "application/json", body)
}

func supported(vs ...string) string {
	b, _ := json.Marshal(map[string]any{"supported": vs, "requested": "2026-07-28"})
	return string(b)
}
