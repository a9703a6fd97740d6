package negotiation_test

import (
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/google/go-cmp/cmp"
)

const (
	v2026 = "2026-07-28"
	v1125 = "2025-11-25"
	v0618 = "2025-06-18"
)

type probeCase struct {
	name string
	// versions is ProbeContext.ClientVersions (nil: the default).
	versions []string
	o        negotiation.Outcome
	// want is the verdict with a fallback available.
	want summary
	// pinned is the verdict without a fallback. When nil it is want, except
	// that a Legacy or Reconnect want must become an Error verdict holding a
	// KindNegotiation *Error with the same reason (seed 003).
	pinned *summary
}

var (
	legacy = func(reason string) summary {
		return summary{Kind: negotiation.VerdictLegacy, Reason: reason}
	}
	modern = func(v string, supported ...string) summary {
		return summary{Kind: negotiation.VerdictModern, Version: v, Discover: supported}
	}
	errV = func(err string) summary { return summary{Kind: negotiation.VerdictError, Err: err} }
	pin  = func(s summary) *summary { return &s }
)

func runProbeCases(t *testing.T, transport negotiation.TransportKind, cases []probeCase) {
	t.Helper()
	for _, tc := range cases {
		for _, fallback := range []bool{true, false} {
			name := tc.name
			if !fallback {
				name += "/pinned"
			}
			t.Run(name, func(t *testing.T) {
				pc := negotiation.ProbeContext{
					ClientVersions:    tc.versions,
					RequestedVersion:  v2026,
					FallbackAvailable: fallback,
					Transport:         transport,
				}
				v := negotiation.ClassifyProbe(pc, tc.o)
				got := summarize(v)
				if v.Kind == negotiation.VerdictModern && v.Discover == nil {
					t.Errorf("ClassifyProbe = Modern without Discover")
				}
				want := tc.want
				if !fallback {
					if tc.pinned != nil {
						want = *tc.pinned
					} else if want.Kind == negotiation.VerdictLegacy || want.Kind == negotiation.VerdictReconnect {
						checkNegotiationError(t, v, want.Reason)
						return
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("ClassifyProbe(fallback=%v) mismatch (-want +got):\n%s", fallback, diff)
				}
			})
		}
	}
}

// checkNegotiationError checks the seed 003 rule: a row that would fall
// back becomes a typed negotiation error when there is no fallback.
func checkNegotiationError(t *testing.T, v negotiation.Verdict, reason string) {
	t.Helper()
	if v.Kind != negotiation.VerdictError {
		t.Fatalf("ClassifyProbe(pinned).Kind = %v, want error", v.Kind)
	}
	var ne *negotiation.Error
	if !errors.As(v.Err, &ne) {
		t.Fatalf("ClassifyProbe(pinned).Err = %v (%T), want *negotiation.Error", v.Err, v.Err)
	}
	if ne.Kind != negotiation.KindNegotiation || ne.Reason != reason {
		t.Errorf("ClassifyProbe(pinned).Err = {%v %q}, want {negotiation %q}", ne.Kind, ne.Reason, reason)
	}
	if v.Version != "" || v.Discover != nil {
		t.Errorf("ClassifyProbe(pinned) carries version %q / discover %v", v.Version, v.Discover)
	}
}

const (
	errInvalidDiscover = "error protocol|invalid discover result|0|0 <- other supportedVersions is not a list of strings"
)

// TestClassifyProbeStdio holds one case per stdio-relevant row of the seed
// 000 table ("both" and "stdio" rows), each also run without a fallback.
func TestClassifyProbeStdio(t *testing.T) {
	runProbeCases(t, negotiation.TransportStdio, []probeCase{
		{
			name: "both/valid DiscoverResult with a mutual modern version",
			o:    resultOutcome(discoverJSON(v2026, v1125)),
			want: modern(v2026, v2026, v1125),
		},
		{
			name: "both/DiscoverResult-shaped but invalid",
			o:    resultOutcome(`{"resultType":"complete","capabilities":{}}`),
			want: errV(errInvalidDiscover),
		},
		{
			name:   "both/no mutual modern version",
			o:      resultOutcome(discoverJSON("2030-01-01", v1125)),
			want:   errV("error protocol|no mutual modern version|0|0 <- upve 2026-07-28 [2030-01-01 2025-11-25]"),
			pinned: pin(errV("upve 2026-07-28 [2030-01-01 2025-11-25]")),
		},
		{
			name: "both/a result that is not DiscoverResult-shaped",
			o:    resultOutcome(`{"tools":[]}`),
			want: legacy(negotiation.ReasonNotDiscoverResult),
		},
		{
			name: "both/-32022 with a mutual modern version in data.supported",
			o:    rpcErrorOutcome(jsonrpc.CodeUnsupportedProtocolVersion, supported(v2026, v1125)),
			want: summary{Kind: negotiation.VerdictCorrective, Version: v2026, Err: "upve 2026-07-28 [2026-07-28 2025-11-25]"},
		},
		{
			name:   "both/-32022 without one",
			o:      rpcErrorOutcome(jsonrpc.CodeUnsupportedProtocolVersion, supported("2030-01-01")),
			want:   errV("error no common version|no common version|-32022|0 <- upve 2026-07-28 [2030-01-01]"),
			pinned: pin(errV("upve 2026-07-28 [2030-01-01]")),
		},
		{
			name: "both/-32021",
			o:    rpcErrorOutcome(jsonrpc.CodeMissingRequiredClientCapability, `{"requiredCapabilities":{"elicitation":{}}}`),
			want: errV("error protocol|modern error|-32021|0 <- jsonrpc -32021"),
		},
		{
			name: "both/-32020",
			o:    rpcErrorOutcome(jsonrpc.CodeHeaderMismatch, ""),
			want: errV("error protocol|modern error|-32020|0 <- jsonrpc -32020"),
		},
		{
			name: "stdio/any other JSON-RPC error/-32601",
			o:    rpcErrorOutcome(jsonrpc.CodeMethodNotFound, ""),
			want: legacy(negotiation.ReasonMethodNotFound),
		},
		{
			name: "stdio/any other JSON-RPC error/-32602",
			o:    rpcErrorOutcome(jsonrpc.CodeInvalidParams, ""),
			want: legacy(negotiation.ReasonRPCError),
		},
		{
			name: "stdio/any other JSON-RPC error/-32600",
			o:    rpcErrorOutcome(jsonrpc.CodeInvalidRequest, ""),
			want: legacy(negotiation.ReasonRPCError),
		},
		{
			name: "stdio/any other JSON-RPC error/-32603",
			o:    rpcErrorOutcome(jsonrpc.CodeInternalError, ""),
			want: legacy(negotiation.ReasonRPCError),
		},
		{
			name: "stdio/any other JSON-RPC error/-32000 server error",
			o:    rpcErrorOutcome(-32000, `"not initialized"`),
			want: legacy(negotiation.ReasonRPCError),
		},
		{
			name: "stdio/any other JSON-RPC error/application code 1",
			o:    rpcErrorOutcome(1, ""),
			want: legacy(negotiation.ReasonRPCError),
		},
		{
			name: "stdio/timeout",
			o:    negotiation.Outcome{Kind: negotiation.OutcomeTimeout},
			want: legacy(negotiation.ReasonTimeout),
		},
		{
			name: "stdio/the server process exited during the probe",
			o:    negotiation.Outcome{Kind: negotiation.OutcomeExited, Err: io.EOF},
			want: summary{Kind: negotiation.VerdictReconnect, Reason: negotiation.ReasonProcessExited, Err: "other EOF"},
		},
	})
}

// TestClassifyProbeHTTP holds one case per HTTP-relevant row of the seed
// 000 table ("both" and "HTTP" rows), each also run without a fallback.
func TestClassifyProbeHTTP(t *testing.T) {
	runProbeCases(t, negotiation.TransportHTTP, []probeCase{
		{
			name: "both/valid DiscoverResult with a mutual modern version",
			o:    httpJSON(200, respJSON(discoverJSON(v2026))),
			want: modern(v2026, v2026),
		},
		{
			name: "both/valid DiscoverResult with a mutual modern version/decoded result",
			o:    resultOutcome(discoverJSON(v2026)),
			want: modern(v2026, v2026),
		},
		{
			name: "both/DiscoverResult-shaped but invalid",
			o:    httpJSON(200, respJSON(`{"supportedVersions":"2026-07-28","capabilities":{}}`)),
			want: errV("error protocol|invalid discover result|0|200 <- other supportedVersions is not a list of strings"),
		},
		{
			name:   "both/no mutual modern version",
			o:      httpJSON(200, respJSON(discoverJSON(v1125, v0618))),
			want:   errV("error protocol|no mutual modern version|0|200 <- upve 2026-07-28 [2025-11-25 2025-06-18]"),
			pinned: pin(errV("upve 2026-07-28 [2025-11-25 2025-06-18]")),
		},
		{
			name: "both/a result that is not DiscoverResult-shaped",
			o:    httpJSON(200, respJSON(`{"tools":[]}`)),
			want: legacy(negotiation.ReasonNotDiscoverResult),
		},
		{
			name: "both/a result that is not DiscoverResult-shaped/decoded result",
			o:    resultOutcome(`{}`),
			want: legacy(negotiation.ReasonNotDiscoverResult),
		},
		{
			name: "both/-32022 with a mutual modern version in data.supported",
			o:    httpJSON(400, errJSON(jsonrpc.CodeUnsupportedProtocolVersion, supported(v2026, v1125))),
			want: summary{Kind: negotiation.VerdictCorrective, Version: v2026, Err: "upve 2026-07-28 [2026-07-28 2025-11-25]"},
		},
		{
			name: "both/-32022 with a mutual modern version in data.supported/decoded error",
			o:    rpcErrorOutcome(jsonrpc.CodeUnsupportedProtocolVersion, supported(v2026)),
			want: summary{Kind: negotiation.VerdictCorrective, Version: v2026, Err: "upve 2026-07-28 [2026-07-28]"},
		},
		{
			name:   "both/-32022 without one",
			o:      httpJSON(400, errJSON(jsonrpc.CodeUnsupportedProtocolVersion, supported("2030-01-01"))),
			want:   errV("error no common version|no common version|-32022|400 <- upve 2026-07-28 [2030-01-01]"),
			pinned: pin(errV("upve 2026-07-28 [2030-01-01]")),
		},
		{
			name: "both/-32021",
			o:    httpJSON(400, errJSON(jsonrpc.CodeMissingRequiredClientCapability, `{"requiredCapabilities":{}}`)),
			want: errV("error protocol|modern error|-32021|400 <- jsonrpc -32021"),
		},
		{
			name: "both/-32020",
			o:    httpJSON(400, errJSON(jsonrpc.CodeHeaderMismatch, "")),
			want: errV("error protocol|modern error|-32020|400 <- jsonrpc -32020"),
		},
		{
			name: "both/-32020/decoded error",
			o:    rpcErrorOutcome(jsonrpc.CodeHeaderMismatch, ""),
			want: errV("error protocol|modern error|-32020|0 <- jsonrpc -32020"),
		},
		{
			name: "HTTP/401",
			o:    httpOutcome(401, "", ""),
			want: summary{Kind: negotiation.VerdictAuthorize, Status: 401},
		},
		{
			name: "HTTP/403",
			o:    httpJSON(403, `{"error":"insufficient_scope"}`),
			want: summary{Kind: negotiation.VerdictAuthorize, Status: 403},
		},
		{
			name: "HTTP/408",
			o:    httpOutcome(408, "", ""),
			want: summary{Kind: negotiation.VerdictRetry, Status: 408, Reason: "status-408"},
		},
		{
			name: "HTTP/429",
			o:    httpOutcome(429, "text/plain", "slow down"),
			want: summary{Kind: negotiation.VerdictRetry, Status: 429, Reason: "status-429"},
		},
		{
			name: "HTTP/5xx/500",
			o:    httpJSON(500, errJSON(jsonrpc.CodeInternalError, "")),
			want: summary{Kind: negotiation.VerdictRetry, Status: 500, Reason: "status-500"},
		},
		{
			name: "HTTP/5xx/503",
			o:    httpOutcome(503, "text/html", "<h1>down</h1>"),
			want: summary{Kind: negotiation.VerdictRetry, Status: 503, Reason: "status-503"},
		},
		{
			name: "HTTP/5xx/599",
			o:    httpOutcome(599, "", ""),
			want: summary{Kind: negotiation.VerdictRetry, Status: 599, Reason: "status-599"},
		},
		{
			name: "HTTP/network error",
			o:    negotiation.Outcome{Kind: negotiation.OutcomeTransportError, Err: io.ErrUnexpectedEOF},
			want: summary{Kind: negotiation.VerdictRetry, Reason: negotiation.ReasonNetwork, Err: "other unexpected EOF"},
		},
		{
			name: "HTTP/timeout",
			o:    negotiation.Outcome{Kind: negotiation.OutcomeTimeout},
			want: summary{Kind: negotiation.VerdictRetry, Reason: negotiation.ReasonTimeout},
		},
		{
			name: "HTTP/400 with a non-modern body/empty",
			o:    httpOutcome(400, "", ""),
			want: legacy("status-400"),
		},
		{
			name: "HTTP/404 with a non-modern body/not JSON",
			o:    httpJSON(404, "404 page not found"),
			want: legacy("status-404"),
		},
		{
			name: "HTTP/405 with a non-modern body/not JSON-RPC",
			o:    httpJSON(405, `{"message":"method not allowed"}`),
			want: legacy("status-405"),
		},
		{
			name: "HTTP/400 with a non-modern body/non-modern error",
			o:    httpJSON(400, errJSON(jsonrpc.CodeInvalidRequest, "")),
			want: legacy("status-400"),
		},
		{
			name: "HTTP/400 with a non-modern body/-32602",
			o:    httpJSON(400, errJSON(jsonrpc.CodeInvalidParams, `"Bad Request: No valid session ID provided"`)),
			want: legacy("status-400"),
		},
		{
			name: "HTTP/404 with a non-modern body/text/html",
			o:    httpOutcome(404, "text/html; charset=utf-8", "<html>not found</html>"),
			want: legacy("status-404"),
		},
		{
			name: "HTTP/any status with JSON-RPC -32601/404 (open question A3)",
			o:    httpJSON(404, errJSON(jsonrpc.CodeMethodNotFound, "")),
			want: legacy(negotiation.ReasonMethodNotFound),
		},
		{
			name: "HTTP/any status with JSON-RPC -32601/200",
			o:    httpJSON(200, errJSON(jsonrpc.CodeMethodNotFound, "")),
			want: legacy(negotiation.ReasonMethodNotFound),
		},
		{
			name: "HTTP/any status with JSON-RPC -32601/400",
			o:    httpJSON(400, errJSON(jsonrpc.CodeMethodNotFound, "")),
			want: legacy(negotiation.ReasonMethodNotFound),
		},
		{
			name: "HTTP/any status with JSON-RPC -32601/500",
			o:    httpJSON(500, errJSON(jsonrpc.CodeMethodNotFound, "")),
			want: legacy(negotiation.ReasonMethodNotFound),
		},
		{
			name: "HTTP/any status with JSON-RPC -32601/decoded 2xx error",
			o:    rpcErrorOutcome(jsonrpc.CodeMethodNotFound, ""),
			want: legacy(negotiation.ReasonMethodNotFound),
		},
		{
			name: "HTTP/any other status or error/302",
			o:    httpOutcome(302, "", ""),
			want: errV("error http|unexpected HTTP status|0|302"),
		},
		{
			name: "HTTP/any other status or error/415 with a non-modern error",
			o:    httpJSON(415, errJSON(jsonrpc.CodeInvalidRequest, "")),
			want: errV("error http|unexpected HTTP status|-32600|415"),
		},
		{
			name: "HTTP/any other status or error/200 with text/html",
			o:    httpOutcome(200, "text/html", "<html>hello</html>"),
			want: errV("error http|no JSON-RPC response|0|200"),
		},
		{
			name: "HTTP/any other status or error/process exit on HTTP",
			o:    negotiation.Outcome{Kind: negotiation.OutcomeExited},
			want: errV("error transport|unexpected outcome exited on http|0|0"),
		},
	})
}

// TestClassifyProbeEdges covers the edges of the rows: body decoding, the
// -32022 variants of open question A5, client version lists and malformed
// outcomes.
func TestClassifyProbeEdges(t *testing.T) {
	const sseCRLFMultiline = ": keep-alive comment\r\n" +
		"event: message\r\n" +
		"id: 7\r\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\r\n" +
		"data: \"error\":{\"code\":-32022,\"message\":\"unsupported\",\r\n" +
		"data:\"data\":{\"supported\":[\"2026-07-28\"]}}}\r\n" +
		"\r\n"
	t.Run("http", func(t *testing.T) {
		runProbeCases(t, negotiation.TransportHTTP, []probeCase{
			{
				name: "empty body 200",
				o:    httpJSON(200, ""),
				want: errV("error http|no JSON-RPC response|0|200"),
			},
			{
				name: "white space body 404",
				o:    httpJSON(404, " \r\n "),
				want: legacy("status-404"),
			},
			{
				name: "non-JSON body 200",
				o:    httpJSON(200, "{not json"),
				want: errV("error http|no JSON-RPC response|0|200"),
			},
			{
				name: "JSON not JSON-RPC 200",
				o:    httpJSON(200, `{"ok":true}`),
				want: errV("error http|no JSON-RPC response|0|200"),
			},
			{
				name: "2xx non-modern JSON-RPC error (open question A4)",
				o:    httpJSON(200, errJSON(jsonrpc.CodeInvalidParams, "")),
				want: legacy(negotiation.ReasonRPCError),
			},
			{
				name: "2xx non-modern JSON-RPC error 202",
				o:    httpJSON(202, errJSON(-32000, "")),
				want: legacy(negotiation.ReasonRPCError),
			},
			{
				name: "JSON-RPC request body is not a response",
				o:    httpJSON(400, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
				want: legacy("status-400"),
			},
			{
				name: "batch body is not a response",
				o:    httpJSON(400, "["+errJSON(jsonrpc.CodeUnsupportedProtocolVersion, "")+"]"),
				want: legacy("status-400"),
			},
			{
				name: "SSE body holding the JSON-RPC error with CRLF and multi-line data",
				o:    httpOutcome(400, "text/event-stream", sseCRLFMultiline),
				want: summary{Kind: negotiation.VerdictCorrective, Version: v2026, Err: "upve 2026-07-28 [2026-07-28]"},
			},
			{
				name: "SSE 200 with a DiscoverResult after a notification and a non-JSON event",
				o: httpOutcome(200, "text/event-stream; charset=utf-8",
					"data: not json\n\n"+
						`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`+"\n\n"+
						"data: "+respJSON(discoverJSON(v2026))+"\n\n"),
				want: modern(v2026, v2026),
			},
			{
				name: "SSE with CR line endings and a final event without blank line",
				o:    httpOutcome(200, "text/event-stream", ":c\r\rdata: "+respJSON(`{"tools":[]}`)),
				want: legacy(negotiation.ReasonNotDiscoverResult),
			},
			{
				name: "SSE data line without colon and an empty event",
				o:    httpOutcome(200, "text/event-stream", "data\n\nretry: 10\n\n"),
				want: errV("error http|no JSON-RPC response|0|200"),
			},
			{
				name: "SSE 404 without any event",
				o:    httpOutcome(404, "text/event-stream", ": only a comment\n\n"),
				want: legacy("status-404"),
			},
			{
				name: "SSE 500 with a -32601 event",
				o:    httpOutcome(500, "text/event-stream", "data: "+errJSON(jsonrpc.CodeMethodNotFound, "")+"\n\n"),
				want: legacy(negotiation.ReasonMethodNotFound),
			},
			{
				name: "modern evidence wins over 5xx",
				o:    httpJSON(503, errJSON(jsonrpc.CodeUnsupportedProtocolVersion, supported(v2026))),
				want: summary{Kind: negotiation.VerdictCorrective, Version: v2026, Err: "upve 2026-07-28 [2026-07-28]"},
			},
			{
				name: "modern evidence wins over 401",
				o:    httpJSON(401, errJSON(jsonrpc.CodeHeaderMismatch, "")),
				want: errV("error protocol|modern error|-32020|401 <- jsonrpc -32020"),
			},
			{
				name: "DiscoverResult wins over 404",
				o:    httpJSON(404, respJSON(discoverJSON(v2026))),
				want: modern(v2026, v2026),
			},
			{
				name: "non-DiscoverResult result on 404",
				o:    httpJSON(404, respJSON(`{}`)),
				want: legacy("status-404"),
			},
			{
				name: "application/problem+json with a modern error",
				o:    httpOutcome(400, "application/problem+json", errJSON(jsonrpc.CodeHeaderMismatch, "")),
				want: errV("error protocol|modern error|-32020|400 <- jsonrpc -32020"),
			},
			{
				name: "no content type is sniffed as JSON",
				o:    httpOutcome(400, "", errJSON(jsonrpc.CodeHeaderMismatch, "")),
				want: errV("error protocol|modern error|-32020|400 <- jsonrpc -32020"),
			},
			{
				name: "malformed content type parameters are tolerated",
				o:    httpOutcome(400, "application/json; =", errJSON(jsonrpc.CodeHeaderMismatch, "")),
				want: errV("error protocol|modern error|-32020|400 <- jsonrpc -32020"),
			},
			{
				name: "malformed SSE content type is still an event stream",
				o:    httpOutcome(400, "Text/Event-Stream;;", "data: "+errJSON(jsonrpc.CodeHeaderMismatch, "")+"\n\n"),
				want: errV("error protocol|modern error|-32020|400 <- jsonrpc -32020"),
			},
			{
				name: "mislabeled text/plain JSON-RPC modern error is still modern",
				o:    httpOutcome(400, "text/plain", errJSON(jsonrpc.CodeUnsupportedProtocolVersion, supported(v2026))),
				want: summary{Kind: negotiation.VerdictCorrective, Version: v2026, Err: "upve 2026-07-28 [2026-07-28]"},
			},
			{
				name:   "modern error without id or jsonrpc member is still modern",
				o:      httpJSON(400, `{"error":{"code":-32022,"message":"x","data":null}}`),
				want:   errV("error no common version|no common version|-32022|400 <- upve 2026-07-28 []"),
				pinned: pin(errV("upve 2026-07-28 []")),
			},
			{
				name: "loose error with a non-integer code is not JSON-RPC",
				o:    httpJSON(400, `{"error":{"code":1.5,"message":"x"}}`),
				want: legacy("status-400"),
			},
			{
				name: "loose error that is not an object is not JSON-RPC",
				o:    httpJSON(400, `{"error":"bad"}`),
				want: legacy("status-400"),
			},
			{
				name: "already decoded response",
				o: negotiation.Outcome{Kind: negotiation.OutcomeHTTP, Status: 400, Body: []byte("ignored"),
					Response: &jsonrpc.Response{Error: rpcErr(jsonrpc.CodeUnsupportedProtocolVersion, supported(v2026))}},
				want: summary{Kind: negotiation.VerdictCorrective, Version: v2026, Err: "upve 2026-07-28 [2026-07-28]"},
			},
			{
				name:   "-32022 whose data.supported shares only a legacy version (open question A5)",
				o:      httpJSON(400, errJSON(jsonrpc.CodeUnsupportedProtocolVersion, supported(v1125))),
				want:   summary{Kind: negotiation.VerdictLegacy, Version: v1125, Reason: negotiation.ReasonLegacyVersionOnly},
				pinned: pin(errV("upve 2026-07-28 [2025-11-25]")),
			},
			{
				name:     "-32022 legacy-only picks in client order",
				versions: []string{v2026, v0618, v1125},
				o:        httpJSON(400, errJSON(jsonrpc.CodeUnsupportedProtocolVersion, supported(v1125, v0618))),
				want:     summary{Kind: negotiation.VerdictLegacy, Version: v0618, Reason: negotiation.ReasonLegacyVersionOnly},
				pinned:   pin(errV("upve 2026-07-28 [2025-11-25 2025-06-18]")),
			},
			{
				name:   "-32022 without data",
				o:      httpJSON(400, errJSON(jsonrpc.CodeUnsupportedProtocolVersion, "")),
				want:   errV("error no common version|no common version|-32022|400 <- upve 2026-07-28 []"),
				pinned: pin(errV("upve 2026-07-28 []")),
			},
			{
				name:   "-32022 with malformed data",
				o:      httpJSON(400, errJSON(jsonrpc.CodeUnsupportedProtocolVersion, `{"supported":"2026-07-28"}`)),
				want:   errV("error no common version|no common version|-32022|400 <- upve 2026-07-28 []"),
				pinned: pin(errV("upve 2026-07-28 []")),
			},
			{
				name: "-32022 with non-string entries skipped and requested from data",
				o:    httpJSON(400, errJSON(jsonrpc.CodeUnsupportedProtocolVersion, `{"supported":[1,"2026-07-28"],"requested":"1900-01-01"}`)),
				want: summary{Kind: negotiation.VerdictCorrective, Version: v2026, Err: "upve 1900-01-01 [2026-07-28]"},
			},
			{
				name:     "-32022 corrective picks the client's preferred modern version",
				versions: []string{"2027-01-01", v2026, v1125},
				o:        httpJSON(400, errJSON(jsonrpc.CodeUnsupportedProtocolVersion, supported(v2026, "2027-01-01"))),
				want:     summary{Kind: negotiation.VerdictCorrective, Version: "2027-01-01", Err: "upve 2026-07-28 [2026-07-28 2027-01-01]"},
			},
			{
				name:     "DiscoverResult picks the client's preferred modern version",
				versions: []string{v2026, "2027-01-01"},
				o:        resultOutcome(discoverJSON("2027-01-01", v2026)),
				want:     modern(v2026, "2027-01-01", v2026),
			},
			{
				name:     "legacy-only client has no mutual modern version",
				versions: []string{v1125},
				o:        resultOutcome(discoverJSON(v2026, v1125)),
				want:     errV("error protocol|no mutual modern version|0|0 <- upve 2026-07-28 [2026-07-28 2025-11-25]"),
				pinned:   pin(errV("upve 2026-07-28 [2026-07-28 2025-11-25]")),
			},
			{
				name:   "DiscoverResult with empty supportedVersions",
				o:      resultOutcome(`{"supportedVersions":[],"capabilities":{}}`),
				want:   errV("error protocol|no mutual modern version|0|0 <- upve 2026-07-28 []"),
				pinned: pin(errV("upve 2026-07-28 []")),
			},
			{
				name: "DiscoverResult-shaped by resultType alone",
				o:    resultOutcome(`{"resultType":"input_required","inputRequests":{}}`),
				want: errV(`error protocol|invalid discover result|0|0 <- other resultType is not "complete"`),
			},
			{
				name: "non-object result",
				o:    resultOutcome(`[1,2]`),
				want: legacy(negotiation.ReasonNotDiscoverResult),
			},
			{
				name: "rpc-error outcome without an error",
				o:    negotiation.Outcome{Kind: negotiation.OutcomeRPCError},
				want: errV("error protocol|unexpected outcome|0|0"),
			},
			{
				name: "unknown outcome kind",
				o:    negotiation.Outcome{Kind: negotiation.OutcomeKind(99)},
				want: errV("error transport|unexpected outcome OutcomeKind(99) on http|0|0"),
			},
		})
	})
	t.Run("stdio", func(t *testing.T) {
		runProbeCases(t, negotiation.TransportStdio, []probeCase{
			{
				name:   "-32022 whose data.supported shares only a legacy version (open question A5)",
				o:      rpcErrorOutcome(jsonrpc.CodeUnsupportedProtocolVersion, supported(v0618)),
				want:   summary{Kind: negotiation.VerdictLegacy, Version: v0618, Reason: negotiation.ReasonLegacyVersionOnly},
				pinned: pin(errV("upve 2026-07-28 [2025-06-18]")),
			},
			{
				name:   "-32022 without data",
				o:      rpcErrorOutcome(jsonrpc.CodeUnsupportedProtocolVersion, ""),
				want:   errV("error no common version|no common version|-32022|0 <- upve 2026-07-28 []"),
				pinned: pin(errV("upve 2026-07-28 []")),
			},
			{
				name: "process exit without detail",
				o:    negotiation.Outcome{Kind: negotiation.OutcomeExited},
				want: summary{Kind: negotiation.VerdictReconnect, Reason: negotiation.ReasonProcessExited},
			},
			{
				name: "transport error on stdio is typed",
				o:    negotiation.Outcome{Kind: negotiation.OutcomeTransportError, Err: io.ErrClosedPipe},
				want: errV("error transport|unexpected outcome|0|0 <- other io: read/write on closed pipe"),
			},
			{
				name: "HTTP outcome on stdio is typed",
				o:    httpJSON(404, ""),
				want: errV("error transport|unexpected outcome http on stdio|0|0"),
			},
			{
				name: "rpc-error outcome without an error",
				o:    negotiation.Outcome{Kind: negotiation.OutcomeRPCError},
				want: errV("error protocol|unexpected outcome|0|0"),
			},
			{
				name: "null result",
				o:    resultOutcome(`null`),
				want: legacy(negotiation.ReasonNotDiscoverResult),
			},
		})
	})
}

// TestClassifyProbeModernErrorNeverLegacy checks, over every transport,
// fallback setting, HTTP status and data shape, that a recognized modern
// error never yields a Legacy or Reconnect verdict unless -32022 named a
// legacy version we share (open question A5).
func TestClassifyProbeModernErrorNeverLegacy(t *testing.T) {
	datas := []string{"", `null`, `{}`, supported("2030-01-01"), supported(v2026)}
	for _, code := range []int64{-32020, -32021, -32022} {
		for _, data := range datas {
			for _, fallback := range []bool{true, false} {
				outcomes := []negotiation.Outcome{rpcErrorOutcome(code, data)}
				for _, st := range []int{200, 400, 401, 404, 405, 500, 302} {
					outcomes = append(outcomes, httpJSON(st, errJSON(code, data)))
				}
				for i, o := range outcomes {
					tk := negotiation.TransportHTTP
					if i == 0 {
						tk = negotiation.TransportStdio
					}
					v := negotiation.ClassifyProbe(negotiation.ProbeContext{FallbackAvailable: fallback, Transport: tk}, o)
					if v.Kind == negotiation.VerdictLegacy || v.Kind == negotiation.VerdictReconnect || v.Kind == negotiation.VerdictRetry || v.Kind == negotiation.VerdictAuthorize {
						t.Errorf("ClassifyProbe(code %d, data %s, status %d, fallback %v) = %v, want no fallback", code, data, o.Status, fallback, v.Kind)
					}
				}
			}
		}
	}
}

func TestVerdictErrorsMatchSentinels(t *testing.T) {
	pc := negotiation.ProbeContext{Transport: negotiation.TransportHTTP, RequestedVersion: v2026}
	v := negotiation.ClassifyProbe(pc, httpJSON(400, errJSON(jsonrpc.CodeUnsupportedProtocolVersion, supported(v1125))))
	if !errors.Is(v.Err, jsonrpc.ErrUnsupportedProtocolVersion) {
		t.Errorf("pinned -32022 legacy-only: errors.Is(%v, ErrUnsupportedProtocolVersion) = false", v.Err)
	}
	if errors.Is(v.Err, jsonrpc.ErrMethodNotFound) {
		t.Errorf("errors.Is(%v, ErrMethodNotFound) = true", v.Err)
	}
	v = negotiation.ClassifyProbe(pc, httpJSON(400, errJSON(jsonrpc.CodeHeaderMismatch, "")))
	if !errors.Is(v.Err, jsonrpc.ErrHeaderMismatch) {
		t.Errorf("-32020: errors.Is(%v, ErrHeaderMismatch) = false", v.Err)
	}
	if code, ok := jsonrpc.Code(v.Err); !ok || code != jsonrpc.CodeHeaderMismatch {
		t.Errorf("jsonrpc.Code(%v) = %d, %v", v.Err, code, ok)
	}
}

func TestStringers(t *testing.T) {
	tests := []struct{ got, want string }{
		{negotiation.TransportStdio.String(), "stdio"},
		{negotiation.TransportHTTP.String(), "http"},
		{negotiation.OutcomeResult.String(), "result"},
		{negotiation.OutcomeRPCError.String(), "rpc-error"},
		{negotiation.OutcomeTimeout.String(), "timeout"},
		{negotiation.OutcomeExited.String(), "exited"},
		{negotiation.OutcomeHTTP.String(), "http"},
		{negotiation.OutcomeTransportError.String(), "transport-error"},
		{negotiation.OutcomeKind(42).String(), "OutcomeKind(42)"},
		{negotiation.VerdictModern.String(), "modern"},
		{negotiation.VerdictCorrective.String(), "corrective"},
		{negotiation.VerdictLegacy.String(), "legacy"},
		{negotiation.VerdictReconnect.String(), "reconnect"},
		{negotiation.VerdictAuthorize.String(), "authorize"},
		{negotiation.VerdictRetry.String(), "retry"},
		{negotiation.VerdictError.String(), "error"},
		{negotiation.VerdictKind(42).String(), "VerdictKind(42)"},
		{negotiation.KindProtocol.String(), "protocol"},
		{negotiation.KindNoCommonVersion.String(), "no common version"},
		{negotiation.KindNegotiation.String(), "negotiation"},
		{negotiation.KindHTTP.String(), "http"},
		{negotiation.KindTransport.String(), "transport"},
		{negotiation.ErrorKind(42).String(), "ErrorKind(42)"},
		{negotiation.EraModern.String(), "modern"},
		{negotiation.EraLegacy.String(), "legacy"},
		{negotiation.EraUnknown.String(), "unknown"},
		{(&negotiation.Error{Kind: negotiation.KindHTTP, Reason: negotiation.ReasonUnexpectedStatus, Status: 302}).Error(),
			"negotiation: http: unexpected HTTP status (HTTP status 302)"},
		{(&negotiation.Error{Kind: negotiation.KindNoCommonVersion, Reason: negotiation.ReasonNoCommonVersion, Code: -32022,
			Err: &negotiation.UnsupportedProtocolVersionError{Supported: []string{"a", "b"}, Requested: "c"}}).Error(),
			`negotiation: no common version (code -32022): negotiation: unsupported protocol version "c" (server supports [a, b])`},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("String() = %q, want %q", tc.got, tc.want)
		}
	}
}

// TestClassifyProbeHugeSupportedList: a -32022 whose data.supported lists
// millions of entries costs memory in proportion to the versions kept,
// not a decoded element apiece. The list used to be decoded whole into
// raw elements first: a 16 MiB answer of numbers took gigabytes and
// seconds to classify.
func TestClassifyProbeHugeSupportedList(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	data := json.RawMessage(`{"supported":[` + strings.Repeat("0,", 1<<20) + `"2025-06-18"]}`)
	pc := negotiation.ProbeContext{RequestedVersion: v2026, FallbackAvailable: true, Transport: negotiation.TransportStdio}
	o := negotiation.Outcome{Kind: negotiation.OutcomeRPCError, Error: &jsonrpc.Error{Code: jsonrpc.CodeUnsupportedProtocolVersion, Data: data}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	v := negotiation.ClassifyProbe(pc, o)
	runtime.ReadMemStats(&after)
	if v.Kind != negotiation.VerdictLegacy || v.Version != v0618 {
		t.Errorf("ClassifyProbe = %v %q, want legacy %q", v.Kind, v.Version, v0618)
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(64<<10); got > limit {
		t.Errorf("ClassifyProbe of a %d-byte -32022 allocated %d bytes, want at most %d", len(data), got, limit)
	}
}

// TestClassifyProbeSupportedAsDecoded: data.supported and data.requested
// of a -32022 read as decoding data into a struct with a
// []json.RawMessage and a *string field does (keys matched as
// encoding/json matches them, a member of the wrong type leaving the
// value before it, null entries reading as ""), keeping the entries that
// decode as strings.
func TestClassifyProbeSupportedAsDecoded(t *testing.T) {
	for _, data := range []string{
		`{"supported":["2026-07-28","x"],"requested":"r"}`,
		`{"supported":[1,"a\u0062",null,{},["b"],true,"caf\u00e9"]}`,
		"{\"supported\":[\"bad\xff\",\"\\ud800\"]}",
		`{"Supported":["a"],"SUPPORTED":["b"]}`,
		`{"supported":["a"],"supported":5,"requested":"r","requested":7}`,
		`{"supported":["a"],"supported":null,"requested":"r","requested":null}`,
		`{"supported":"a"}`, `{"supported":{}}`, `{"supported":[]}`, `{}`, `[]`, `"x"`, `null`, `7`,
		`{"supported":["a"]} x`, `{"supported":["a",]}`, `{"requested":""}`, `{"ſupported":["s"],"requeſted":"q"}`,
		` { "supported" : [ "a" , "b" ] , "requested" : "c" } `,
	} {
		var want struct {
			Supported []json.RawMessage `json:"supported"`
			Requested *string           `json:"requested"`
		}
		_ = json.Unmarshal([]byte(data), &want)
		var wantSupported []string
		for _, s := range want.Supported {
			var v string
			if json.Unmarshal(s, &v) == nil {
				wantSupported = append(wantSupported, v)
			}
		}
		wantRequested := "req"
		if want.Requested != nil && *want.Requested != "" {
			wantRequested = *want.Requested
		}
		pc := negotiation.ProbeContext{ClientVersions: []string{"9999-01-01"}, RequestedVersion: "req", Transport: negotiation.TransportStdio}
		v := negotiation.ClassifyProbe(pc, negotiation.Outcome{Kind: negotiation.OutcomeRPCError,
			Error: &jsonrpc.Error{Code: jsonrpc.CodeUnsupportedProtocolVersion, Data: json.RawMessage(data)}})
		upv, ok := errors.AsType[*negotiation.UnsupportedProtocolVersionError](v.Err)
		if !ok {
			t.Errorf("data %s: verdict %v, err %v; want an *UnsupportedProtocolVersionError", data, v.Kind, v.Err)
			continue
		}
		if diff := cmp.Diff(wantSupported, upv.Supported); diff != "" || upv.Requested != wantRequested {
			t.Errorf("data %s: Supported, Requested = %q, %q, want %q, %q", data, upv.Supported, upv.Requested, wantSupported, wantRequested)
		}
	}
}
