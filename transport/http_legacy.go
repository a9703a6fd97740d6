package transport

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// The legacy era of Streamable HTTP (2025-06-18, 2025-11-25): a session id
// echoed on every request, the optional GET stream, resumption of a broken
// response stream with Last-Event-ID, and DELETE on Close. None of it runs
// in the modern era.

// Reconnect and retry pacing of GET streams.
const (
	// defaultReconnectDelay is the wait before reconnecting a stream that
	// ended cleanly when the server sent no retry field.
	defaultReconnectDelay = time.Second
	// minReconnectDelay keeps a server that closes at once with retry: 0
	// from making the client spin.
	minReconnectDelay = 50 * time.Millisecond
	// maxBackoff caps the wait after failures.
	maxBackoff = 30 * time.Second
	// maxGETFailures is how many consecutive failed GET attempts end a
	// stream for good.
	maxGETFailures = 5
)

// legacySession is the state only the legacy era has; httpConn.mu guards
// it.
type legacySession struct {
	sessionID string        // from the initialize response; "" before
	postOK    bool          // a POST succeeded in the legacy era
	getOn     bool          // the GET stream goroutine runs
	getDone   bool          // a GET stream ran and ended…
	getDoneID string        // …for this session id
	getReady  chan struct{} // closed when the current GET stream's first attempt answered (or ended); nil before any
	getHeld   bool          // DeferStream was called and OpenStream not yet
	getOpened bool          // OpenStream was called: DeferStream no longer holds
}

// SessionID returns the legacy session id, or "".
func (c *httpConn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.legacy.sessionID
}

// WaitStreamReady waits until the legacy GET stream's first attempt has
// an answer (headers, a refusal such as 405, or a failure), ctx ends, or
// the connection closes. It returns nil at once when no GET stream was
// started (modern era, DisableGETStream, not initialized yet). See
// [StreamReadyWaiter].
func (c *httpConn) WaitStreamReady(ctx context.Context) error {
	c.mu.Lock()
	ready, legacy := c.legacy.getReady, c.era == negotiation.EraLegacy
	c.mu.Unlock()
	if ready == nil || !legacy {
		return nil
	}
	select {
	case <-ready:
		return nil
	case <-c.ctx.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// DeferStream keeps the legacy GET stream from opening until OpenStream
// (see [StreamDeferrer]). It has no effect once OpenStream was called.
func (c *httpConn) DeferStream() {
	c.mu.Lock()
	if !c.legacy.getOpened {
		c.legacy.getHeld = true
	}
	c.mu.Unlock()
}

// OpenStream lets the legacy GET stream open, at once when the session is
// initialized (see [StreamDeferrer]).
func (c *httpConn) OpenStream() {
	c.mu.Lock()
	c.legacy.getHeld, c.legacy.getOpened = false, true
	c.maybeStartGETLocked()
	c.mu.Unlock()
}

// captureSession remembers a legacy session id from any response that
// carries one (the spec sends it with the initialize response).
func (c *httpConn) captureSession(resp *http.Response) {
	s := resp.Header.Get(protocol.HeaderSessionID)
	if s == "" {
		return
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			c.log.Warn("transport: ignoring invalid session id", "url", c.url)
			return
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.legacy.sessionID != s {
		c.legacy.sessionID = s
		c.maybeStartGETLocked()
	}
}

// expireSession forgets session id sid after the server answered 404 to
// it, unless a newer one replaced it meanwhile.
func (c *httpConn) expireSession(sid string) {
	c.mu.Lock()
	if c.legacy.sessionID == sid {
		c.legacy.sessionID = ""
	}
	c.mu.Unlock()
}

// postSucceeded records a successful legacy POST, which may start the GET
// stream of a server that gave no session id.
func (c *httpConn) postSucceeded() {
	c.mu.Lock()
	c.legacy.postOK = true
	c.maybeStartGETLocked()
	c.mu.Unlock()
}

// maybeStartGETLocked starts the legacy GET stream when it is wanted: a
// legacy version is set, the server gave a session id or accepted a POST,
// and no stream runs or already ended for this session.
func (c *httpConn) maybeStartGETLocked() {
	l := &c.legacy
	if c.closed || c.disableGET || l.getHeld || l.getOn || c.era != negotiation.EraLegacy ||
		l.sessionID == "" && !l.postOK || l.getDone && l.getDoneID == l.sessionID {
		return
	}
	l.getOn = true
	sid := l.sessionID
	ready := make(chan struct{})
	l.getReady = ready
	var readyOnce sync.Once
	signal := func() { readyOnce.Do(func() { close(ready) }) }
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer signal()
		_, err := c.getLoopNotify(c.ctx, jsonrpc.ID{}, "", 0, eventIDs{}, signal)
		var he *HTTPError
		switch {
		case c.ctx.Err() != nil:
		case errors.As(err, &he) && he.StatusCode == http.StatusMethodNotAllowed:
			c.log.Debug("transport: server offers no GET stream", "url", c.url)
		default:
			c.log.Warn("transport: GET stream ended", "url", c.url, "err", err)
		}
		c.mu.Lock()
		c.legacy.getOn, c.legacy.getDone, c.legacy.getDoneID = false, true, sid
		c.mu.Unlock()
	}()
}

// getLoop runs GET streams, reconnecting with Last-Event-ID, until ctx
// ends, the response to want (if valid) has been delivered, or the server
// refuses for good (405, 4xx) or fails maxGETFailures times in a row. The
// wait before a reconnect honours the server's retry field; failures back
// off exponentially (and honour Retry-After). seen is what the stream
// remembers of the events it delivered before (see consume): an event a
// server replays is skipped.
func (c *httpConn) getLoop(ctx context.Context, want jsonrpc.ID, lastID string, retry time.Duration, seen eventIDs) (bool, error) {
	return c.getLoopNotify(ctx, want, lastID, retry, seen, nil)
}

// getLoopNotify is getLoop that also calls opened (when not nil) once the
// first GET attempt has an answer: response headers, a refusal or a
// failure.
func (c *httpConn) getLoopNotify(ctx context.Context, want jsonrpc.ID, lastID string, retry time.Duration, seen eventIDs, opened func()) (bool, error) {
	failures := 0
	delay := time.Duration(0)
	if lastID != "" {
		delay = max(retry, minReconnectDelay)
	}
	for {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return false, ctx.Err()
			}
		}
		resp, cancel, err := c.openGET(ctx, lastID)
		if opened != nil {
			opened()
			opened = nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			var he *HTTPError
			if errors.As(err, &he) && !he.Retryable() {
				return false, err
			}
			failures++
			if failures >= maxGETFailures {
				return false, err
			}
			delay = c.backoff(failures)
			if he != nil && he.RetryAfter > delay {
				delay = min(he.RetryAfter, max(maxBackoff, c.maxBackoff()))
			}
			continue
		}
		res := c.consume(ctx, resp.Body, want, nil, false, seen) // a resumed stream: its messages go through Read
		seen = res.seen
		resp.Body.Close()
		cancel(nil)
		if res.got {
			return true, nil
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if res.lastID != "" {
			lastID = res.lastID
		}
		if res.events > 0 && res.err == nil {
			failures = 0
		} else {
			failures++
			if failures >= maxGETFailures {
				if res.err == nil {
					res.err = errors.New("event stream ended without events")
				}
				return false, res.err
			}
		}
		delay = defaultReconnectDelay
		if res.retry > 0 {
			delay = res.retry
		}
		delay = max(delay, minReconnectDelay)
		if failures > 0 {
			delay = max(delay, c.backoff(failures))
		}
	}
}

// backoff is the wait after n consecutive failures: 1s, 2s, 4s … capped
// at 30s, or as StreamableHTTP.ReconnectBackoff and MaxReconnectBackoff
// say.
func (c *httpConn) backoff(n int) time.Duration {
	first, ceiling := time.Second, c.maxBackoff()
	if c.backoffs[0] > 0 {
		first = c.backoffs[0]
	}
	d := first << min(n-1, 20)
	if d <= 0 { // overflow
		d = ceiling
	}
	return min(d, ceiling)
}

// maxBackoff is the cap of backoff.
func (c *httpConn) maxBackoff() time.Duration {
	if c.backoffs[1] > 0 {
		return c.backoffs[1]
	}
	return maxBackoff
}

// openGET opens one GET stream. On success the caller must close the body
// and call cancel.
func (c *httpConn) openGET(ctx context.Context, lastID string) (*http.Response, context.CancelCauseFunc, error) {
	c.mu.Lock()
	version, sid := c.version, c.legacy.sessionID
	c.mu.Unlock()
	reqCtx, cancel := context.WithCancelCause(ctx)
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, c.url, nil)
	if err != nil {
		cancel(nil)
		return nil, nil, err
	}
	hs := headersOf(req, 4)
	if err := c.prepare(reqCtx, req, &hs, version, sid); err != nil {
		cancel(nil)
		return nil, nil, err
	}
	hs.set(hdrAccept, mediaEventStream)
	if lastID != "" {
		hs.set(hdrLastEventID, lastID)
	}
	req, err = applyHook(reqCtx, req, c.headerFunc)
	if err != nil {
		cancel(nil)
		return nil, nil, err
	}
	var timer *time.Timer
	if c.rht > 0 {
		timer = time.AfterFunc(c.rht, func() { cancel(headerTimeoutError{}) })
	}
	resp, err := c.client.Do(req)
	if timer != nil {
		timer.Stop()
	}
	if err != nil {
		err = requestError(ctx, reqCtx, http.MethodGet, c.url, err)
		cancel(nil)
		return nil, nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 || mediaType(resp.Header.Get("Content-Type")) != mediaEventStream {
		herr := newHTTPError(http.MethodGet, c.url, resp)
		herr.SessionExpired = resp.StatusCode == http.StatusNotFound && sid != ""
		cancel(nil)
		return nil, nil, herr
	}
	return resp, cancel, nil
}

// deleteSession sends DELETE with the session id, bounded by
// DeleteTimeout.
func (c *httpConn) deleteSession(version, sid string) {
	ctx, cancel := context.WithTimeout(context.Background(), DeleteTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return
	}
	hs := headersOf(req, 2)
	if err := c.prepare(ctx, req, &hs, version, sid); err != nil {
		c.log.Warn("transport: preparing DELETE", "url", c.url, "err", err)
		return
	}
	req, err = applyHook(ctx, req, c.headerFunc)
	if err != nil {
		return
	}
	resp, err := c.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		c.log.Warn("transport: ending session", "url", c.url, "err", err)
		return
	}
	drain(resp.Body)
	if resp.StatusCode != http.StatusMethodNotAllowed && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		c.log.Warn("transport: ending session", "url", c.url, "status", resp.StatusCode)
	}
}
