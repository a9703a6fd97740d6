package conduittest_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
)

// The fault-point matrix (issue 26): every transport × era × fault point
// × replay policy × tool kind, against a real server (this package's
// Server: in-memory pipes, stdio processes, Streamable HTTP, WebSocket,
// HTTP+SSE) that counts the tool's executions itself. Each cell asserts
// how often the tool ran, which error the caller got (ErrOutcomeUnknown
// exactly when it may have run and no result came back, ErrNotSent
// exactly when no server saw it), that the call returned within its
// context, and that the next call works once the server is back. The
// expectations come from the outcome rule (internal/engine/outcome.go)
// restated here as an oracle, not from the code under test.
//
// The cells are generated from the tables below: a new transport or
// fault point is one line. Cells that cannot exist are pruned with the
// reason written next to the rule that prunes them (prune).

// mTransport is one transport of the matrix.
type mTransport struct {
	name string
	eras []conduittest.Era
	// stream: the client holds a connection whose loss it sees and heals
	// (stdio, memory, WebSocket, and HTTP+SSE's event stream, which
	// carries every answer); the stream faults apply.
	stream bool
	// few: only a few policy × tool cells (see tools): each stdio cell
	// spawns processes, about a second each under -race on 2 cores.
	few bool
}

var mTransports = []mTransport{
	{name: "memory", eras: bothEras, stream: true},
	{name: "stdio", eras: bothEras, stream: true, few: true},
	{name: "http", eras: bothEras},
	{name: "websocket", eras: bothEras, stream: true},
	{name: "sse", eras: []conduittest.Era{conduittest.Legacy}, stream: true}, // HTTP+SSE is a legacy transport
}

var bothEras = []conduittest.Era{conduittest.Modern, conduittest.Legacy}

// evidence is what the fault leaves the client knowing, as the rule
// names it.
type evidence int

const (
	maybeDelivered evidence = iota // written, then lost before an answer
	refusedUntaken                 // the transport proves it was not taken
	refusedFinal                   // the same, and sending again would meet the same refusal
	resumed                        // lost, but the legacy stream resumed and carried the answer
	notWritten                     // the server is gone before the call is written
)

// mPoint is one fault point: the faults (or the server going down) that
// make it, per transport, and what the client can know afterwards.
type mPoint struct {
	name string
	// faults returns the server's faults for the cell; skip says why the
	// cell cannot exist ("" when it can).
	faults func(tr mTransport, era conduittest.Era) (faults []conduittest.Fault, skip string)
	ev     evidence
	ran    int  // executions of the tool on each faulted attempt
	twice  bool // the replay meets the fault too
	down   bool // the server goes down after it received the call (during the heal)
	gone   bool // the server is down before the call (gone for good)
	// blind: the outcome does not depend on the tool kind (the policy
	// still matters for the replay, not for the result): only the
	// side-effecting tool runs, under each policy.
	blind bool
	// ctxEnds: the caller's context is cancelled this long after the
	// server received the call, during the wait the fault's Retry-After
	// asks for (which is longer, and within the cell's retry budget).
	ctxEnds time.Duration
}

var mPoints = []mPoint{
	{name: "no-answer", ev: maybeDelivered, ran: 0, faults: lossBeforeRun(1)},
	{name: "ran-no-answer", ev: maybeDelivered, ran: 1, faults: lossAfterRun(1)},
	{name: "replay-lost", ev: maybeDelivered, ran: 1, twice: true, faults: lossAfterRun(2)},
	{name: "resume-404", ev: maybeDelivered, ran: 1, faults: legacyHTTPOnly(conduittest.FaultBreakExpire.On("tools/call").Times(1))},
	{name: "resumed", ev: resumed, ran: 1, blind: true, faults: legacyHTTPOnly(conduittest.FaultBreakStream.On("tools/call").Times(1))},
	{name: "refused-404", ev: refusedUntaken, blind: true, faults: legacyHTTPOnly(conduittest.FaultExpireSession.On("tools/call").Times(1))},
	{name: "refused-503", ev: refusedUntaken, blind: true, faults: httpOnly(conduittest.FaultHTTPStatus.On("tools/call").With("status", "503").With("header", "Retry-After=0").Times(1))},
	// The caller's context ends during the wait a Retry-After asks for,
	// before the request is sent again: refused, it did not run; answered
	// 502, it may have (and was not sent again).
	{name: "refused-503-wait-ended", ev: refusedUntaken, blind: true, ctxEnds: 500 * time.Millisecond,
		faults: httpOnly(conduittest.FaultHTTPStatus.On("tools/call").With("status", "503").With("header", "Retry-After=1").Times(1))},
	{name: "502-wait-ended", ev: maybeDelivered, blind: true, ctxEnds: 500 * time.Millisecond,
		faults: httpOnly(conduittest.FaultHTTPStatus.On("tools/call").With("status", "502").With("header", "Retry-After=1").Times(1))},
	// A 401 no Authorize hook clears (the cell's client has none).
	{name: "refused-401", ev: refusedFinal, blind: true, faults: httpOnly(conduittest.FaultHTTPStatus.On("tools/call").With("status", "401").With("header", "WWW-Authenticate=Bearer").Times(1))},
	{name: "refused-405", ev: refusedFinal, blind: true, faults: httpOnly(conduittest.FaultHTTPStatus.On("tools/call").With("status", "405").Times(1))},
	{name: "down-in-heal", ev: maybeDelivered, ran: 0, down: true, faults: always(conduittest.FaultSilent.On("tools/call").Times(1))},
	{name: "gone", ev: notWritten, gone: true, blind: true, faults: always()},
}

// Cells the matrix leaves out, with why (the spec or the transport makes
// them impossible, or another cell covers them exactly):
//
//   - "during the write": pipes cannot be cut mid-message from the server
//     side. A line-framed write that broke once all of the message but
//     its newline had left is possibly delivered, the "no-answer" cell's
//     evidence; a shorter part is no message, not written (both:
//     transport's TestStreamWriteCut). A WebSocket or HTTP write that
//     broke part-way is possibly delivered, as "no-answer"; an HTTP POST
//     that failed before its body was read is not written
//     (TestPOSTNotWritten, client's TestReplayPOSTNotWritten).
//   - "HTTP/2 stream reset after the whole request": the test servers speak
//     HTTP/1.1, and no net/http server resets a stream with PROTOCOL_ERROR
//     after it read the request. Such a POST is not sent again by net/http
//     and fails as possibly delivered, the "no-answer" cell's evidence
//     (transport's TestH2ResetPOSTNotResent; a redirect is still followed,
//     TestH2RedirectPOSTFollowed).
//   - "resume-refused": a legacy stream broken after the tool ran, whose
//     resumption GETs all find the server gone (a refused dial): the
//     Server cannot go down between its tool's start and the first GET
//     without racing the client's resumption. It is possibly delivered,
//     as "resume-404" (internal/engine's TestHTTPResumeRefusedDialMayHaveRun).
//   - "resume-404", "resumed", "refused-404": resumption GETs and session
//     ids exist only on legacy Streamable HTTP.
//   - "refused-503", "refused-405", "refused-401", "refused-503-wait-ended",
//     "502-wait-ended": an HTTP status to the request's own POST is a
//     Streamable HTTP cell (the HTTP+SSE test server takes the
//     faults of a stream on its POSTs).
//   - "on the re-listen": a listen runs nothing on the server and has no
//     result to lose; its fault points (a -32601, a listen never
//     acknowledged) are TestListenRefusedConnect, and the re-listen after
//     a drop is internal/engine/relisten_test.go.
//   - Under ReplayAll and ReplayNone the annotations are not asked: the
//     listed/not-listed variants run only under ReplaySafe.
//   - stdio runs the side-effecting tool under each policy and the
//     unlisted idempotent tool under ReplaySafe, not every tool kind: a
//     stdio cell spawns processes (about a second each under -race on 2
//     cores), and the policy × tool decision is the engine's, the same
//     for the in-memory transport, which serves the same server over the
//     same stream code and runs every cell.

func lossBeforeRun(times int) func(mTransport, conduittest.Era) ([]conduittest.Fault, string) {
	return func(tr mTransport, _ conduittest.Era) ([]conduittest.Fault, string) {
		if tr.stream {
			return []conduittest.Fault{conduittest.FaultExit.On("tools/call").Times(times)}, ""
		}
		return []conduittest.Fault{conduittest.FaultReset.On("tools/call").Times(times)}, ""
	}
}

func lossAfterRun(times int) func(mTransport, conduittest.Era) ([]conduittest.Fault, string) {
	return func(tr mTransport, era conduittest.Era) ([]conduittest.Fault, string) {
		switch {
		case tr.stream:
			return []conduittest.Fault{conduittest.FaultExitAfter.On("tools/call").Times(times)}, ""
		case era == conduittest.Legacy:
			// A plain broken stream would be resumed: the server restarts
			// without the session, so the resumption finds nothing.
			return []conduittest.Fault{conduittest.FaultBreakExpire.On("tools/call").Times(times)}, ""
		}
		return []conduittest.Fault{conduittest.FaultBreakStream.On("tools/call").Times(times)}, ""
	}
}

func legacyHTTPOnly(f conduittest.Fault) func(mTransport, conduittest.Era) ([]conduittest.Fault, string) {
	return func(tr mTransport, era conduittest.Era) ([]conduittest.Fault, string) {
		if tr.name != "http" || era != conduittest.Legacy {
			return nil, "resumption and session ids exist only on legacy Streamable HTTP"
		}
		return []conduittest.Fault{f}, ""
	}
}

func httpOnly(f conduittest.Fault) func(mTransport, conduittest.Era) ([]conduittest.Fault, string) {
	return func(tr mTransport, _ conduittest.Era) ([]conduittest.Fault, string) {
		if tr.name != "http" {
			return nil, "an HTTP status to the request's own POST exists only on Streamable HTTP"
		}
		return []conduittest.Fault{f}, ""
	}
}

func always(fs ...conduittest.Fault) func(mTransport, conduittest.Era) ([]conduittest.Fault, string) {
	return func(mTransport, conduittest.Era) ([]conduittest.Fault, string) { return fs, "" }
}

// mTool is a tool kind of the testserver: echo has no annotations (it may
// have side effects), structured is annotated idempotentHint, add
// readOnlyHint. listed: the client listed the tools before the call.
type mTool struct {
	name   string
	args   map[string]any
	safe   bool
	listed bool
}

var (
	sideEffecting = mTool{name: "echo", args: map[string]any{"text": "charge"}}
	idempotent    = mTool{name: "structured", args: map[string]any{"city": "Oslo"}, safe: true}
	readOnly      = mTool{name: "add", args: map[string]any{"a": 1, "b": 2}, safe: true}
)

func (m mTool) label() string {
	if m.listed {
		return m.name + "-listed"
	}
	return m.name
}

var mPolicies = []struct {
	name string
	p    client.ReplayPolicy
}{{"safe", client.ReplaySafe}, {"all", client.ReplayAll}, {"none", client.ReplayNone}}

// tools returns the tool kinds a cell runs for policy p at point pt on
// tr.
func tools(tr mTransport, pt mPoint, p client.ReplayPolicy) []mTool {
	switch {
	case pt.blind:
		return []mTool{sideEffecting}
	case tr.few && p == client.ReplaySafe:
		// The side-effecting tool, and an idempotent one never listed:
		// its annotations are fetched for the decision (issue 26 case 6).
		return []mTool{sideEffecting, idempotent}
	case tr.few:
		return []mTool{sideEffecting}
	}
	ts := []mTool{sideEffecting, idempotent, readOnly}
	if p == client.ReplaySafe {
		for _, t := range []mTool{sideEffecting, idempotent, readOnly} {
			t.listed = true
			ts = append(ts, t)
		}
	}
	return ts
}

// want is a cell's expected outcome.
type want struct {
	ok       bool // a result came back
	unknown  bool // ErrOutcomeUnknown
	notSent  bool // ErrNotSent
	runs     int  // executions counted by the server
	attempts int  // OutcomeUnknownError.Attempts, when unknown
}

// oracle is the outcome rule (the table in internal/engine's package
// doc) applied to a cell, written from the rule, not from the code.
func oracle(pt mPoint, p client.ReplayPolicy, tool mTool) want {
	allowed := p == client.ReplayAll || p == client.ReplaySafe && tool.safe
	switch pt.ev {
	case resumed:
		return want{ok: true, runs: pt.ran}
	case refusedUntaken:
		if pt.ctxEnds > 0 || pt.name == "refused-503" && p == client.ReplayNone {
			return want{notSent: true}
		}
		return want{ok: true, runs: 1}
	case notWritten, refusedFinal:
		return want{notSent: true}
	}
	switch {
	case pt.down, pt.ctxEnds > 0:
		// The replay, if allowed, waits for a heal that fails, or the
		// caller's context ends during its wait: the call may have run
		// once and no result came back.
		return want{unknown: true, runs: pt.ran, attempts: 1}
	case !allowed:
		return want{unknown: true, runs: pt.ran, attempts: 1}
	case pt.twice:
		return want{unknown: true, runs: 2 * pt.ran, attempts: 2}
	}
	return want{ok: true, runs: pt.ran + 1}
}

// TestOutcomeMatrix runs every cell of the matrix.
func TestOutcomeMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault-point matrix spawns processes and servers")
	}
	for _, tr := range mTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			for _, era := range tr.eras {
				for _, pt := range mPoints {
					faults, skip := pt.faults(tr, era)
					if skip != "" {
						continue // pruned: see skip and the pruned cells above
					}
					for _, pol := range mPolicies {
						for _, tool := range tools(tr, pt, pol.p) {
							name := era.String() + "/" + pt.name + "/" + pol.name + "/" + tool.label()
							t.Run(name, func(t *testing.T) {
								t.Parallel()
								runCell(t, tr, era, pt, faults, pol.p, tool)
							})
						}
					}
				}
			}
		})
	}
}

// cellTimeout bounds each call of a cell: every call must return within
// it (the context bounds everything).
const cellTimeout = 20 * time.Second

// fastRetry keeps the transient-failure retries of a cell short. Its probe
// timeout is not short: no cell's server leaves a probe unanswered, and a
// respawned stdio server (this test binary, built with -race, on a loaded
// machine) took more than 2 s to answer one, which read as legacy
// evidence and failed the reconnect.
var fastRetry = client.RetryPolicy{MaxAttempts: 3, InitialInterval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond, MaxElapsed: 2 * time.Second, ProbeTimeout: 10 * time.Second}

func mOptions(era conduittest.Era, p client.ReplayPolicy, events *eventLog) []client.Option {
	proto := client.Modern
	if era == conduittest.Legacy {
		proto = client.Legacy
	}
	return []client.Option{client.WithProtocol(proto), client.WithRetry(fastRetry),
		client.WithCallDefaults(client.WithReplay(p)), client.WithConnEvents(events.add)}
}

// runCell runs one cell: connect, fault, call, check, recover, call again.
func runCell(t *testing.T, tr mTransport, era conduittest.Era, pt mPoint, faults []conduittest.Fault, p client.ReplayPolicy, tool mTool) {
	srv := conduittest.NewServer(t, conduittest.WithEra(era))
	var events eventLog
	// The client's log, shown when the outcome is not the rule's.
	var clog logBuffer
	opts := append(mOptions(era, p, &events), client.WithLogger(slog.New(slog.NewTextHandler(&clog, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	c := connect(t, srv, tr.name, opts...)
	if tool.listed {
		for _, err := range c.Tools(testCtx(t)) {
			if err != nil {
				t.Fatalf("Tools: %v", err)
			}
		}
	}
	if err := srv.SetFaults(faults...); err != nil {
		t.Fatal(err)
	}
	if pt.gone {
		goDown(t, srv, c, tr)
	}
	if pt.down {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), cellTimeout)
			defer cancel()
			if _, err := srv.WaitReceived(ctx, "tools/call"); err == nil {
				_ = srv.SetDown(true)
			}
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), cellTimeout)
	defer cancel()
	if pt.ctxEnds > 0 {
		go func() {
			if _, err := srv.WaitReceived(ctx, "tools/call"); err == nil {
				time.Sleep(pt.ctxEnds)
			}
			cancel()
		}()
	}
	res, err := c.CallTool(ctx, tool.name, tool.args)
	if pt.ctxEnds == 0 && ctx.Err() != nil {
		t.Fatalf("the call did not return within its context: %v", err)
	}
	w := oracle(pt, p, tool)
	ok := check(t, w, res, err)
	if runs := srv.Executions(tool.name); runs != w.runs {
		t.Errorf("the tool ran %d times on the server, want %d (events: %s)", runs, w.runs, events.String())
	}
	if !ok {
		t.Fatalf("events: %s\nclient log:\n%s", events.String(), clog.String())
	}
	if w.unknown && !events.wait("replay-refused") {
		t.Errorf("no replay-refused event for an outcome-unknown call (events: %s)", events.String())
	}
	if err := srv.SetFaults(); err != nil { // the faults a refused replay left unused
		t.Fatal(err)
	}
	if pt.down && tr.stream {
		// The heal finds no server and fails the session (for good:
		// the host reconnects such clients); it ends while the server
		// is still down.
		select {
		case <-c.Done():
		case <-time.After(cellTimeout):
			t.Fatal("the session did not end after its heal found no server")
		}
	}
	if err := srv.SetDown(false); err != nil {
		t.Fatalf("bringing the server back: %v", err)
	}
	nextCall(t, srv, c, tr, era, p)
}

// check asserts the call's result or error against w and reports whether
// they match.
func check(t *testing.T, w want, res interface{ Text() string }, err error) bool {
	t.Helper()
	switch {
	case w.ok:
		if err != nil {
			t.Errorf("CallTool = %v, want a result", err)
			return false
		}
	case err == nil:
		t.Errorf("CallTool = %q, want an error (unknown %v, not sent %v)", res.Text(), w.unknown, w.notSent)
		return false
	}
	ok := true
	if errors.Is(err, client.ErrOutcomeUnknown) != w.unknown {
		t.Errorf("CallTool = %v; matches ErrOutcomeUnknown %v, want %v", err, !w.unknown, w.unknown)
		ok = false
	}
	if errors.Is(err, client.ErrNotSent) != w.notSent {
		t.Errorf("CallTool = %v; matches ErrNotSent %v, want %v", err, !w.notSent, w.notSent)
		ok = false
	}
	if w.unknown {
		if twice := strings.Contains(err.Error(), "2 attempts may have run"); twice != (w.attempts == 2) {
			t.Errorf("CallTool = %v; says 2 attempts may have run: %v, want %d attempts", err, twice, w.attempts)
			ok = false
		}
	}
	return ok
}

// goDown takes the server down for good and, on a transport whose
// connection the client holds, waits until the client saw it (its
// session fails once the heal finds no server): a call written into a
// dying process's pipe before that would be possibly delivered, another
// cell.
func goDown(t *testing.T, srv *conduittest.Server, c *client.Client, tr mTransport) {
	t.Helper()
	if err := srv.SetDown(true); err != nil {
		t.Fatal(err)
	}
	if !tr.stream {
		// Streamable HTTP holds no connection to lose, only idle
		// keep-alive ones, which the server closed: the client's HTTP
		// stack notices at once, but asynchronously. A POST written onto
		// one before that is possibly delivered, the "no-answer" cell.
		time.Sleep(100 * time.Millisecond)
		return
	}
	select {
	case <-c.Done():
	case <-time.After(cellTimeout):
		t.Fatal("the client did not see the server go")
	}
}

// nextCall checks that the next call works now that the server is back:
// on the same client, or, when its session failed (a heal that found no
// server fails the session for good; the host reconnects such clients),
// that the next call on it fails at once as not sent and a new client
// works.
func nextCall(t *testing.T, srv *conduittest.Server, c *client.Client, tr mTransport, era conduittest.Era, p client.ReplayPolicy) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cellTimeout)
	defer cancel()
	select {
	case <-c.Done():
		_, err := c.CallTool(ctx, "echo", map[string]any{"text": "after"})
		if !errors.Is(err, client.ErrNotSent) || errors.Is(err, client.ErrOutcomeUnknown) {
			t.Errorf("a call on the failed session = %v, want ErrNotSent only", err)
		}
		var events eventLog
		c = connect(t, srv, tr.name, mOptions(era, p, &events)...)
	default:
	}
	if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "after"}); err != nil {
		t.Errorf("the next call, the server back = %v", err)
	}
}

// eventLog records a client's connection events.
type eventLog struct {
	mu     sync.Mutex
	events []client.ConnEvent
}

func (l *eventLog) add(ev client.ConnEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

func (l *eventLog) has(kind string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range l.events {
		if ev.Kind == kind {
			return true
		}
	}
	return false
}

// reason returns the Reason of the last event of kind.
func (l *eventLog) reason(kind string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var r string
	for _, ev := range l.events {
		if ev.Kind == kind {
			r = ev.Reason
		}
	}
	return r
}

// wait reports whether an event of kind arrives within a few seconds
// (events reach the hook asynchronously, from the dispatcher).
func (l *eventLog) wait(kind string) bool {
	for range 500 {
		if l.has(kind) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func (l *eventLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, ev := range l.events {
		b.WriteString(ev.Kind)
		if ev.Reason != "" {
			b.WriteString(" (" + ev.Reason + ")")
		}
		b.WriteString("; ")
	}
	return b.String()
}

// logBuffer collects the client's log; its goroutines write to it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
