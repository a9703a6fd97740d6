package conduittest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/conduitmcp/conduit/internal/testserver"
)

// Fault is one misbehaviour of a [Server], written the way
// conduit serve --fault takes it:
//
//	kind[:key=value[,key=value…]]
//
// The kind is one of the constants below ([Faults] lists them with what
// they do). The keys are method (the JSON-RPC method it applies to; "*"
// for every request; the default depends on the kind, mostly
// server/discover), transport (stdio, http, websocket or sse), skip
// (matching requests let through first), times (how many it applies to;
// 0 means all), code, message and data (a JSON-RPC error), status (100
// to 999), header (Name=Value, repeatable), body and ctype (an HTTP
// answer), supported (versions separated by '|'), version, result (raw
// JSON) and size (at most 1 GiB). Values that are JSON may contain
// commas. For example:
//
//	conduittest.FaultSilent.On("tools/call").Times(1)
//	conduittest.Fault("http-status:status=401,header=WWW-Authenticate=Bearer")
//
// [ProbeOutcomes] names the fault behind every outcome of the era probe.
type Fault string

// Fault kinds, one per misbehaviour the server knows ([Faults] lists
// them with the method each applies to by default).
const (
	// FaultResult answers with the raw JSON result=… .
	FaultResult Fault = "result"
	// FaultDiscoverInvalid: server/discover answers a DiscoverResult-shaped but invalid result.
	FaultDiscoverInvalid Fault = "discover-invalid"
	// FaultDiscoverNotShaped: server/discover answers a result that is not DiscoverResult-shaped (legacy evidence).
	FaultDiscoverNotShaped Fault = "discover-not-shaped"
	// FaultDiscoverNoMutual: server/discover answers only versions the client does not speak (supported=…).
	FaultDiscoverNoMutual Fault = "discover-no-mutual"
	// FaultRPCError answers the JSON-RPC error code=…, message=…, data=… (HTTP status=…).
	FaultRPCError Fault = "rpc-error"
	// FaultUnsupportedVersion answers -32022 naming supported=… (default the server's modern versions).
	FaultUnsupportedVersion Fault = "unsupported-version"
	// FaultMissingCapability answers -32021 requiring the capabilities in data=… (default elicitation).
	FaultMissingCapability Fault = "missing-capability"
	// FaultHeaderMismatch answers -32020 (HTTP headers contradict the body).
	FaultHeaderMismatch Fault = "header-mismatch"
	// FaultSilent never answers (HTTP: holds the request open).
	FaultSilent Fault = "silent"
	// FaultLegacyVersion: initialize answers protocolVersion version=… (default 2024-11-05).
	FaultLegacyVersion Fault = "legacy-version"
	// FaultRepeatCursor: tools/list returns the same nextCursor forever.
	FaultRepeatCursor Fault = "repeat-cursor"
	// FaultOversized pads every response to at least size=… bytes (default 1 MiB).
	FaultOversized Fault = "oversized"
	// FaultExit: stdio: the server exits without answering; HTTP: the connection is reset.
	FaultExit Fault = "exit"
	// FaultExitAfter: stdio: the server runs the request (a tool
	// executes), then exits without answering.
	FaultExitAfter Fault = "exit-after"
	// FaultNoise: stdio: writes non-JSON lines (body=…) before the response.
	FaultNoise Fault = "noise"
	// FaultHTTPStatus: HTTP: answers status=… with body=…, ctype=… and header=Name=Value.
	FaultHTTPStatus Fault = "http-status"
	// FaultReset: HTTP: closes the connection without a response.
	FaultReset Fault = "reset"
	// FaultBreakStream: HTTP: answers with an event stream that ends before the response.
	FaultBreakStream Fault = "break-stream"
	// FaultRespondSSE: HTTP: answers with an event stream.
	FaultRespondSSE Fault = "respond-sse"
	// FaultRespondJSON: HTTP: answers with application/json.
	FaultRespondJSON Fault = "respond-json"
	// FaultExpireSession: HTTP: ends the legacy session first, so the request gets 404.
	FaultExpireSession Fault = "expire-session"
	// FaultBreakExpire: HTTP: runs the request, breaks its event stream after the priming event and ends the legacy session, so resuming gets 404.
	FaultBreakExpire Fault = "break-expire"
)

// With returns f with one more key=value argument.
func (f Fault) With(key, value string) Fault {
	sep := ","
	if !strings.Contains(string(f), ":") {
		sep = ":"
	}
	return f + Fault(sep+key+"="+value)
}

// On returns f restricted to requests of the JSON-RPC method ("*": all).
func (f Fault) On(method string) Fault { return f.With("method", method) }

// Times returns f applied to n matching requests only.
func (f Fault) Times(n int) Fault { return f.With("times", strconv.Itoa(n)) }

// Skip returns f applied only after n matching requests went through.
func (f Fault) Skip(n int) Fault { return f.With("skip", strconv.Itoa(n)) }

// Kind returns the kind of f: the part before the first ':'.
func (f Fault) Kind() Fault {
	k, _, _ := strings.Cut(string(f), ":")
	return Fault(k)
}

// Validate reports whether f is well formed.
func (f Fault) Validate() error {
	_, err := f.parse()
	return err
}

func (f Fault) parse() (testserver.Fault, error) {
	tf, err := testserver.ParseFault(string(f))
	if err != nil {
		return tf, fmt.Errorf("conduittest: fault %q: %s", string(f), strings.TrimPrefix(err.Error(), "testserver: "))
	}
	// Values the server cannot produce: net/http's WriteHeader panics on
	// a status outside 100-999, and a padding past what memory holds
	// panics the server's goroutine, ending the test binary.
	if tf.Status != 0 && (tf.Status < 100 || tf.Status > 999) {
		return tf, fmt.Errorf("conduittest: fault %q: status %d is not an HTTP status (100-999)", string(f), tf.Status)
	}
	if tf.Size > maxFaultSize {
		return tf, fmt.Errorf("conduittest: fault %q: size %d is more than %d bytes", string(f), tf.Size, maxFaultSize)
	}
	return tf, nil
}

// maxFaultSize bounds a fault's size=…: [FaultOversized] pads a response
// to it.
const maxFaultSize = 1 << 30

func parseFaults(faults []Fault) ([]testserver.Fault, error) {
	out := make([]testserver.Fault, 0, len(faults))
	for _, f := range faults {
		tf, err := f.parse()
		if err != nil {
			return nil, err
		}
		out = append(out, tf)
	}
	return out, nil
}

// FaultInfo describes one fault kind.
type FaultInfo struct {
	// Fault is the kind, usable as is.
	Fault Fault
	// Method is the JSON-RPC method it applies to unless told otherwise
	// ("*": every request).
	Method string
	// Description says what it does, in one line.
	Description string
}

// Faults returns every fault kind with what it does, in a fixed order. It
// is the table conduit serve --list-faults prints.
func Faults() []FaultInfo {
	kinds := testserver.FaultKinds()
	out := make([]FaultInfo, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, FaultInfo{Fault: Fault(k.String()), Method: k.DefaultMethod(), Description: k.Description()})
	}
	return out
}

// ProbeOutcome is one row of the era-probe table a dual-era client follows
// (how it reads the answer to its server/discover probe), with the fault
// that makes a [Server] produce that outcome.
type ProbeOutcome struct {
	// Transport is "stdio", "http" or "" for both. stdio outcomes apply to
	// in-memory connections too.
	Transport string
	// Outcome is what the server answers to the probe.
	Outcome string
	// Fault produces it; "" is the well-behaved server.
	Fault Fault
	// Verdict is what a conforming client decides, named as the first
	// word of the probe step's verdict in the client's negotiation trace: "modern", "corrective" (re-probes with
	// the version named), "legacy", "reconnect" (respawns the process and
	// goes legacy), "authorize", "retry" (never a downgrade) or "error".
	Verdict string
}

// ProbeOutcomes returns the era-probe table, one row per outcome.
func ProbeOutcomes() []ProbeOutcome {
	return []ProbeOutcome{
		{"", "a valid DiscoverResult with a mutual modern version", "", "modern"},
		{"", "a DiscoverResult-shaped but invalid result", FaultDiscoverInvalid, "error"},
		{"", "a DiscoverResult without a mutual version", FaultDiscoverNoMutual, "error"},
		{"", "a result that is not DiscoverResult-shaped", FaultDiscoverNotShaped, "legacy"},
		{"", "-32022 naming a mutual version", FaultUnsupportedVersion.Times(1), "corrective"},
		{"", "-32022 naming no mutual version", FaultUnsupportedVersion.With("supported", "2099-01-01"), "error"},
		{"", "-32021 (missing capability)", FaultMissingCapability, "error"},
		{"", "-32020 (header mismatch)", FaultHeaderMismatch, "error"},
		{"stdio", "another JSON-RPC error", FaultRPCError.With("code", "-32601"), "legacy"},
		{"stdio", "no answer (timeout)", FaultSilent, "legacy"},
		{"stdio", "the process exits during the probe", FaultExit.Times(1), "reconnect"},
		{"http", "401 Unauthorized", FaultHTTPStatus.With("status", "401").With("header", "WWW-Authenticate=Bearer"), "authorize"},
		{"http", "403 Forbidden", FaultHTTPStatus.With("status", "403"), "authorize"},
		{"http", "503 Service Unavailable", FaultHTTPStatus.With("status", "503").With("header", "Retry-After=0"), "retry"},
		{"http", "a network error (connection reset)", FaultReset, "retry"},
		{"http", "400 with an empty body", FaultHTTPStatus.With("status", "400"), "legacy"},
		{"http", "404 with a body that is not JSON", FaultHTTPStatus.With("status", "404").With("body", testserver.BodyNonJSON), "legacy"},
		{"http", "405 with JSON that is not JSON-RPC", FaultHTTPStatus.With("status", "405").With("body", testserver.BodyJSONNotRPC), "legacy"},
		{"http", "400 with a non-modern JSON-RPC error", FaultHTTPStatus.With("status", "400").With("body", testserver.BodyLegacyError), "legacy"},
		{"http", "any status with -32601", FaultRPCError.With("code", "-32601").With("status", "404"), "legacy"},
		{"http", "400 with a modern -32022 body naming a mutual version", FaultHTTPStatus.With("status", "400").With("body", testserver.BodyModernError), "corrective"},
		{"http", "an unexpected status (418)", FaultHTTPStatus.With("status", "418"), "error"},
	}
}
