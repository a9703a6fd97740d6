package conduittest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// CodeNotInTranscript is the JSON-RPC error code a [Replay] answers to a
// request its transcript has no match for; the error's data holds the diff
// against the nearest recorded request.
const CodeNotInTranscript = -32099

// Replay is a fake MCP server that plays a transcript back: it answers each
// request the client sends with what the recorded server answered to the
// same request, together with the notifications and server-to-client
// requests that came with it (sampling, elicitation, roots, progress, list
// changes), waiting for the client's answer to each server request.
//
// A request matches a recorded one with the same method and params; in
// params._meta only the modern protocolVersion is compared (progress
// tokens, client info and capabilities there may differ). Ids are
// remapped: the response carries the live request's id, progress
// notifications its progress token, and subscription notifications and
// cancellations its id; server requests get ids of the replay's own, so
// that two plays of one recorded exchange never share one. Recorded
// requests are used in order; once all
// copies of one are used, the last is answered again. A request without a
// match is answered at once with error [CodeNotInTranscript], and the
// mismatch, a diff against the nearest recorded request, is reported
// (with t.Errorf for [NewReplay]). Recorded timing is not reproduced.
type Replay struct {
	exchanges []*exchange               // written once by StartReplay
	byKey     map[matchIndex]*matchList // written once by StartReplay; its cursors guarded by mu
	report    func(string)
	ctx       context.Context
	cancel    context.CancelFunc
	conns     group       // in-memory connections and the goroutines playing exchanges
	http      *replayConn // the state shared by HTTP requests; written once
	gets      standalone  // the HTTP GET streams

	mu         sync.Mutex
	mismatches []string         // guarded by mu
	hs         *httptest.Server // guarded by mu
}

// NewReplay returns a replay of entries (see [ReadTranscript]) that is
// closed when the test finishes and reports every mismatch with
// tb.Errorf.
func NewReplay(tb testing.TB, entries []Entry) *Replay {
	tb.Helper()
	r := StartReplay(entries, func(msg string) {
		tb.Helper()
		tb.Errorf("%s", msg)
	})
	tb.Cleanup(func() { r.Close() })
	return r
}

// StartReplay returns a replay of entries for programs (conduit serve
// --replay); report, if not nil, is called with every mismatch. The caller
// must call [Replay.Close].
func StartReplay(entries []Entry, report func(msg string)) *Replay {
	ctx, cancel := context.WithCancel(context.Background())
	xs := buildExchanges(entries)
	r := &Replay{exchanges: xs, byKey: indexExchanges(xs), report: report, ctx: ctx, cancel: cancel}
	r.http = &replayConn{r: r, waiting: map[string]chan struct{}{}, send: r.sendStandalone}
	return r
}

// Close ends every connection and the HTTP listener and waits for the
// goroutines of the replay. It is idempotent and returns nil.
func (r *Replay) Close() error {
	r.conns.shut()
	r.cancel()
	r.mu.Lock()
	hs := r.hs
	r.mu.Unlock()
	if hs != nil {
		hs.Close()
	}
	r.conns.wait()
	return nil
}

// Mismatches returns the report of every request that had no match, in
// order.
func (r *Replay) Mismatches() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.mismatches...)
}

// Unused returns the recorded requests that were never replayed, as
// "line N: method", so a test can check that the host made every call it
// made when the transcript was recorded.
func (r *Replay) Unused() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, x := range r.exchanges {
		if !x.used && !x.req.IsNotification() {
			out = append(out, fmt.Sprintf("line %d: %s", x.line, x.req.Method))
		}
	}
	return out
}

func (r *Replay) mismatch(msg string) {
	r.mu.Lock()
	r.mismatches = append(r.mismatches, msg)
	r.mu.Unlock()
	if r.report != nil {
		r.report(msg)
	}
}

// Transport returns an in-memory transport to the replay; each Connect
// opens a new connection.
func (r *Replay) Transport() transport.Transport { return replayTransport{r} }

type replayTransport struct{ r *Replay }

// Kind returns transport.KindMemory.
func (replayTransport) Kind() string { return transport.KindMemory }

// Connect implements transport.Transport.
func (t replayTransport) Connect(ctx context.Context) (transport.Conn, error) {
	p, end := transport.NewPipe()
	if !t.r.conns.goServe(end, func() { _ = t.r.ServeStdio(t.r.ctx, end, end) }) {
		return nil, transport.ErrClosed
	}
	return p.Connect(ctx)
}

// ServeStdio serves the replay on newline-delimited JSON-RPC read from in
// and written to out, until in ends or ctx ends. Lines that are not
// JSON-RPC messages are reported as mismatches and skipped.
func (r *Replay) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(r.ctx, cancel)
	defer stop()
	var wmu sync.Mutex
	c := &replayConn{r: r, ctx: ctx, waiting: map[string]chan struct{}{}, send: func(m jsonrpc.Message) error {
		b, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			return err
		}
		wmu.Lock()
		defer wmu.Unlock()
		_, err = out.Write(append(b, '\n'))
		return err
	}}
	defer func() {
		cancel() // ends the requests held open
		c.handlers.Wait()
	}()
	if cl, ok := in.(io.Closer); ok {
		defer context.AfterFunc(ctx, func() { cl.Close() })()
	}
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(br, maxTranscriptLine)
		if len(bytes.TrimSpace(line)) > 0 {
			msg, derr := jsonrpc.DecodeMessage(line)
			if derr != nil {
				r.mismatch(fmt.Sprintf("conduittest: replay: undecodable message from the client: %v", derr))
			} else {
				c.handle(msg)
			}
		}
		if err != nil {
			if err == io.EOF || ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// readLine reads one line of at most max bytes (longer lines are cut).
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= max {
			line = append(line, chunk...)
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// replayConn is one client connection (or, for HTTP, every request) to a
// replay.
type replayConn struct {
	r        *Replay
	ctx      context.Context // nil for HTTP: each request brings its own
	send     func(jsonrpc.Message) error
	handlers sync.WaitGroup

	mu      sync.Mutex
	waiting map[string]chan struct{} // server request id → closed on the client's answer; guarded by mu
	lastID  int64                    // the id of the last server request sent; guarded by mu
}

// handle acts on one message from the client.
func (c *replayConn) handle(msg jsonrpc.Message) {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		c.answered(m.ID)
	case *jsonrpc.Request:
		x, diff := c.r.match(m)
		if x == nil && m.IsNotification() {
			return // an unrecorded notification needs no answer
		}
		if x == nil {
			c.r.mismatch(diff)
			_ = c.send(jsonrpc.NewErrorResponse(m.ID, jsonrpc.NewError(CodeNotInTranscript, "conduittest: request not in the transcript").WithData(map[string]string{"diff": diff})))
			return
		}
		c.handlers.Add(1)
		if !c.r.conns.goServe(nil, func() {
			defer c.handlers.Done()
			c.play(c.ctx, x, x.steps, m, c.send)
		}) {
			c.handlers.Done()
		}
	}
}

// answered wakes the step waiting for the client's answer to id.
func (c *replayConn) answered(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := idKey(id)
	if ch, ok := c.waiting[key]; ok {
		close(ch)
		delete(c.waiting, key)
	}
}

// play emits the recorded server messages of steps (of x) for the live
// request. Messages the recorded server sent after answering wait for the
// recorded gap first.
func (c *replayConn) play(ctx context.Context, x *exchange, steps []step, live *jsonrpc.Request, send func(jsonrpc.Message) error) {
	var wait chan struct{}
	for _, st := range steps {
		if st.delay > 0 {
			t := time.NewTimer(st.delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		if st.hold {
			<-ctx.Done()
			return
		}
		if st.await {
			select {
			case <-wait:
			case <-ctx.Done():
				return
			}
			continue
		}
		msg := remap(st.msg, x.req, live)
		if req, ok := msg.(*jsonrpc.Request); ok && !req.IsNotification() {
			// A fresh id: the recorded one may be in flight already, for
			// a recorded exchange played to two requests at once.
			wait = make(chan struct{})
			c.mu.Lock()
			c.lastID++
			msg = &jsonrpc.Request{ID: jsonrpc.Int64ID(c.lastID), Method: req.Method, Params: req.Params}
			c.waiting[idKey(jsonrpc.Int64ID(c.lastID))] = wait
			c.mu.Unlock()
		}
		if send(msg) != nil {
			return
		}
	}
}

// metaKeep are the params._meta keys that matching compares.
var metaKeep = []string{protocol.MetaProtocolVersion}
