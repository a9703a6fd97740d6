package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// TestRetryAfter429: a request answered HTTP 429 is sent again after the
// Retry-After the server asked for, given in seconds or as an HTTP date;
// one longer than the retry budget (RetryPolicy.MaxElapsed, 30 s by
// default) is not waited for: the call fails at once with the 429, sent
// once. Both eras on Streamable HTTP (issue 29, item 7).
func TestRetryAfter429(t *testing.T) {
	cases := []struct {
		name    string
		after   func() string
		minWait time.Duration // the least gap between the two attempts
		fails   bool
	}{
		{"seconds", func() string { return "1" }, time.Second, false},
		{"http-date", func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) }, 800 * time.Millisecond, false},
		{"capped", func() string { return "3600" }, 0, true},
		// Past what a time.Duration holds: as far as it goes, so past the
		// budget too (it once overflowed, and a date this far made the
		// retry wait for 292 years).
		{"far-future date", func() string { return "Fri, 31 Dec 9999 23:59:59 GMT" }, 0, true},
		{"seconds past a Duration", func() string { return "99999999999" }, 0, true},
		{"seconds just past a Duration", func() string { return "9223372037" }, 0, true},
	}
	for _, era := range allEras {
		for _, tc := range cases {
			t.Run(era.name+"/"+tc.name, func(t *testing.T) {
				f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(era.p))
				f.srv.SetFaults(testserver.Fault{Kind: testserver.FaultHTTPStatus, Method: protocol.MethodToolsCall, Status: http.StatusTooManyRequests,
					Header: http.Header{"Retry-After": {tc.after()}}, Times: 1})
				_, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"})
				var calls []time.Time
				for _, r := range f.srv.Received() {
					if r.Method == protocol.MethodToolsCall {
						calls = append(calls, r.At)
					}
				}
				if tc.fails {
					var he *transport.HTTPError
					var ce *client.Error
					if !errors.As(err, &he) || he.StatusCode != http.StatusTooManyRequests || !errors.As(err, &ce) || ce.Kind != client.KindHTTP {
						t.Errorf("CallTool = %v, want a KindHTTP error with the 429", err)
					}
					if len(calls) != 1 {
						t.Errorf("tools/call sent %d times, want once (an hour's Retry-After is past the budget)", len(calls))
					}
					return
				}
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				if len(calls) != 2 {
					t.Fatalf("tools/call sent %d times, want 2", len(calls))
				}
				if gap := calls[1].Sub(calls[0]); gap < tc.minWait {
					t.Errorf("the retry came %v after the 429, want at least %v", gap, tc.minWait)
				}
			})
		}
	}
}

// TestProbeTimeoutPerTransport: a probe that times out means a legacy
// server on a stdio child process, and is retried everywhere else
// (in-memory pipe, Streamable HTTP, WebSocket), which then finds the
// modern era (seed 003; issue 29, item 7: untested per transport).
func TestProbeTimeoutPerTransport(t *testing.T) {
	so := testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultSilent, Method: protocol.MethodDiscover, Times: 1}}}
	for _, tr := range allTransports {
		t.Run(tr, func(t *testing.T) {
			f := connect(t, tr, so, client.WithRetry(client.RetryPolicy{ProbeTimeout: 300 * time.Millisecond, InitialInterval: time.Millisecond}))
			want := negotiation.EraModern
			if tr == tStdio {
				want = negotiation.EraLegacy
			}
			if got := f.c.Negotiated().Era; got != want {
				t.Errorf("era after a probe timeout on %s = %v, want %v (trace %+v)", tr, got, want, f.c.Negotiated().Trace)
			}
		})
	}
}

// TestProbeRetryAfterPastBudget: a server/discover answered 503 with a
// Retry-After past the retry budget, as far as a date can be, fails the
// connect with the negotiation's transport error instead of waiting: the
// wait once overflowed the budget check and lasted until the caller's
// context ended (30 s here, forever without a deadline).
func TestProbeRetryAfterPastBudget(t *testing.T) {
	for _, after := range []string{"Fri, 31 Dec 9999 23:59:59 GMT", "99999999999", "3600"} {
		t.Run(after, func(t *testing.T) {
			so := testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultHTTPStatus, Method: protocol.MethodDiscover,
				Status: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {after}}, Times: 1}}}
			_, err := tryConnect(t, tHTTP, so, client.WithProtocol(client.Modern))
			var ne *negotiation.Error
			if !errors.As(err, &ne) || ne.Kind != negotiation.KindTransport || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Dial = %v, want the negotiation's transport error at once (the Retry-After is past the budget)", err)
			}
		})
	}
}

// TestRetryAfterWaitEnded: a request refused (429, 503) with a
// Retry-After the budget allows did not run; when the caller's context
// ends during that wait, the call says so: an error matching ErrNotSent
// and the context's error, never ErrOutcomeUnknown (the refused attempt
// was written, but answered). Both eras on Streamable HTTP.
func TestRetryAfterWaitEnded(t *testing.T) {
	for _, era := range allEras {
		for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
			t.Run(era.name+"/"+strconv.Itoa(status), func(t *testing.T) {
				f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(era.p))
				f.srv.SetFaults(testserver.Fault{Kind: testserver.FaultHTTPStatus, Method: protocol.MethodToolsCall, Status: status,
					Header: http.Header{"Retry-After": {"20"}}, Times: 1})
				ctx := endAfterReceived(t, f.srv, protocol.MethodToolsCall)
				_, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "x"})
				if !errors.Is(err, client.ErrNotSent) || errors.Is(err, client.ErrOutcomeUnknown) || !errors.Is(err, context.Canceled) {
					t.Errorf("CallTool = %v; want an error matching ErrNotSent and context.Canceled, not ErrOutcomeUnknown", err)
				}
				if n := slices.Index(f.srv.ReceivedMethods(), protocol.MethodToolsCall); n < 0 || slices.Contains(f.srv.ReceivedMethods()[n+1:], protocol.MethodToolsCall) {
					t.Errorf("the server saw %v, want tools/call once", f.srv.ReceivedMethods())
				}
			})
		}
	}
}

// TestRetryAfterReplayWaitEnded: a request answered 502 (which does not
// say the server did not run it) with a Retry-After is replayed under
// ReplayAll after that wait; when the caller's context ends during it,
// the call's outcome is unknown with one attempt that may have run, its
// reason does not claim a second, and no replay reached the server.
func TestRetryAfterReplayWaitEnded(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(era.p))
			f.srv.SetFaults(testserver.Fault{Kind: testserver.FaultHTTPStatus, Method: protocol.MethodToolsCall, Status: http.StatusBadGateway,
				Header: http.Header{"Retry-After": {"20"}}, Times: 1})
			ctx := endAfterReceived(t, f.srv, protocol.MethodToolsCall)
			replayed := false
			_, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "x"}, client.WithReplay(client.ReplayAll), client.WithReplayed(&replayed))
			var ou *engine.OutcomeUnknownError
			if !errors.As(err, &ou) || ou.Attempts != 1 || strings.Contains(ou.Reason, "sent again:") || !errors.Is(err, context.Canceled) {
				t.Errorf("CallTool = %v; want an unknown outcome of one attempt, ended by the context during the wait", err)
			}
			if replayed {
				t.Error("WithReplayed reports a replay that was never sent")
			}
			if got := f.srv.ReceivedMethods(); slices.Index(got, protocol.MethodToolsCall) != len(got)-1 {
				t.Errorf("the server saw %v, want tools/call once, last", got)
			}
		})
	}
}

// endAfterReceived returns a context that is cancelled half a second
// after srv received method: once the client has its refusal and waits
// before sending it again (the waits asked for are longer), never before
// the request reached the server.
func endAfterReceived(t *testing.T, srv *testserver.Server, method string) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t))
	t.Cleanup(cancel)
	go func() {
		if _, err := srv.WaitReceived(ctx, method); err == nil {
			time.Sleep(500 * time.Millisecond)
		}
		cancel()
	}()
	return ctx
}

// TestRetryAfterReplayPastBudget: a request answered 502 with a
// Retry-After past the retry budget is not replayed at once, against the
// server's ask, under ReplayAll: the call fails with an unknown outcome
// of one attempt, and the server saw it once. Both eras.
func TestRetryAfterReplayPastBudget(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(era.p))
			f.srv.SetFaults(testserver.Fault{Kind: testserver.FaultHTTPStatus, Method: protocol.MethodToolsCall, Status: http.StatusBadGateway,
				Header: http.Header{"Retry-After": {"3600"}}, Times: 1})
			_, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}, client.WithReplay(client.ReplayAll))
			var ou *engine.OutcomeUnknownError
			var he *transport.HTTPError
			if !errors.As(err, &ou) || ou.Attempts != 1 || !errors.As(err, &he) || he.StatusCode != http.StatusBadGateway {
				t.Errorf("CallTool = %v; want an unknown outcome of one attempt, with the 502", err)
			}
			if got := f.srv.ReceivedMethods(); slices.Index(got, protocol.MethodToolsCall) != len(got)-1 {
				t.Errorf("the server saw %v, want tools/call once, last", got)
			}
		})
	}
}

// TestAuthorizeEnded: a request answered 401 did not run; when the
// caller's context ends while the Authorize hook gets new credentials
// (a person at a browser, say), the call says so: ErrNotSent and the
// context's error, never ErrOutcomeUnknown. Both eras.
func TestAuthorizeEnded(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			authorize := func(ctx context.Context, _ *transport.HTTPError) error {
				<-ctx.Done()
				return ctx.Err()
			}
			f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(era.p), client.WithAuth(client.Auth{Authorize: authorize}))
			f.srv.SetFaults(testserver.Fault{Kind: testserver.FaultHTTPStatus, Method: protocol.MethodToolsCall, Status: http.StatusUnauthorized,
				Header: http.Header{"WWW-Authenticate": {`Bearer error="invalid_token"`}}, Times: 1})
			ctx := endAfterReceived(t, f.srv, protocol.MethodToolsCall)
			_, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "x"})
			if !errors.Is(err, client.ErrNotSent) || errors.Is(err, client.ErrOutcomeUnknown) || !errors.Is(err, context.Canceled) {
				t.Errorf("CallTool = %v; want an error matching ErrNotSent and context.Canceled, not ErrOutcomeUnknown", err)
			}
		})
	}
}

// TestRefusedReplay: a request whose first attempt may have run (its
// connection broke once it was written) and whose replay is refused with
// an HTTP client error — a 401 no Authorize hook clears, a 400, a 413 —
// fails with the unknown outcome of that first attempt, the refusal in
// it: refusing the replay does not make the first attempt not run. Both
// eras.
func TestRefusedReplay(t *testing.T) {
	for _, era := range allEras {
		for _, status := range []int{http.StatusUnauthorized, http.StatusBadRequest, http.StatusRequestEntityTooLarge} {
			t.Run(era.name+"/"+strconv.Itoa(status), func(t *testing.T) {
				f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(era.p))
				f.srv.SetFaults(
					testserver.Fault{Kind: testserver.FaultReset, Method: protocol.MethodToolsCall, Times: 1},
					testserver.Fault{Kind: testserver.FaultHTTPStatus, Method: protocol.MethodToolsCall, Status: status, Times: 1,
						Header: http.Header{"WWW-Authenticate": {`Bearer error="invalid_token"`}}})
				_, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}, client.WithReplay(client.ReplayAll))
				var ou *engine.OutcomeUnknownError
				var he *transport.HTTPError
				if !errors.As(err, &ou) || ou.Attempts != 1 || !errors.As(err, &he) || he.StatusCode != status || errors.Is(err, client.ErrNotSent) ||
					errors.Is(err, client.ErrAuthRequired) != (status == http.StatusUnauthorized) {
					t.Errorf("CallTool = %v; want the unknown outcome of one attempt, with the %d", err, status)
				}
			})
		}
	}
}
