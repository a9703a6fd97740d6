package e2e

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/transport"
)

// Why rows do not apply to some transports.
const (
	naHTTPOnly  = "an HTTP-status/HTTP-body row: stream transports (stdio, WebSocket) have no status line or content type"
	naStdioWS   = "a stream row: on HTTP the same outcome is another row (other JSON-RPC error: the 2xx row)"
	naStdioOnly = "seed 003: only the stdio child process reads a probe timeout as legacy; elsewhere it is the retry row"
	naWSOnly    = "a dropped stream connection: on stdio it is the exit row, on HTTP each POST is its own connection"
	naNoise     = "stdout noise is a stream-framing matter; on HTTP non-JSON bodies are the 400/404/405 rows"
	naExit      = "on HTTP there is no process to exit; a dropped connection is the network-error (retry) row"
	naSession   = "session expiry is a legacy Streamable HTTP concept: stream transports and the modern era have no session"
	naStream    = "per-request response streams exist only on Streamable HTTP; on stream transports a broken stream is the exit row"
)

// rows is the matrix: one entry per row of the seed-000 probe table and per
// setting of its knobs, then the transport and server-kind rows.
func rows() []row {
	stream := only(naStdioWS, kindStdio, kindWS)
	httpOnly := only(naHTTPOnly, kindHTTP)
	rs := []row{
		{
			name:   "valid DiscoverResult",
			expect: modernEvidence(1),
		},
		{
			name:   "DiscoverResult-shaped but invalid",
			server: faults(testserver.Fault{Kind: testserver.FaultDiscoverInvalid}),
			expect: probeError(1, negErr(negotiation.KindProtocol), negErr(negotiation.KindProtocol)),
		},
		{
			name:   "no mutual modern version",
			server: faults(testserver.Fault{Kind: testserver.FaultDiscoverNoMutual, Supported: []string{"2099-01-01"}}),
			expect: probeError(1, both(negErr(negotiation.KindProtocol), upvErr()), upvErr()),
		},
		{
			name:   "result not DiscoverResult-shaped",
			server: faults(testserver.Fault{Kind: testserver.FaultDiscoverNotShaped}),
			expect: legacyEvidence(1),
		},
		{
			name:   "-32022 with a mutual modern version (corrective: one re-probe)",
			server: faults(testserver.Fault{Kind: testserver.FaultUnsupportedVersion, Times: 1}),
			expect: modernEvidence(2),
		},
		{
			name:   "-32022 without a mutual version",
			server: faults(testserver.Fault{Kind: testserver.FaultUnsupportedVersion, Supported: []string{"2099-01-01"}}),
			expect: probeError(1, both(negErr(negotiation.KindNoCommonVersion), upvErr()), upvErr()),
		},
		{
			// Open question A5: a -32022 sharing only a legacy version runs
			// initialize with that version (Auto); without a fallback it is
			// the typed error.
			name:   "-32022 sharing only a legacy version",
			server: faults(testserver.Fault{Kind: testserver.FaultUnsupportedVersion, Supported: []string{oldV}}),
			expect: func(k string, m mode) want {
				if m.p == client.Auto {
					return want{era: negotiation.EraLegacy, version: oldV, initVersion: oldV, methods: seq(mDiscover, mInitialize, mInitialized, mCall)}
				}
				return probeError(1, nil, upvErr())(k, m)
			},
		},
		{
			name:   "second -32022 after the corrective retry",
			server: faults(testserver.Fault{Kind: testserver.FaultUnsupportedVersion, Times: 2}),
			expect: probeError(2, upvErr(), upvErr()),
		},
		{
			name:   "-32021 missing capability",
			server: faults(testserver.Fault{Kind: testserver.FaultMissingCapability}),
			expect: probeError(1, modernErr(jsonrpc.ErrMissingRequiredClientCapability), modernErr(jsonrpc.ErrMissingRequiredClientCapability)),
		},
		{
			name:   "-32020 header mismatch",
			server: faults(testserver.Fault{Kind: testserver.FaultHeaderMismatch}),
			expect: probeError(1, modernErr(jsonrpc.ErrHeaderMismatch), modernErr(jsonrpc.ErrHeaderMismatch)),
		},
	}

	// stdio (and WebSocket, a stream transport with stdio semantics) rows.
	for _, code := range []int64{jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidParams, jsonrpc.CodeInternalError, -32000} {
		rs = append(rs, row{
			name:   "stream: other JSON-RPC error " + strconv.FormatInt(code, 10),
			na:     stream,
			server: faults(testserver.Fault{Kind: testserver.FaultRPCError, Code: code, Message: "nope"}),
			expect: legacyEvidence(1),
		})
	}
	rs = append(rs,
		row{
			// Seed 003: only the stdio child process reads a probe timeout
			// as legacy; on WebSocket it is the retry row.
			name:   "stdio: timeout",
			na:     only(naStdioOnly, kindStdio),
			short:  true,
			server: faults(testserver.Fault{Kind: testserver.FaultSilent}),
			expect: legacyEvidence(1),
		},
		row{
			// stdio: the first process exits on the probe and writes the
			// marker; the respawned one is initialized.
			name:   "stdio: server exited during the probe (respawn, then initialize)",
			na:     only(naExit, kindStdio),
			server: faults(testserver.Fault{Kind: testserver.FaultExit, Times: 1}),
			expect: func(k string, m mode) want {
				w := legacyEvidence(1)(k, m)
				if m.p == client.Auto {
					w.procs = 2
					w.extra = func(ck *checker, procs []process) {
						if len(procs) != 2 || procs[0].Exit != "fault" || procs[1].Exit != "eof" ||
							procs[0].PID == procs[1].PID || procs[1].Received[0].Method != mInitialize {
							ck.errorf("processes = %+v, want one that exited on the probe, then one initialized", summary(procs))
						}
					}
				}
				return w
			},
		},
		row{
			// Seed 003: a WebSocket is HTTP-like, so a connection the server
			// drops during the probe is the network-error row: retried on a
			// new connection, never a legacy verdict.
			name:   "WebSocket: server dropped the connection during the probe (retried, then modern)",
			na:     only(naWSOnly, kindWS),
			server: faults(testserver.Fault{Kind: testserver.FaultExit, Times: 1}),
			expect: modernEvidence(2),
		},
	)

	// HTTP rows.
	for _, st := range []int{401, 403} {
		for _, auth := range []bool{false, true} {
			name := "HTTP " + strconv.Itoa(st) + " without auth (typed auth error)"
			if auth {
				name = "HTTP " + strconv.Itoa(st) + " with an Authorize hook (token, probe again, modern)"
			}
			challenge := `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`
			r := row{
				name: name,
				na:   httpOnly,
				auth: auth,
				server: faults(testserver.Fault{Kind: testserver.FaultHTTPStatus, Status: st, Times: 1,
					Header: http.Header{"Www-Authenticate": {challenge}}}),
			}
			if auth {
				r.expect = func(k string, m mode) want {
					w := modernEvidence(2)(k, m)
					if _, ok := legacyMode(m.p); !ok {
						w.extra = func(ck *checker, procs []process) {
							recs := procs[0].Received
							if got := recs[0].Headers.Get("Authorization"); got != "" {
								ck.errorf("first probe carried Authorization %q, want none", got)
							}
							if got := recs[1].Headers.Get("Authorization"); got != "Bearer let-me-in" {
								ck.errorf("second probe carried Authorization %q, want the hook's token", got)
							}
						}
					}
					return w
				}
			} else {
				authErr := asType("*engine.AuthRequiredError naming the status and challenge", func(e *engine.AuthRequiredError) bool {
					return e.Status == st && e.Challenge == challenge
				})
				r.expect = probeError(1, authErr, authErr)
			}
			rs = append(rs, r)
		}
	}
	retry := func(name string, f testserver.Fault) {
		f.Times = 2
		na := httpOnly
		if f.Kind == testserver.FaultSilent {
			// Seed 003: the timeout row of HTTP is every non-stdio
			// transport's.
			na = only(naStdioOnly, kindHTTP, kindWS)
			name = "HTTP and WebSocket retry then success: " + name
		} else {
			name = "HTTP retry then success: " + name
		}
		rs = append(rs, row{name: name, na: na, short: f.Kind == testserver.FaultSilent, server: faults(f), expect: modernEvidence(3)})
	}
	for _, st := range []int{408, 429, 500, 502, 503} {
		f := testserver.Fault{Kind: testserver.FaultHTTPStatus, Status: st}
		if st == 429 || st == 503 {
			f.Header = http.Header{"Retry-After": {"0"}}
		}
		retry(strconv.Itoa(st), f)
	}
	retry("connection reset", testserver.Fault{Kind: testserver.FaultReset})
	retry("timeout", testserver.Fault{Kind: testserver.FaultSilent})
	rs = append(rs, row{
		name:   "HTTP 503 forever (retries exhausted: typed error, never a downgrade)",
		na:     httpOnly,
		server: faults(testserver.Fault{Kind: testserver.FaultHTTPStatus, Status: 503}),
		expect: probeError(4, negErr(negotiation.KindTransport), negErr(negotiation.KindTransport)),
	})
	bodies := []struct{ name, body, ctype string }{
		{"empty body", "", ""},
		{"non-JSON body", testserver.BodyNonJSON, "text/html"},
		{"JSON, not JSON-RPC", testserver.BodyJSONNotRPC, "application/json"},
		{"non-modern JSON-RPC error", testserver.BodyLegacyError, "application/json"},
	}
	for _, st := range []int{400, 404, 405} {
		for _, b := range bodies {
			rs = append(rs, row{
				name:   "HTTP " + strconv.Itoa(st) + " with " + b.name + " (legacy)",
				na:     httpOnly,
				server: faults(testserver.Fault{Kind: testserver.FaultHTTPStatus, Status: st, Body: b.body, ContentType: b.ctype}),
				expect: legacyEvidence(1),
			})
		}
		rs = append(rs, row{
			// The modern body is a -32022 naming 2026-07-28: corrective
			// re-probe, which the server then answers.
			name:   "HTTP " + strconv.Itoa(st) + " with a modern error body (modern evidence)",
			na:     httpOnly,
			server: faults(testserver.Fault{Kind: testserver.FaultHTTPStatus, Status: st, Body: testserver.BodyModernError, ContentType: "application/json", Times: 1}),
			expect: modernEvidence(2),
		})
	}
	for _, st := range []int{200, 400, 404} {
		rs = append(rs, row{
			name:   "HTTP " + strconv.Itoa(st) + " with JSON-RPC -32601 (legacy)",
			na:     httpOnly,
			server: faults(testserver.Fault{Kind: testserver.FaultRPCError, Code: jsonrpc.CodeMethodNotFound, Message: "Method not found", Status: st}),
			expect: legacyEvidence(1),
		})
	}
	rs = append(rs,
		row{
			// Open question A4: a 2xx with a non-modern JSON-RPC error is
			// legacy evidence on HTTP too.
			name:   "HTTP 200 with another JSON-RPC error (legacy)",
			na:     httpOnly,
			server: faults(testserver.Fault{Kind: testserver.FaultRPCError, Code: jsonrpc.CodeInternalError, Message: "boom", Status: 200}),
			expect: legacyEvidence(1),
		},
		row{
			name:   "HTTP any other status (415: typed error)",
			na:     httpOnly,
			server: faults(testserver.Fault{Kind: testserver.FaultHTTPStatus, Status: 415}),
			expect: probeError(1, negErr(negotiation.KindHTTP), negErr(negotiation.KindHTTP)),
		},
		row{
			name:   "HTTP answers as SSE (dual server)",
			na:     httpOnly,
			server: serverSpec{sse: true},
			expect: modernEvidence(1),
		},
		row{
			name:   "HTTP answers as SSE (legacy-only server)",
			na:     httpOnly,
			server: serverSpec{sse: true, era: testserver.LegacyOnly},
			expect: legacyServer,
		},
		row{
			name:   "HTTP probe answered as JSON, the rest as SSE",
			na:     httpOnly,
			server: serverSpec{sse: true, faults: []testserver.Fault{{Kind: testserver.FaultRespondJSON}}},
			expect: modernEvidence(1),
		},
		row{
			name:   "HTTP probe answered as SSE, the rest as JSON",
			na:     httpOnly,
			server: faults(testserver.Fault{Kind: testserver.FaultRespondSSE}),
			expect: modernEvidence(1),
		},
	)

	// After negotiation.
	rs = append(rs,
		row{
			name:   "legacy initialize answering a version we don't speak",
			server: serverSpec{era: testserver.LegacyOnly, faults: []testserver.Fault{{Kind: testserver.FaultLegacyVersion, Version: "2024-11-05"}}},
			expect: func(k string, m mode) want {
				wrongVersion := both(negErr(negotiation.KindNoCommonVersion), upvErr())
				if _, ok := legacyMode(m.p); ok {
					return want{err: wrongVersion, methods: seq(mInitialize)}
				}
				if modernOnly(m.p) {
					return want{err: noFallback(), methods: seq(mDiscover)}
				}
				return want{err: wrongVersion, methods: seq(mDiscover, mInitialize)}
			},
		},
		row{
			name: "HTTP session expiry (404) mid-session: re-initialize and replay",
			na: func(k string, m mode) string {
				if k != kindHTTP || modernOnly(m.p) {
					return naSession
				}
				return ""
			},
			server: serverSpec{era: testserver.LegacyOnly, faults: []testserver.Fault{{Kind: testserver.FaultExpireSession, Method: mCall, Times: 1}}},
			expect: func(k string, m mode) want {
				w := legacyServer(k, m)
				w.methods = append(w.methods, mInitialize, mInitialized, mCall)
				return w
			},
		},
		row{
			name:      "HTTP response stream breaks before the response",
			na:        only(naStream, kindHTTP),
			replayAll: true,
			server:    faults(testserver.Fault{Kind: testserver.FaultBreakStream, Method: mCall, Times: 1}),
			expect: func(k string, m mode) want {
				if _, ok := legacyMode(m.p); ok {
					// Legacy: the response is recovered by resuming the
					// stream (GET with Last-Event-ID), not re-sent.
					w := legacyOK(m)
					w.extra = resumedOnce
					return w
				}
				w := modernEvidence(1)(k, m)
				w.methods = append(w.methods, mCall)
				w.extra = resentUnderNewID
				return w
			},
		},
		row{
			name:   "stream: non-JSON noise before every message",
			na:     only(naNoise, kindStdio, kindWS),
			server: serverSpec{banner: []string{"Starting server...", "{not json"}, faults: []testserver.Fault{{Kind: testserver.FaultNoise, Body: "noise line one\nnoise line two"}}},
			expect: modernEvidence(1),
		},
		row{
			name:   "oversized message (typed error, no hang)",
			maxMsg: 64 << 10,
			server: faults(testserver.Fault{Kind: testserver.FaultOversized, Method: mCall, Size: 256 << 10}),
			// The message ends the stream connection (stdio, WebSocket) or
			// the response (HTTP). The server did run the call, so it is
			// never re-sent (that would run the tool twice only to meet the
			// same limit): the call fails at once with the typed error. On a
			// stream the session then heals (a new connection or process and
			// the era's handshake again); the tools/list that follows waits
			// for it.
			settle: true,
			expect: func(k string, m mode) want {
				w := modernEvidence(1)(k, m)
				w.callErr = asType[*transport.MessageTooLargeError]("*transport.MessageTooLargeError", nil)
				if k != kindHTTP {
					// The pinned era's handshake on the new connection.
					if _, ok := legacyMode(m.p); ok {
						w.methods = append(w.methods, mInitialize, mInitialized)
					} else {
						w.methods = append(w.methods, mDiscover)
					}
					if k == kindStdio {
						w.procs = 2
					}
				}
				w.methods = append(w.methods, mList)
				return w
			},
		},
	)

	// Server kinds over every transport.
	rs = append(rs,
		row{name: "server: dual (Dial)", dial: true, expect: modernEvidence(1)},
		row{name: "server: modern-only (Dial)", dial: true, server: serverSpec{era: testserver.ModernOnly}, expect: func(k string, m mode) want {
			if _, ok := legacyMode(m.p); ok {
				// initialize is an unknown method to a modern-only server.
				// Over HTTP, Dial's HTTP+SSE fallback is then tried (an
				// initialize refused with 400/404/405 and no modern body),
				// and the modern-only server refuses its GET with 405. The
				// error names the request that failed first (issue 14): the
				// first *transport.HTTPError it holds is the POST's 404; the
				// fallback's GET 405 follows it in the chain.
				if k == kindHTTP {
					first := asType("first *transport.HTTPError: the initialize POST's 404", func(e *transport.HTTPError) bool {
						return e.StatusCode == http.StatusNotFound && e.Method == http.MethodPost
					})
					fallback := &errCheck{"a *transport.HTTPError 405 from the HTTP+SSE fallback's GET in the chain", func(err error) bool {
						return hasHTTPError(err, http.MethodGet, http.StatusMethodNotAllowed)
					}}
					return want{err: both(anyNegotiationError(), both(first, fallback)), methods: seq(mInitialize)}
				}
				return want{err: both(anyNegotiationError(), isErr(jsonrpc.ErrMethodNotFound)), methods: seq(mInitialize)}
			}
			return modernEvidence(1)(k, m)
		}},
		row{name: "server: legacy-only (Dial)", dial: true, server: serverSpec{era: testserver.LegacyOnly}, expect: legacyServer},
	)
	return rs
}

func faults(fs ...testserver.Fault) serverSpec { return serverSpec{faults: fs} }

// modernErr: a -32020/-32021 probe answer is a typed protocol error that
// still matches the server's JSON-RPC error.
func modernErr(target *jsonrpc.Error) *errCheck {
	return both(negErr(negotiation.KindProtocol), isErr(target))
}

func anyNegotiationError() *errCheck {
	return asType[*engine.NegotiationError]("*engine.NegotiationError", nil)
}

// legacyServer is what each mode gets from a legacy-only server.
func legacyServer(k string, m mode) want {
	if _, ok := legacyMode(m.p); ok {
		return legacyOK(m)
	}
	return legacyEvidence(1)(k, m)
}

// resentUnderNewID: the two tools/call the server saw have different ids.
func resentUnderNewID(ck *checker, procs []process) {
	var ids []string
	for _, r := range procs[0].Received {
		if r.Method == mCall {
			ids = append(ids, r.ID.String())
		}
	}
	if len(ids) != 2 || ids[0] == ids[1] {
		ck.errorf("tools/call ids = %v, want two different ids", ids)
	}
}

// resumedOnce: the legacy client resumed the broken stream with a GET
// carrying Last-Event-ID.
func resumedOnce(ck *checker, procs []process) {
	for _, r := range procs[0].Received {
		if r.HTTPMethod == http.MethodGet && r.Headers.Get("Last-Event-ID") != "" {
			return
		}
	}
	ck.errorf("no GET with Last-Event-ID after the broken stream; requests: %v", summary(procs))
}

// summary renders what each process received, for failure messages.
func summary(procs []process) string {
	var parts []string
	for _, p := range procs {
		var ms []string
		for _, r := range p.Received {
			m := r.Method
			if r.HTTPMethod != "" && r.HTTPMethod != http.MethodPost {
				m = r.HTTPMethod
			}
			ms = append(ms, m)
		}
		parts = append(parts, "pid "+strconv.Itoa(p.PID)+" exit "+p.Exit+": "+strings.Join(ms, ","))
	}
	return "[" + strings.Join(slices.Clip(parts), " | ") + "]"
}

// hasHTTPError reports whether err's tree holds an *transport.HTTPError
// for method with status.
func hasHTTPError(err error, method string, status int) bool {
	if e, ok := err.(*transport.HTTPError); ok && e.Method == method && e.StatusCode == status {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return u.Unwrap() != nil && hasHTTPError(u.Unwrap(), method, status)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if hasHTTPError(e, method, status) {
				return true
			}
		}
	}
	return false
}
