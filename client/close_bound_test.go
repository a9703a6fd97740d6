package client_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// Issue 15 item 7 at the client level: Client.Close (the engine's Close and
// the transport's together) returns within its documented bound against a
// server that stops reading, one that stops answering, and one that
// black-holes the legacy DELETE, and leaves no goroutine (TestMain's
// goleak) or process behind.

// closeStdioEnv makes the test binary a stdio server that misbehaves once
// it has answered the call whose arguments hold stallMarker: its value is
// the mode ("no-read" or "no-answer"), closePIDEnv the file it writes its
// process id to.
const (
	closeStdioEnv = "CONDUIT_CLIENT_TEST_CLOSE_STDIO"
	closePIDEnv   = "CONDUIT_CLIENT_TEST_CLOSE_PID"
	stallMarker   = "stall-now"
)

func init() {
	// Runs before TestMain: the child never reaches the tests.
	if mode := os.Getenv(closeStdioEnv); mode != "" {
		os.Exit(serveMisbehaving(mode))
	}
}

// serveMisbehaving serves the test server on stdio until it has read a
// line holding stallMarker. Then, "no-read": it never reads stdin again
// (the pipe fills; SIGTERM ends it). "no-answer": it keeps draining stdin,
// answers nothing, and ignores both stdin's end and SIGTERM (only SIGKILL
// ends it).
func serveMisbehaving(mode string) int {
	if err := os.WriteFile(os.Getenv(closePIDEnv), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return 2
	}
	if mode == "no-answer" {
		signal.Ignore(syscall.SIGTERM)
	}
	in := &stallReader{r: bufio.NewReader(os.Stdin), mode: mode}
	srv := testserver.New(testserver.Options{})
	_ = srv.ServeStream(context.Background(), in, os.Stdout)
	lingerForever() // stdin ended: still the process lingers until it is killed
	return 0
}

// stallReader passes stdin through line by line until a line holds
// stallMarker; after that line, Read never returns.
type stallReader struct {
	r       *bufio.Reader
	mode    string
	stalled bool
	pending []byte
}

func (s *stallReader) Read(p []byte) (int, error) {
	if len(s.pending) == 0 {
		if s.stalled {
			if s.mode == "no-answer" {
				_, _ = io.Copy(io.Discard, s.r) // keep reading, answer nothing
			}
			lingerForever()
		}
		line, err := s.r.ReadSlice('\n')
		if bytes.Contains(line, []byte(stallMarker)) {
			s.stalled = true
		}
		if len(line) == 0 && err != nil {
			return 0, err
		}
		s.pending = append(s.pending[:0], line...)
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// lingerForever blocks the goroutine (sleeping, so that the runtime never
// sees a deadlock and exits).
func lingerForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// stallListener's connections stop reading (and so answering) once stall
// is called: a Read in progress drops what it got; release ends the Reads.
type stallListener struct {
	net.Listener
	once    sync.Once
	stalled chan struct{}
	release chan struct{}
}

func (l *stallListener) stall() { l.once.Do(func() { close(l.stalled) }) }

func (l *stallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &stallConn{Conn: c, l: l}, nil
}

type stallConn struct {
	net.Conn
	l *stallListener
}

func (c *stallConn) isStalled() bool {
	select {
	case <-c.l.stalled:
		return true
	default:
		return false
	}
}

func (c *stallConn) Read(p []byte) (int, error) {
	if !c.isStalled() {
		n, err := c.Conn.Read(p)
		if !c.isStalled() {
			return n, err
		}
	}
	<-c.l.release
	return 0, net.ErrClosed
}

// closeServer is a server on one transport that can be made to misbehave.
type closeServer struct {
	c        *client.Client
	sent     chan struct{} // one value per test call handed to the transport (see watchSent)
	misfire  func()        // makes the server misbehave (after a marker call on stdio)
	pidFile  string        // stdio: where the child wrote its pid
	deletes  chan struct{} // HTTP: one value per DELETE received
	srv      *testserver.Server
	listener *stallListener
}

// Arguments of the calls that are in flight when Close is called.
const (
	neverAnswered = "never answered"
	largeText     = 8 << 20 // bytes: more than the pipe's or the sockets' buffers hold
)

// watchSent is the client's message log: it notes each test call (not the
// marker) once the session hands it to the transport, that is, once the
// call is registered and its Write begins.
func (cs *closeServer) watchSent(sent bool, m jsonrpc.Message) {
	req, ok := m.(*jsonrpc.Request)
	if !sent || !ok || req.Method != "tools/call" {
		return
	}
	if len(req.Params) > largeText || bytes.Contains(req.Params, []byte(neverAnswered)) {
		select {
		case cs.sent <- struct{}{}:
		default:
		}
	}
}

// awaitSent waits until n test calls are in flight: registered, and
// their Writes begun. Building a call of 8 MiB (encoding and compacting
// its params) takes a second or more of CPU under -race on a loaded
// machine; a call still being built is not in flight (Close cannot
// interrupt json.Marshal: the call fails with ErrClosed once it is built),
// so the test waits for this point instead of sleeping a fixed time.
func (cs *closeServer) awaitSent(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for i := range n {
		select {
		case <-cs.sent:
		case <-deadline:
			t.Fatalf("%d of %d calls were handed to the transport within 2 minutes", i, n)
		}
	}
}

// closeScenarios: what the server stops doing.
const (
	stopsReading   = "stops reading"
	stopsAnswering = "stops answering"
	blackHolesDel  = "black-holes the DELETE"
)

func startCloseServer(t *testing.T, tr, scenario string, p client.Protocol) *closeServer {
	t.Helper()
	ctx := testCtx(t)
	cs := &closeServer{deletes: make(chan struct{}, 4), sent: make(chan struct{}, 2)}
	opts := []client.Option{client.WithProtocol(p), client.WithMessageLog(cs.watchSent)}
	if tr == tStdio {
		mode := map[string]string{stopsReading: "no-read", stopsAnswering: "no-answer"}[scenario]
		cs.pidFile = filepath.Join(t.TempDir(), "pid")
		cmd := transport.Command(os.Args[0], "-test.run=^$")
		cmd.Env = []string{closeStdioEnv + "=" + mode, closePIDEnv + "=" + cs.pidFile}
		cmd.TerminateDelay, cmd.KillDelay = 200*time.Millisecond, 200*time.Millisecond
		c, err := client.Connect(ctx, cmd, opts...)
		if err != nil {
			t.Fatalf("connecting over stdio: %v", err)
		}
		cs.c = c
		cs.misfire = func() {
			if _, err := c.CallTool(ctx, "echo", map[string]any{"text": stallMarker}); err != nil {
				t.Fatalf("the marker call: %v", err)
			}
		}
		return cs
	}
	cs.srv = testserver.New(testserver.Options{})
	h := cs.srv.Handler()
	if tr == tWS {
		h = cs.srv.WebSocketHandler()
	}
	release := make(chan struct{})
	holdDelete := scenario == blackHolesDel
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			cs.deletes <- struct{}{}
			if holdDelete {
				<-release
				return
			}
		}
		h.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cs.listener = &stallListener{Listener: ln, stalled: make(chan struct{}), release: release}
	ts := httptest.NewUnstartedServer(wrapped)
	ts.Listener = cs.listener
	ts.Start()
	t.Cleanup(func() {
		close(release) // before the servers close: they wait for the handlers
		cs.srv.Close()
		ts.Close()
	})
	url := ts.URL
	if tr == tWS {
		url = "ws" + strings.TrimPrefix(url, "http")
	}
	cs.c, err = client.Dial(ctx, url, opts...)
	if err != nil {
		t.Fatalf("connecting over %s: %v", tr, err)
	}
	switch scenario {
	case stopsReading:
		cs.misfire = cs.listener.stall
	default: // stops answering; the DELETE case too, with a call in flight
		cs.misfire = func() { cs.srv.SetFaults(testserver.Fault{Kind: testserver.FaultSilent, Method: "tools/call"}) }
	}
	return cs
}

// closeBound is Client.Close's documented bound for the case (see its
// doc): the transport's own close bound, plus scheduling slack. No handler
// runs here, so the engine's CloseTimeout never applies.
func closeBound(tr string, p client.Protocol) time.Duration {
	const slack = 2 * time.Second
	switch {
	case tr == tStdio:
		return 400*time.Millisecond + slack // TerminateDelay + KillDelay
	case tr == tWS:
		return 10*time.Second + slack // the close handshake: 5 s to send, 5 s for the answer
	case p == client.Legacy:
		return transport.DeleteTimeout + slack
	}
	return slack
}

func TestCloseBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the transports' close bounds")
	}
	cases := []struct{ tr, scenario string }{
		{tStdio, stopsReading}, {tStdio, stopsAnswering},
		{tHTTP, stopsReading}, {tHTTP, stopsAnswering}, {tHTTP, blackHolesDel},
		{tWS, stopsReading}, {tWS, stopsAnswering},
	}
	for _, era := range allEras {
		for _, tc := range cases {
			if tc.scenario == blackHolesDel && era.p != client.Legacy {
				continue // only a legacy session ends with a DELETE
			}
			t.Run(era.name+"/"+tc.tr+"/"+tc.scenario, func(t *testing.T) {
				t.Parallel()
				testCloseBounded(t, tc.tr, tc.scenario, era.p)
			})
		}
	}
}

func testCloseBounded(t *testing.T, tr, scenario string, p client.Protocol) {
	cs := startCloseServer(t, tr, scenario, p)
	cs.misfire()
	// A call the server will never answer, and (when it stops reading) a
	// large one whose Write blocks once the buffers are full.
	calls := make(chan error, 2)
	n := 1
	go func() {
		_, err := cs.c.CallTool(context.Background(), "echo", map[string]any{"text": neverAnswered})
		calls <- err
	}()
	if scenario == stopsReading {
		n = 2
		go func() {
			_, err := cs.c.CallTool(context.Background(), "echo", map[string]any{"text": strings.Repeat("x", largeText)})
			calls <- err
		}()
	}
	cs.awaitSent(t, n)
	time.Sleep(300 * time.Millisecond) // the Writes fill the buffers

	bound := closeBound(tr, p)
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cs.c.Close() }()
	select {
	case <-done:
	case <-time.After(bound + 10*time.Second):
		t.Fatalf("Close did not return within %v", bound+10*time.Second)
	}
	took := time.Since(start)
	if took > bound {
		t.Errorf("Close took %v; its bound is %v", took, bound)
	}
	t.Logf("Close took %v (bound %v)", took.Round(time.Millisecond), bound)
	for range n {
		select {
		case err := <-calls:
			if err == nil {
				t.Error("a call in flight succeeded after Close")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a call in flight did not return after Close")
		}
	}
	if scenario == blackHolesDel && len(cs.deletes) != 1 {
		t.Errorf("server saw %d DELETEs, want 1", len(cs.deletes))
	}
	if cs.pidFile != "" {
		checkProcessGone(t, cs.pidFile)
	}
}

// checkProcessGone fails unless the stdio child has exited and been
// reaped: Close waits for it, so no signal can reach it afterwards.
func checkProcessGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the child's pid: %v", err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatalf("the child's pid %q: %v", b, err)
	}
	if processExists(pid) {
		t.Errorf("the stdio server (pid %d) is still there after Close", pid)
	}
}
