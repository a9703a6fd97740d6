package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/client/internal/link"
	"github.com/conduitmcp/conduit/jsonrpc"
)

// SubscribeOptions says how to subscribe. The zero value subscribes with
// no arguments, from now, in the first mode the type offers.
type SubscribeOptions struct {
	// Arguments are the subscription arguments (the type's inputSchema);
	// nil sends none.
	Arguments any
	// Mode is the delivery mode; "" picks push, poll, then webhook (when
	// Webhook.URL is set), the first the type offers.
	Mode Mode
	// Cursor resumes from a cursor persisted earlier
	// ([Subscription.Cursor]); nil starts from now.
	Cursor *string
	// MaxAge bounds a replay: no event older than this is replayed
	// (maxAgeMs); zero sends none.
	MaxAge time.Duration
	// MaxEvents caps the events of one poll result; zero lets the server
	// choose.
	MaxEvents int
	// Webhook configures webhook delivery.
	Webhook WebhookOptions
}

// WebhookOptions configures webhook delivery.
type WebhookOptions struct {
	// URL is the callback URL the application serves (the extension
	// requires https); required for webhook delivery.
	URL string
	// Receiver, when set, is the [Receiver] serving URL: deliveries
	// verified by it reach the subscription's Events. Nil: deliveries
	// go wherever URL leads (a forward proxy, for example).
	Receiver *Receiver
	// Secret is the signing secret (whsec_ and the base64 of 24 to 64
	// bytes); "" generates one from crypto/rand, as the extension
	// recommends.
	Secret string
	// TTL is the suggested lifetime (ttlMs); zero lets the server choose,
	// negative asks for no expiry (ttlMs null).
	TTL time.Duration
	// NoExpiryRefresh is how often a subscription granted no expiry is
	// refreshed anyway (to advance its cursor and learn its delivery
	// status); zero or negative selects one hour.
	NoExpiryRefresh time.Duration
}

// Event is one event occurrence, or a marker.
type Event struct {
	// ID is the event's eventId (stable: for de-duplication); "" on a
	// marker.
	ID string
	// Name is the event type.
	Name string
	// Time is when the event occurred (zero if the server sent none that
	// parses).
	Time time.Time
	// Data is the payload (the type's payloadSchema).
	Data json.RawMessage
	// Gap marks a possible gap: the server started later than the
	// cursor asked (truncated), or a webhook gap envelope arrived.
	// Authoritative state should be fetched again if it matters.
	Gap bool
	// Err is a transient error the server reported on a push stream
	// (notifications/events/error); the subscription continues.
	Err *jsonrpc.Error
}

// occurrenceWire is an EventOccurrence on the wire.
type occurrenceWire struct {
	EventID   string          `json:"eventId"`
	Name      string          `json:"name"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
	Cursor    *string         `json:"cursor"`
}

func (o occurrenceWire) event() Event {
	t, _ := time.Parse(time.RFC3339Nano, o.Timestamp)
	return Event{ID: o.EventID, Name: o.Name, Time: t, Data: o.Data}
}

// dedupWindow is how many recent eventIds a subscription remembers.
const dedupWindow = 1024

// maxFailures ends a subscription after this many failed attempts in a
// row.
const maxFailures = 10

// closeTimeout bounds events/unsubscribe in Close.
const closeTimeout = 5 * time.Second

// Subscription is one subscription to an event type. All methods are safe
// for concurrent use.
type Subscription struct {
	ec   *Client
	name string
	mode Mode
	args json.RawMessage // the arguments, encoded once
	opts SubscribeOptions

	events chan Event         // closed by run when the subscription ends
	stop   chan struct{}      // closed by Close
	once   sync.Once          // closes stop
	done   chan struct{}      // closed when run returned
	ctx    context.Context    // the requests' context; cancelled by Close
	cancel context.CancelFunc // cancels ctx

	relist chan struct{} // 1-buffered: a list_changed arrived
	term   chan error    // 1-buffered: a webhook terminated envelope's error

	mu     sync.Mutex
	cursor *string // the resume point; guarded by mu
	err    error   // why it ended; guarded by mu
	id     string  // webhook subscription id; guarded by mu

	// seen holds hashes of the recent eventIds (hashes, so that it does
	// not grow with the ids a server chooses); owned by run (webhook:
	// guarded by sendMu). order holds them in arrival order.
	seen  map[uint64]bool
	order []uint64

	sendMu sync.Mutex // webhook offers against the close of events
	ended  bool       // guarded by sendMu
}

// Subscribe subscribes to the event type name. It returns once the
// subscription is established: the first poll answered, the stream
// confirmed, or the webhook granted. The subscription lives until
// [Subscription.Close], the end of ctx, or the client's close.
//
// Errors: a *client.Error of kind client.KindUnsupported (no extension,
// the legacy era, a mode the type does not offer), of kind
// client.KindInvalid (an unknown type, arguments that are not an object,
// webhook delivery without a URL), the server's *jsonrpc.Error, and the
// client's errors.
func (ec *Client) Subscribe(ctx context.Context, name string, opts SubscribeOptions) (*Subscription, error) {
	s, err := ec.prepare(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	unobserve := link.Observe(ec.c, func(n *jsonrpc.Request) {
		if n.Method == NotificationListChanged {
			ec.stale()
			select {
			case s.relist <- struct{}{}:
			default:
			}
		}
	})
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	stopWatch := context.AfterFunc(ctx, s.halt)
	ready := make(chan error, 1)
	untrack, ok := link.Track(ec.c)
	if !ok {
		unobserve()
		stopWatch()
		s.cancel()
		return nil, &client.Error{Op: s.op(), Kind: client.KindClosed, Err: client.ErrClosed}
	}
	go func() {
		defer untrack()
		defer close(s.done)
		defer stopWatch()
		defer unobserve()
		s.finish(s.run(ready))
	}()
	select {
	case err := <-ready:
		if err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

// prepare checks what Subscribe was asked and builds the subscription.
func (ec *Client) prepare(ctx context.Context, name string, opts SubscribeOptions) (*Subscription, error) {
	op := MethodSubscribe
	if err := ec.check(op); err != nil {
		return nil, err
	}
	d, ok, err := ec.descriptor(ctx, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &client.Error{Op: op, Kind: client.KindInvalid, Err: fmt.Errorf("the server lists no event type %q", name)}
	}
	mode, err := pickMode(d, opts)
	if err != nil {
		return nil, err
	}
	var args json.RawMessage
	if opts.Arguments != nil {
		if args, err = json.Marshal(opts.Arguments); err != nil || len(args) == 0 || args[0] != '{' {
			return nil, &client.Error{Op: op, Kind: client.KindInvalid, Err: fmt.Errorf("arguments of %q are not a JSON object", name)}
		}
	}
	s := &Subscription{
		ec: ec, name: name, mode: mode, args: args, opts: opts,
		events: make(chan Event, ec.opts.Buffer), stop: make(chan struct{}), done: make(chan struct{}),
		relist: make(chan struct{}, 1), term: make(chan error, 1), seen: map[uint64]bool{},
	}
	if opts.Cursor != nil {
		c := *opts.Cursor
		s.cursor = &c
	}
	return s, nil
}

// pickMode chooses the delivery mode of a subscription to d.
func pickMode(d Descriptor, opts SubscribeOptions) (Mode, error) {
	offered := func(m Mode) bool { return slices.Contains(d.Delivery, m) }
	if opts.Mode != "" {
		if !offered(opts.Mode) {
			return "", &client.Error{Op: MethodSubscribe, Kind: client.KindUnsupported,
				Err: fmt.Errorf("event type %q offers %v, not %s delivery: %w", d.Name, d.Delivery, opts.Mode, client.ErrNotSupported)}
		}
		if opts.Mode == Webhook && opts.Webhook.URL == "" {
			return "", &client.Error{Op: MethodSubscribe, Kind: client.KindInvalid, Err: errors.New("webhook delivery needs WebhookOptions.URL")}
		}
		return opts.Mode, nil
	}
	for _, m := range []Mode{Push, Poll} {
		if offered(m) {
			return m, nil
		}
	}
	if offered(Webhook) && opts.Webhook.URL != "" {
		return Webhook, nil
	}
	return "", &client.Error{Op: MethodSubscribe, Kind: client.KindUnsupported,
		Err: fmt.Errorf("event type %q offers %v, none of which this subscription can use: %w", d.Name, d.Delivery, client.ErrNotSupported)}
}

// op is the method a subscription's errors name.
func (s *Subscription) op() string {
	switch s.mode {
	case Poll:
		return MethodPoll
	case Push:
		return MethodStream
	}
	return MethodSubscribe
}

// run is the subscription's goroutine: the mode's loop. It reports the
// establishment (or its failure) on ready, once.
func (s *Subscription) run(ready chan<- error) error {
	switch s.mode {
	case Poll:
		return s.runPoll(ready)
	case Push:
		return s.runPush(ready)
	}
	return s.runWebhook(ready)
}

// Events returns the events, in delivery order. It is closed when the
// subscription ends (see [Subscription.Err]).
func (s *Subscription) Events() <-chan Event { return s.events }

// Mode returns the delivery mode in use.
func (s *Subscription) Mode() Mode { return s.mode }

// Name returns the event type.
func (s *Subscription) Name() string { return s.name }

// ID returns the server's id of a webhook subscription; "" otherwise.
func (s *Subscription) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Cursor returns the position to resume from and true, or false when
// there is none (the type has no replay, or nothing was received yet): a
// null cursor is never replayed.
func (s *Subscription) Cursor() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cursor == nil {
		return "", false
	}
	return *s.cursor, true
}

// Err returns why the subscription ended: nil while it runs and after
// Close (or the end of Subscribe's context or of the client), otherwise
// the error that ended it. Once Events is closed, Err has its final
// value.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the subscription (webhook: with events/unsubscribe, bounded
// by 5 s) and waits until its goroutine has returned. It is idempotent.
func (s *Subscription) Close() error {
	s.halt()
	<-s.done
	return nil
}

func (s *Subscription) halt() {
	s.once.Do(func() {
		close(s.stop)
		s.cancel()
	})
}

func (s *Subscription) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// finish records err (nil when stopped) and closes events.
func (s *Subscription) finish(err error) {
	if s.stopped() || errors.Is(err, client.ErrClosed) {
		err = nil
	}
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	s.sendMu.Lock()
	s.ended = true
	close(s.events)
	s.sendMu.Unlock()
}

// setCursor records the resume point (nil: none).
func (s *Subscription) setCursor(c *string) {
	s.mu.Lock()
	s.cursor = c
	s.mu.Unlock()
}

func (s *Subscription) cursorParam() *string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cursor
}

// idSeed seeds the hashes of seen (and of the cursors a listing
// followed): the process's own, so that no server can make two eventIds
// (or cursors) collide.
var idSeed = maphash.MakeSeed()

// seenID reports whether id is among the recent eventIds.
func (s *Subscription) seenID(id string) bool {
	return s.seen[maphash.String(idSeed, id)]
}

// duplicate reports whether id was seen, remembering it.
func (s *Subscription) duplicate(id string) bool {
	if id == "" {
		return false
	}
	k := maphash.String(idSeed, id)
	if s.seen[k] {
		return true
	}
	s.seen[k] = true
	s.order = append(s.order, k)
	if len(s.order) > dedupWindow {
		delete(s.seen, s.order[0])
		s.order = s.order[1:]
	}
	return false
}

// deliver hands ev to the consumer, waiting for room; false when the
// subscription stopped first. Poll and push only (the run goroutine).
func (s *Subscription) deliver(ev Event) bool {
	if ev.ID != "" && s.duplicate(ev.ID) {
		return true
	}
	select {
	case s.events <- ev:
		return true
	case <-s.stop:
		return false
	}
}

// offer hands ev to the consumer without waiting; false when there is no
// room (or the subscription ended). Webhook deliveries and markers.
func (s *Subscription) offer(ev Event) (ok, dup bool) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if s.ended {
		return false, false
	}
	if ev.ID != "" && s.seenID(ev.ID) {
		return true, true
	}
	select {
	case s.events <- ev:
		s.duplicate(ev.ID)
		return true, false
	default:
		return false, false
	}
}

// params are the common params of poll, stream and subscribe.
func (s *Subscription) params() map[string]any {
	p := map[string]any{"name": s.name, "cursor": s.cursorParam()}
	if s.args != nil {
		p["arguments"] = s.args
	}
	if s.opts.MaxAge > 0 {
		p["maxAgeMs"] = s.opts.MaxAge.Milliseconds()
	}
	return p
}

// checkType re-lists after a list_changed and reports an error when the
// type is gone or no longer offers the subscription's mode.
func (s *Subscription) checkType() error {
	select {
	case <-s.relist:
	default:
		return nil
	}
	d, ok, err := s.ec.descriptor(s.ctx, s.name)
	if err != nil {
		return nil // the next request will tell
	}
	if !ok {
		return &client.Error{Op: s.op(), Kind: client.KindUnsupported, Err: fmt.Errorf("event type %q is no longer listed: %w", s.name, client.ErrNotSupported)}
	}
	if !slices.Contains(d.Delivery, s.mode) {
		return &client.Error{Op: s.op(), Kind: client.KindUnsupported, Err: fmt.Errorf("event type %q no longer offers %s delivery: %w", s.name, s.mode, client.ErrNotSupported)}
	}
	return nil
}

// backoff is the wait before attempt n (0-based) of a retry.
func (s *Subscription) backoff(n int) time.Duration {
	d := 250 * time.Millisecond
	for range n {
		d *= 2
		if d >= s.ec.opts.MaxBackoff {
			return s.ec.opts.MaxBackoff
		}
	}
	return d
}

// sleep waits d; false when the subscription stopped first.
func (s *Subscription) sleep(d time.Duration) bool {
	if d <= 0 {
		return !s.stopped()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.stop:
		return false
	case <-s.ec.c.Done():
		return false
	}
}

// answered reports whether err is the server's answer (a JSON-RPC error),
// which ends a subscription, unlike a lost request, which is retried.
func answered(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc)
}

// terminal reports whether err ends the subscription at once.
func terminal(err error) bool {
	return answered(err) || errors.Is(err, client.ErrClosed) || errors.Is(err, client.ErrNotSupported)
}

// terminated is the error of a terminated subscription.
func (s *Subscription) terminated(raw json.RawMessage) error {
	var p struct {
		Error *jsonrpc.Error `json:"error"`
	}
	rpc := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "terminated"}
	if json.Unmarshal(raw, &p) == nil && p.Error != nil {
		rpc = p.Error
	}
	return &client.Error{Op: s.op(), Kind: client.KindServer, Err: fmt.Errorf("%w: %w", ErrTerminated, rpc)}
}
