package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// Method names as the server records them.
const (
	mDiscover    = protocol.MethodDiscover
	mInitialize  = protocol.MethodInitialize
	mInitialized = protocol.NotificationInitialized
	mCall        = protocol.MethodToolsCall
	mList        = protocol.MethodToolsList
)

const (
	modernV   = protocol.Version20260728
	legacyV   = protocol.Version20251125
	oldV      = protocol.Version20250618
	caseLimit = 30 * time.Second // bounds every case: no hang can outlive it
)

// mode is one negotiation mode of the matrix.
type mode struct {
	name string
	p    client.Protocol
}

var modes = []mode{
	{"Auto", client.Auto},
	{"Modern", client.Modern},
	{"Legacy", client.Legacy},
	{"Pin(" + modernV + ")", client.Pin(modernV)},
	{"Pin(" + legacyV + ")", client.Pin(legacyV)},
	{"Pin(" + oldV + ")", client.Pin(oldV)},
}

// modernOnly reports whether p has no legacy fallback and probes.
func modernOnly(p client.Protocol) bool { return p == client.Modern || p == client.Pin(modernV) }

// legacyMode returns the version a legacy-only mode initializes with.
func legacyMode(p client.Protocol) (string, bool) {
	switch p {
	case client.Legacy:
		return legacyV, true
	case client.Pin(legacyV), client.Pin(oldV):
		return string(p), true
	}
	return "", false
}

// errCheck is an expected typed error.
type errCheck struct {
	desc string
	ok   func(error) bool
}

// want is the expected outcome of one case.
type want struct {
	err     *errCheck       // a Connect error is due
	era     negotiation.Era // on success
	version string          // on success
	methods []string        // every JSON-RPC method the server saw, in order
	procs   int             // stdio: server processes started (0 means 1)
	// initVersion is the protocolVersion every initialize must carry; ""
	// means the mode's (the pin, else 2025-11-25).
	initVersion string
	// callErr, when set, is the error the echo call must fail with
	// (instead of succeeding).
	callErr *errCheck
	// extra runs additional checks on the server's record.
	extra func(ck *checker, procs []process)
}

// row is one row of the probe table (with one setting of its knobs).
type row struct {
	name   string
	server serverSpec
	// na returns why the row does not apply to a transport or mode, or "".
	na     func(kind string, m mode) string
	maxMsg int  // client's largest incoming message (0: default)
	auth   bool // install an Authorize hook that sets a bearer token
	dial   bool // use client.Dial for HTTP and WebSocket
	short  bool // use a short probe timeout (timeout rows)
	// replayAll opts in to replaying every lost request (the echo tool
	// is not idempotent, so the default policy would not re-send it).
	replayAll bool
	expect    func(kind string, m mode) want
	callCtx   time.Duration // bounds the echo call (0: caseLimit)
	// settle sends tools/list after the echo call. New calls wait while
	// the session heals, so it reaches the server only after any reconnect
	// and handshake the call's failure started: the server's record is
	// complete, whatever the scheduling, and ends with tools/list.
	settle bool
}

// Expectation builders.

func seq(parts ...any) []string {
	out := []string{}
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		}
	}
	return out
}

func rep(m string, n int) []string { return slices.Repeat([]string{m}, n) }

// legacyOK is what a legacy-only mode gets from a server that speaks its
// version: initialize at once, no server/discover.
func legacyOK(m mode) want {
	v, _ := legacyMode(m.p)
	return want{era: negotiation.EraLegacy, version: v, methods: seq(mInitialize, mInitialized, mCall)}
}

// legacyEvidence: the probe outcome is legacy evidence after n probes.
func legacyEvidence(n int) func(string, mode) want {
	return func(_ string, m mode) want {
		if _, ok := legacyMode(m.p); ok {
			return legacyOK(m)
		}
		if modernOnly(m.p) {
			return want{err: noFallback(), methods: rep(mDiscover, n)}
		}
		return want{era: negotiation.EraLegacy, version: legacyV, methods: seq(rep(mDiscover, n), mInitialize, mInitialized, mCall)}
	}
}

// modernEvidence: the probes (n of them) end in the modern era.
func modernEvidence(n int) func(string, mode) want {
	return func(_ string, m mode) want {
		if _, ok := legacyMode(m.p); ok {
			return legacyOK(m)
		}
		return want{era: negotiation.EraModern, version: modernV, methods: seq(rep(mDiscover, n), mCall)}
	}
}

// probeError: the n probes end in a typed error (any probing mode).
func probeError(n int, auto, modern *errCheck) func(string, mode) want {
	return func(_ string, m mode) want {
		if _, ok := legacyMode(m.p); ok {
			return legacyOK(m)
		}
		ec := auto
		if modernOnly(m.p) {
			ec = modern
		}
		return want{err: ec, methods: rep(mDiscover, n)}
	}
}

// Typed-error checks (errors.As / errors.Is only).

func negErr(kind negotiation.ErrorKind) *errCheck {
	return &errCheck{"*negotiation.Error of kind " + kind.String(), func(err error) bool {
		e, ok := errors.AsType[*negotiation.Error](err)
		return ok && e.Kind == kind
	}}
}

func noFallback() *errCheck { return negErr(negotiation.KindNegotiation) }

func upvErr() *errCheck {
	return &errCheck{"*negotiation.UnsupportedProtocolVersionError matching jsonrpc.ErrUnsupportedProtocolVersion", func(err error) bool {
		_, ok := errors.AsType[*negotiation.UnsupportedProtocolVersionError](err)
		return ok && errors.Is(err, jsonrpc.ErrUnsupportedProtocolVersion)
	}}
}

func both(a, b *errCheck) *errCheck {
	return &errCheck{a.desc + " and " + b.desc, func(err error) bool { return a.ok(err) && b.ok(err) }}
}

func isErr(target error) *errCheck {
	return &errCheck{fmt.Sprintf("errors.Is %v", target), func(err error) bool { return errors.Is(err, target) }}
}

func asType[T error](desc string, pred func(T) bool) *errCheck {
	return &errCheck{desc, func(err error) bool {
		e, ok := errors.AsType[T](err)
		return ok && (pred == nil || pred(e))
	}}
}

// n.a. helpers.

func only(reason string, ks ...string) func(string, mode) string {
	return func(k string, _ mode) string {
		if slices.Contains(ks, k) {
			return ""
		}
		return reason
	}
}

// checker collects the failures of one case so that a known-broken case
// can be reported instead of failing the run.
type checker struct {
	t        *testing.T
	failures []string
}

func (ck *checker) errorf(format string, args ...any) {
	ck.failures = append(ck.failures, fmt.Sprintf(format, args...))
}

// matrix is the table the run fills: row label → transport → cell.
type matrix struct {
	mu      sync.Mutex
	order   []string
	cells   map[string]map[string]string
	notes   []string // why cells are n.a., in order
	reasons map[string]bool
	broken  []string // known-broken cases with their failures
}

// na records an n.a. cell and why.
func (mx *matrix) na(label, kind, reason string) {
	mx.set(label, kind, "n.a.")
	mx.mu.Lock()
	defer mx.mu.Unlock()
	if mx.reasons == nil {
		mx.reasons = map[string]bool{}
	}
	if !mx.reasons[reason] {
		mx.reasons[reason] = true
		mx.notes = append(mx.notes, reason)
	}
}

func (mx *matrix) knownBroken(note string) {
	mx.mu.Lock()
	defer mx.mu.Unlock()
	mx.broken = append(mx.broken, note)
}

func (mx *matrix) set(label, kind, cell string) {
	mx.mu.Lock()
	defer mx.mu.Unlock()
	if mx.cells == nil {
		mx.cells = map[string]map[string]string{}
	}
	if mx.cells[label] == nil {
		mx.cells[label] = map[string]string{}
		mx.order = append(mx.order, label)
	}
	mx.cells[label][kind] = cell
}

func (mx *matrix) markdown() string {
	mx.mu.Lock()
	defer mx.mu.Unlock()
	var b strings.Builder
	b.WriteString("| row / mode | " + strings.Join(kinds, " | ") + " |\n|---|")
	for range kinds {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	counts := map[string]int{}
	for _, label := range mx.order {
		b.WriteString("| " + label + " |")
		for _, k := range kinds {
			c := mx.cells[label][k]
			if c == "" {
				c = "not run"
			}
			counts[c]++
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n%d pass, %d FAIL, %d n.a., %d known broken, %d not run\n",
		counts["pass"], counts["FAIL"], counts["n.a."], counts["known broken"], counts["not run"])
	if len(mx.notes) > 0 {
		b.WriteString("\nn.a. means the row does not apply to that transport or mode:\n\n")
		for _, n := range mx.notes {
			b.WriteString("- " + n + "\n")
		}
	}
	if len(mx.broken) > 0 {
		b.WriteString("\nKnown broken:\n\n")
		for _, n := range mx.broken {
			b.WriteString("- " + n + "\n")
		}
	}
	return b.String()
}

// TestNegotiationMatrix runs every row of the probe table on every
// transport in every mode and prints the matrix.
func TestNegotiationMatrix(t *testing.T) {
	var mx matrix
	t.Cleanup(func() {
		md := mx.markdown()
		t.Log("negotiation matrix:\n" + md)
		if out := os.Getenv("CONDUIT_MATRIX_OUT"); out != "" {
			if err := os.WriteFile(out, []byte("# Conduit end-to-end negotiation matrix\n\n"+md), 0o644); err != nil {
				t.Errorf("writing CONDUIT_MATRIX_OUT: %v", err)
			}
		}
	})
	for _, r := range rows() {
		t.Run(r.name, func(t *testing.T) {
			for _, m := range modes {
				t.Run(m.name, func(t *testing.T) {
					label := r.name + " — " + m.name
					for _, k := range kinds {
						reason := ""
						if r.na != nil {
							reason = r.na(k, m)
						}
						if reason != "" {
							mx.na(label, k, reason)
							continue
						}
						t.Run(k, func(t *testing.T) {
							t.Parallel()
							key := r.name + "/" + m.name + "/" + k
							ck := &checker{t: t}
							runCase(ck, r, m, k)
							switch why, broken := knownBroken[key]; {
							case broken && len(ck.failures) > 0:
								note := fmt.Sprintf("%s: %s — %s", key, why, strings.Join(ck.failures, "; "))
								t.Logf("KNOWN BROKEN %s", note)
								// Loud even without -v.
								fmt.Fprintf(os.Stderr, "e2e: KNOWN BROKEN %s\n", note)
								mx.knownBroken(key + ": " + why)
								mx.set(label, k, "known broken")
							case broken:
								t.Errorf("%s is listed in knownBroken (%s) but passed: remove it", key, why)
								mx.set(label, k, "FAIL")
							case len(ck.failures) > 0:
								for _, f := range ck.failures {
									t.Error(f)
								}
								mx.set(label, k, "FAIL")
							default:
								mx.set(label, k, "pass")
							}
						})
					}
				})
			}
		})
	}
}

// knownBroken lists cases (row/mode/transport) that fail because of a bug
// that is not fixed yet, with the reason. They are run and logged loudly.
var knownBroken = map[string]string{
	// None at the moment. Seed 003 moved the WebSocket cells of the
	// probe-timeout and dropped-connection rows to the HTTP class's retry
	// rows ("HTTP and WebSocket retry then success: timeout", "WebSocket:
	// server dropped the connection during the probe").
}

// runCase runs one (row, mode, transport) case.
func runCase(ck *checker, r row, m mode, kind string) {
	t := ck.t
	w := r.expect(kind, m)
	e := newEnv(t, kind, r.server)
	ctx, cancel := context.WithTimeout(context.Background(), caseLimit)
	defer cancel()

	probe := 10 * time.Second // generous: a slow process start must not look like a timeout
	if r.short {
		probe = time.Second // above a loaded -race run's answer time, so only the silent probes time out
	}
	opts := []client.Option{
		client.WithProtocol(m.p),
		client.WithRetry(client.RetryPolicy{MaxAttempts: 4, InitialInterval: 5 * time.Millisecond, MaxInterval: 20 * time.Millisecond, MaxElapsed: 10 * time.Second,
			ProbeTimeout: probe}),
	}
	if r.replayAll {
		opts = append(opts, client.WithCallDefaults(client.WithReplay(client.ReplayAll)))
	}
	// The client's log, shown when the server saw other methods than due.
	var clog logBuffer
	opts = append(opts, client.WithLogger(slog.New(slog.NewTextHandler(&clog, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	var tokens transport.TokenSource
	var token tokenBox
	if r.auth {
		tokens = transport.TokenSourceFunc(token.get)
		opts = append(opts, client.WithAuth(client.Auth{Tokens: tokens, Authorize: func(ctx context.Context, ch *transport.HTTPError) error {
			token.set("let-me-in")
			return nil
		}}))
	}

	c, err := e.connect(ctx, r.dial, r.maxMsg, tokens, opts...)
	switch {
	case w.err != nil && err == nil:
		ck.errorf("Connect succeeded (era %v, version %q, trace %+v), want %s", c.Negotiated().Era, c.Negotiated().Version, c.Negotiated().Trace, w.err.desc)
	case w.err != nil && !w.err.ok(err):
		ck.errorf("Connect error = %v (%T), want %s", err, err, w.err.desc)
	case w.err == nil && err != nil:
		ck.errorf("Connect: %v", err)
	}
	if c != nil {
		if w.err == nil {
			if c.Negotiated().Era != w.era || c.Negotiated().Version != w.version {
				ck.errorf("negotiated %v %q, want %v %q (trace %+v)", c.Negotiated().Era, c.Negotiated().Version, w.era, w.version, c.Negotiated().Trace)
			}
			callEcho(ctx, ck, c, r.callCtx, w.callErr)
			if r.settle {
				var res protocol.ListToolsResult
				if err := c.Call(ctx, mList, &protocol.ListToolsParams{}, &res); err != nil || len(res.Tools) == 0 {
					ck.errorf("tools/list after the echo call: %d tools, %v", len(res.Tools), err)
				}
			}
		}
		if err := c.Close(); err != nil && w.callErr == nil {
			ck.errorf("Close: %v", err)
		}
	}

	procs := e.received(t)
	if got := methods(procs); !cmp.Equal(got, w.methods) {
		ck.errorf("methods the server saw (-got +want):\n%s\nmessages: %s\nclient log:\n%s", cmp.Diff(got, w.methods), messageIDs(procs), clog.String())
	}
	if kind == kindStdio {
		wantProcs := max(w.procs, 1)
		if len(procs) != wantProcs {
			ck.errorf("server processes recorded = %d, want %d: %s", len(procs), wantProcs, summary(procs))
		}
		_, err := os.Stat(e.marker)
		if exited := slices.ContainsFunc(procs, func(p process) bool { return p.Exit == "fault" }); exited != (err == nil) {
			ck.errorf("exit marker present = %v, but a process exited on a fault = %v", err == nil, exited)
		}
	}
	checkVersions(ck, m, w, procs)
	if w.extra != nil {
		w.extra(ck, procs)
	}
}

// callEcho makes the working call on a negotiated connection.
func callEcho(ctx context.Context, ck *checker, c *client.Client, limit time.Duration, wantErr *errCheck) {
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	res, err := c.CallTool(ctx, "echo", map[string]any{"text": "hello matrix"})
	switch {
	case wantErr != nil && err == nil:
		ck.errorf("echo succeeded, want %s", wantErr.desc)
	case wantErr != nil && !wantErr.ok(err):
		ck.errorf("echo error = %v (%T), want %s", err, err, wantErr.desc)
	case wantErr == nil && err != nil:
		ck.errorf("echo: %v", err)
	case wantErr == nil:
		if (res.IsError != nil && *res.IsError) || len(res.Content) == 0 || !strings.Contains(contentText(res.Content[0]), "hello matrix") {
			ck.errorf("echo result = %+v", res)
		}
	}
}

func contentText(c protocol.Content) string {
	b, _ := json.Marshal(c)
	var v struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(b, &v)
	return v.Text
}

// checkVersions asserts the version each negotiation message carried: every
// server/discover the modern version in _meta (a pin: exactly the pin), every
// initialize the mode's legacy version. Over HTTP it also checks the
// MCP-Protocol-Version header: the probe's version on server/discover, none
// on initialize, the negotiated version on tools/call.
func checkVersions(ck *checker, m mode, w want, procs []process) {
	for _, p := range procs {
		for _, r := range p.Received {
			if r.Transport != testserver.TransportHTTP || r.HTTPMethod != http.MethodPost {
				continue
			}
			got := r.Headers.Get(protocol.HeaderProtocolVersion)
			switch r.Method {
			case mDiscover:
				if got != modernV {
					ck.errorf("HTTP server/discover carried %s %q, want %q", protocol.HeaderProtocolVersion, got, modernV)
				}
			case mInitialize:
				if got != "" {
					ck.errorf("HTTP initialize carried %s %q, want none", protocol.HeaderProtocolVersion, got)
				}
			case mCall:
				if w.err == nil && got != w.version {
					ck.errorf("HTTP tools/call carried %s %q, want the negotiated %q", protocol.HeaderProtocolVersion, got, w.version)
				}
			}
		}
	}
	initV := w.initVersion
	if initV == "" {
		initV = legacyV
		if v, ok := legacyMode(m.p); ok {
			initV = v
		}
	}
	for _, p := range procs {
		for _, r := range p.Received {
			switch r.Method {
			case mDiscover:
				var v string
				if json.Unmarshal(r.Meta(protocol.MetaProtocolVersion), &v); v != modernV {
					ck.errorf("server/discover carried protocol version %q, want %q", v, modernV)
				}
			case mInitialize:
				var ip protocol.InitializeParams
				if err := json.Unmarshal(r.Params, &ip); err != nil || ip.ProtocolVersion != initV {
					ck.errorf("initialize carried protocolVersion %q (%v), want %q", ip.ProtocolVersion, err, initV)
				}
			}
		}
	}
}

// tokenBox is a bearer token set by an Authorize hook.
type tokenBox struct {
	mu  sync.Mutex
	tok string
}

func (b *tokenBox) get(context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tok, nil
}

func (b *tokenBox) set(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tok = s
}

// logBuffer keeps the first 64 KiB of a client's log, for a failure's
// message; the client logs from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := 64<<10 - len(l.buf); room > 0 {
		l.buf = append(l.buf, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}

// messageIDs lists what the server received as method#id (HTTP verbs
// other than POST by name), to tell a message sent twice from two
// messages.
func messageIDs(procs []process) string {
	var parts []string
	for _, p := range procs {
		for _, r := range p.Received {
			m := r.Method
			if r.HTTPMethod != "" && r.HTTPMethod != http.MethodPost {
				m = r.HTTPMethod
			}
			parts = append(parts, m+"#"+r.ID.String())
		}
	}
	return strings.Join(parts, " ")
}
