package client

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/internal/route"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// SubscribeOptions says which change notifications a [Subscription]
// delivers. The zero value subscribes to nothing.
type SubscribeOptions struct {
	// ToolsListChanged, PromptsListChanged and ResourcesListChanged ask
	// for the list_changed notifications of tools, prompts and resources.
	ToolsListChanged     bool
	PromptsListChanged   bool
	ResourcesListChanged bool
	// Resources lists resource URIs whose updates are wanted
	// (notifications/resources/updated; the URI of an update may be a
	// sub-resource of a subscribed one: under it after a "/", "?" or "#").
	Resources []string
	// Buffer is how many events the subscription holds for its consumer
	// before it drops the oldest (see [Subscription]'s Overflow); zero or
	// negative selects the default, 64. It is not part of what the server
	// is asked for, and [Subscription.Acknowledged] leaves it zero.
	Buffer int
}

// defaultEventBuffer is a Subscription's buffer when
// SubscribeOptions.Buffer is not set.
const defaultEventBuffer = 64

func (o SubscribeOptions) filter() protocol.SubscriptionFilter {
	return protocol.SubscriptionFilter{
		ToolsListChanged:      o.ToolsListChanged,
		PromptsListChanged:    o.PromptsListChanged,
		ResourcesListChanged:  o.ResourcesListChanged,
		ResourceSubscriptions: slices.Clone(o.Resources),
	}
}

// intersect returns the part of o that ack also has.
func (o SubscribeOptions) intersect(ack protocol.SubscriptionFilter) SubscribeOptions {
	r := SubscribeOptions{
		ToolsListChanged:     o.ToolsListChanged && ack.ToolsListChanged,
		PromptsListChanged:   o.PromptsListChanged && ack.PromptsListChanged,
		ResourcesListChanged: o.ResourcesListChanged && ack.ResourcesListChanged,
	}
	for _, u := range o.Resources {
		if slices.Contains(ack.ResourceSubscriptions, u) {
			r.Resources = append(r.Resources, u)
		}
	}
	return r
}

// Event is one change notification.
type Event struct {
	// Method is the server's notification: one of
	// protocol.NotificationToolsListChanged, NotificationPromptsListChanged,
	// NotificationResourcesListChanged (resources or templates) and
	// NotificationResourcesUpdated (the resource URI changed); "" for a
	// resync.
	Method string
	// URI is the updated resource (NotificationResourcesUpdated only).
	URI string
	// Resync reports that the subscription was re-established after its
	// stream dropped (or events were dropped on overflow); changes may have
	// been missed, so state derived from the server should be refetched.
	Resync bool
	// Dropped is, on the resync event queued after an overflow, how many
	// change notifications were dropped since the previous such event
	// (when that one was dropped too, its count is carried into this
	// one); 0 on every other event.
	Dropped int64
}

const (
	// unsubscribeTimeout bounds the legacy resources/unsubscribe calls of
	// Subscription.Close.
	unsubscribeTimeout = 5 * time.Second
	// ackTimeout bounds the wait for a listen acknowledgement, so a
	// server that never acknowledges cannot stall a (re-)listen forever.
	ackTimeout = 30 * time.Second
)

// Subscription delivers change notifications: in the modern era over a
// subscriptions/listen stream, re-established with backoff when it drops;
// in the legacy era from the session's notifications (after
// resources/subscribe for each URI). All methods are safe for concurrent
// use.
//
// # Overflow
//
// Events are buffered (SubscribeOptions.Buffer, default 64). When the
// buffer is full the oldest buffered events are dropped to make room
// (change notifications are signals: the newest matters most), and an
// Event with Resync set is queued so the consumer knows to refetch; its
// Dropped field counts the notifications lost.
//
// # End
//
// The subscription ends with [Subscription.Close], [Client.Close], the
// end of Subscribe's context, or a stream that could not be
// re-established: Events is then closed (what was buffered is still
// received first), and [Subscription.Err] says why.
type Subscription struct {
	c      *Client
	want   SubscribeOptions
	legacy bool

	events  chan Event    // closed when the subscription ends
	stopCh  chan struct{} // closed by stop
	stopped sync.Once
	ctx     context.Context    // for re-listen calls; detached from Subscribe's ctx, cancelled by stop
	cancel  context.CancelFunc // cancels ctx
	done    chan struct{}      // closed when the subscription ended (after events)
	// unwatch stops watching Subscribe's ctx (see Client.Subscribe);
	// written before the subscription's goroutine starts.
	unwatch func() bool

	mu  sync.Mutex       // guards ack and err
	ack SubscribeOptions // guarded by mu
	err error            // guarded by mu; set before events closes

	sendMu    sync.Mutex // serializes senders and the final close of events
	eventsEnd bool       // guarded by sendMu
	pending   int64      // guarded by sendMu: notifications dropped and not yet reported

	// Legacy only, guarded by c.subsMu: refused lists the URIs of want
	// whose resources/subscribe the server refused; inherited lists URIs
	// that a closing subscription left subscribed on the server because
	// s wanted them before s's own resources/subscribe settled, so that s
	// unsubscribes them if that fails (see handOff).
	refused   []string
	inherited []string
}

// Events returns the channel of events. It is closed when the
// subscription ends (Close, Client.Close, the end of Subscribe's context,
// or a stream that could not be re-established; see [Subscription.Err]).
func (s *Subscription) Events() <-chan Event { return s.events }

// Acknowledged returns the part of the request the server honours: for the
// modern era, the server's acknowledgement intersected with the request;
// for the legacy era, the list_changed kinds the server advertises and the
// URIs resources/subscribe accepted.
func (s *Subscription) Acknowledged() SubscribeOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.ack
	a.Resources = slices.Clone(a.Resources)
	return a
}

// Err returns why the subscription ended: nil while it runs and after
// Close (or the end of Subscribe's context), otherwise the error that
// ended it. Once Events is closed, Err has its final value.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the subscription and waits until it has: the listen stream is
// closed (modern) or every subscribed URI unsubscribed (legacy, bounded
// by a timeout). It is idempotent.
func (s *Subscription) Close() error {
	s.stop()
	<-s.done
	return nil
}

func (s *Subscription) stop() {
	s.stopped.Do(func() {
		close(s.stopCh)
		s.cancel()
	})
}

// send queues ev without blocking, dropping the oldest event on overflow.
func (s *Subscription) send(ev Event) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if s.eventsEnd {
		return
	}
	select {
	case s.events <- ev:
		return
	default:
	}
	// Full: drop the oldest two, to make room for a resync marker too.
	for range 2 {
		select {
		case old := <-s.events:
			s.pending += lost(old)
		default:
		}
	}
	s.c.cfg.logger.Warn("conduit: subscription buffer full; dropped the oldest events", "dropped", s.pending)
	select {
	case s.events <- Event{Resync: true, Dropped: s.pending}:
		s.pending = 0
	default:
	}
	select {
	case s.events <- ev:
	default:
		s.pending += lost(ev)
	}
}

// lost is what dropping ev loses: one notification, or the count a
// resync marker carried (the next marker reports it instead).
func lost(ev Event) int64 {
	if ev.Method == "" {
		return ev.Dropped
	}
	return 1
}

// finish records err and closes the events channel and done.
func (s *Subscription) finish(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	s.sendMu.Lock()
	if !s.eventsEnd {
		s.eventsEnd = true
		close(s.events)
	}
	s.sendMu.Unlock()
	s.c.subsMu.Lock()
	delete(s.c.subs, s)
	s.c.subsMu.Unlock()
	if s.unwatch != nil {
		s.unwatch()
	}
	close(s.done)
}

// eventOf maps a change notification to an event, or false.
func eventOf(n *jsonrpc.Request) (Event, bool) {
	switch route.Of(n.Method) {
	case route.ToolsChanged:
		return Event{Method: protocol.NotificationToolsListChanged}, true
	case route.PromptsChanged:
		return Event{Method: protocol.NotificationPromptsListChanged}, true
	case route.ResourcesChanged:
		return Event{Method: protocol.NotificationResourcesListChanged}, true
	case route.ResourceUpdated:
		var p protocol.ResourceUpdatedParams
		if json.Unmarshal(n.Params, &p) != nil || p.URI == "" {
			return Event{}, false
		}
		return Event{Method: protocol.NotificationResourcesUpdated, URI: p.URI}, true
	}
	return Event{}, false
}

// wants reports whether ev is covered by o.
func (o SubscribeOptions) wants(ev Event) bool {
	switch ev.Method {
	case protocol.NotificationToolsListChanged:
		return o.ToolsListChanged
	case protocol.NotificationPromptsListChanged:
		return o.PromptsListChanged
	case protocol.NotificationResourcesListChanged:
		return o.ResourcesListChanged
	case protocol.NotificationResourcesUpdated:
		for _, u := range o.Resources {
			if under(ev.URI, u) {
				return true
			}
		}
	}
	return false
}

// under reports whether uri is the resource sub or one under it: sub
// followed by a path, query or fragment (file:///dir/a under file:///dir,
// not file:///dirt); every URI is under "".
func under(uri, sub string) bool {
	if !strings.HasPrefix(uri, sub) {
		return false
	}
	if len(uri) == len(sub) || sub == "" || strings.ContainsRune("/?#", rune(sub[len(sub)-1])) {
		return true
	}
	return strings.ContainsRune("/?#", rune(uri[len(sub)]))
}

// deliverNotification feeds a legacy subscription; called with
// c.subsMu held, from the session's dispatcher goroutine. It never blocks.
func (s *Subscription) deliverNotification(n *jsonrpc.Request) {
	ev, ok := eventOf(n)
	if !ok {
		return
	}
	s.mu.Lock()
	want := s.ack.wants(ev)
	s.mu.Unlock()
	if want {
		s.send(ev)
	}
}

// Subscribe starts delivering the change notifications opts asks for.
//
// Modern era: a subscriptions/listen stream; Subscribe returns once the
// server acknowledged it, and [Subscription.Acknowledged] tells what it
// honours. A stream that drops is re-established with exponential backoff
// (an Event with Resync set marks the gap), which resets only after a stream that
// lived 10 seconds past its acknowledgement, so a server whose streams
// keep dying is not hammered; after 10 attempts in a row that are not
// acknowledged the subscription ends with the last error. Legacy era: resources/subscribe
// for each URI (a URI the server refuses is left out of Acknowledged and
// logged) and the session's list_changed notifications.
//
// The subscription lives until [Subscription.Close], [Client.Close], or
// the end of ctx, which ends it as Close does (Events is closed, Err
// returns nil); pass a context that outlives the subscription (for
// instance context.WithoutCancel(ctx)) to keep it past the caller.
//
// Errors: a [*Error] of kind [KindUnsupported] under [CapabilityOptions.Strict]; the
// listen request's errors; [ErrClosed]; ctx.Err().
func (c *Client) Subscribe(ctx context.Context, opts SubscribeOptions) (*Subscription, error) {
	return c.subscribe(ctx, ctx, opts)
}

// subscribe is Subscribe for a subscription that lives as long as ctx,
// whose opening (the listen and its acknowledgement) is bounded by wait.
func (c *Client) subscribe(ctx, wait context.Context, opts SubscribeOptions) (*Subscription, error) {
	opts.Resources = slices.Clone(opts.Resources)
	caps := c.ServerCapabilities()
	if c.cfg.capOpts.Strict {
		if len(opts.Resources) > 0 && (caps.Resources == nil || !caps.Resources.Subscribe) {
			return nil, capabilityError("subscribe", "resources.subscribe")
		}
		if opts.ToolsListChanged && (caps.Tools == nil || !caps.Tools.ListChanged) {
			return nil, capabilityError("subscribe", "tools.listChanged")
		}
		if opts.PromptsListChanged && (caps.Prompts == nil || !caps.Prompts.ListChanged) {
			return nil, capabilityError("subscribe", "prompts.listChanged")
		}
		if opts.ResourcesListChanged && (caps.Resources == nil || !caps.Resources.ListChanged) {
			return nil, capabilityError("subscribe", "resources.listChanged")
		}
	}
	select {
	case <-c.closed:
		return nil, c.fail("subscribe", ErrClosed)
	default:
	}
	buffer := opts.Buffer
	if buffer <= 0 {
		buffer = defaultEventBuffer
	}
	s := &Subscription{
		c:      c,
		want:   opts,
		legacy: !c.isModern(),
		events: make(chan Event, buffer),
		stopCh: make(chan struct{}),
		done:   make(chan struct{}),
	}
	// The subscription outlives the Subscribe call: its context is
	// detached from ctx and cancelled by stop.
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	// Cancelling ctx ends the subscription. The watch is armed before the
	// subscription's goroutine starts, so that finish always sees it.
	s.unwatch = context.AfterFunc(ctx, s.stop)
	if s.legacy {
		if err := c.subscribeLegacy(ctx, s, caps); err != nil {
			s.unwatch()
			s.cancel()
			return nil, c.fail("subscribe", err)
		}
		return s, nil
	}
	stream, ack, err := c.listen(wait, opts)
	if err != nil {
		s.unwatch()
		s.cancel()
		return nil, c.fail(protocol.MethodSubscriptionsListen, err)
	}
	s.ack = opts.intersect(ack)
	if missing := ack.Missing(opts.filter()); !missing.IsEmpty() {
		c.cfg.logger.Info("conduit: server does not honour part of the subscription", "missing", missing)
	}
	if !c.register(s) {
		s.unwatch()
		stream.Close()
		s.cancel()
		return nil, c.fail("subscribe", ErrClosed)
	}
	go func() {
		defer c.wg.Done()
		s.run(stream)
	}()
	return s, nil
}

// listen opens a listen stream and waits for its acknowledgement.
func (c *Client) listen(ctx context.Context, opts SubscribeOptions) (*engine.Stream, protocol.SubscriptionFilter, error) {
	// The engine listens again when the stream drops, paced
	// (internal/engine/relisten.go); a new acknowledgement then arrives
	// on the same stream (see pump).
	stream, err := c.sess.ListenDurable(ctx, &protocol.ListenParams{Notifications: opts.filter()})
	if err != nil {
		return nil, protocol.SubscriptionFilter{}, err
	}
	timer := time.NewTimer(ackTimeout)
	defer timer.Stop()
	select {
	case <-timer.C:
		stream.Close()
		return nil, protocol.SubscriptionFilter{}, &engine.ProtocolError{Method: protocol.MethodSubscriptionsListen,
			Reason: "no acknowledgement within " + ackTimeout.String(), Err: engine.ErrInvalidResponse}
	case n, ok := <-stream.Notifications():
		if !ok {
			err := stream.Err()
			if err == nil {
				err = errors.New("client: listen stream ended before its acknowledgement")
			}
			stream.Close()
			return nil, protocol.SubscriptionFilter{}, err
		}
		var ack protocol.SubscriptionsAcknowledgedParams
		if n.Method != protocol.NotificationSubscriptionsAcknowledged || json.Unmarshal(n.Params, &ack) != nil {
			stream.Close()
			return nil, protocol.SubscriptionFilter{}, &engine.ProtocolError{Method: protocol.MethodSubscriptionsListen,
				Reason: "first message is not a valid acknowledgement: " + n.Method, Err: engine.ErrInvalidResponse}
		}
		return stream, ack.Notifications, nil
	case <-ctx.Done():
		stream.Close()
		return nil, protocol.SubscriptionFilter{}, ctx.Err()
	}
}

// run pumps a modern subscription's stream until stop or its end: the
// engine re-listens below it when it drops and ends it only when that
// failed (or the server ended it gracefully, or the client closed).
func (s *Subscription) run(stream *engine.Stream) {
	err := s.pump(stream)
	stream.Close()
	if s.isStopped() {
		err = nil
	}
	s.finish(err)
}

func (s *Subscription) isStopped() bool {
	select {
	case <-s.stopCh:
		return true
	default:
		return false
	}
}

// pump delivers the stream's notifications until it ends (returning its
// error; nil for a graceful end by the server) or stop (nil).
func (s *Subscription) pump(stream *engine.Stream) error {
	for {
		select {
		case n, ok := <-stream.Notifications():
			if !ok {
				err := stream.Err()
				if err == nil {
					return nil
				}
				return err
			}
			s.c.streamNote(s.ctx, n, s.handle)
		case <-s.stopCh:
			return nil
		}
	}
}

// handle delivers one notification of the stream.
func (s *Subscription) handle(n *jsonrpc.Request) {
	if n.Method == protocol.NotificationSubscriptionsAcknowledged {
		// A new acknowledgement mid-stream: the engine listened again
		// after the stream dropped. Changes may have been missed.
		var ack protocol.SubscriptionsAcknowledgedParams
		if json.Unmarshal(n.Params, &ack) == nil {
			s.mu.Lock()
			s.ack = s.want.intersect(ack.Notifications)
			s.mu.Unlock()
		}
		s.send(Event{Resync: true})
		return
	}
	s.c.invalidate(n.Method, n.Params)
	if ev, ok := eventOf(n); ok {
		s.mu.Lock()
		want := s.want.wants(ev)
		s.mu.Unlock()
		if want {
			s.send(ev)
		}
	}
}

// register records s as live and counts its goroutine in c.wg, unless
// the client is closing. Doing both under subsMu orders them before
// Close's snapshot of the subscriptions and its wg.Wait.
func (c *Client) register(s *Subscription) bool {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	select {
	case <-c.closed:
		return false
	default:
	}
	if c.subs == nil {
		c.subs = make(map[*Subscription]struct{})
	}
	c.subs[s] = struct{}{}
	c.wg.Add(1)
	return true
}

// subscribeLegacy registers s for the session's notifications and sends
// resources/subscribe for each URI. s is registered first, so that a
// subscription closing meanwhile sees that s wants its URIs (see
// handOff).
func (c *Client) subscribeLegacy(ctx context.Context, s *Subscription, caps protocol.ServerCapabilities) error {
	ack := SubscribeOptions{
		ToolsListChanged:     s.want.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged,
		PromptsListChanged:   s.want.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged,
		ResourcesListChanged: s.want.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged,
	}
	s.ack = ack // before register: nothing else reads s yet
	if !c.register(s) {
		return ErrClosed
	}
	if ack.ToolsListChanged || ack.PromptsListChanged || ack.ResourcesListChanged {
		// A legacy HTTP server sends list changes on its GET stream,
		// which the session opens only once something consumes them.
		c.sess.WantServerMessages(ctx)
	}
	for _, u := range s.want.Resources {
		_, err := c.call(ctx, protocol.MethodResourcesSubscribe, &protocol.SubscribeParams{URI: u}, nil)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrClosed) {
				// The call may have run on the server: u is unsubscribed
				// too, with what s holds.
				acked, inherited := c.unregisterLegacy(s)
				c.unsubscribeLegacy(acked, appendNew(inherited, u))
				c.wg.Done()
				return err
			}
			c.cfg.logger.Warn("conduit: resources/subscribe refused", "uri", u, "err", err)
			c.subsMu.Lock()
			s.refused = append(s.refused, u)
			held := slices.Contains(s.inherited, u)
			s.inherited = slices.DeleteFunc(s.inherited, func(v string) bool { return v == u })
			c.subsMu.Unlock()
			if held {
				// A subscription closed leaving u subscribed for s,
				// which does not hold it after all.
				c.unsubscribeLegacy(nil, []string{u})
			}
			continue
		}
		c.sess.TrackSubscription(u, true)
		c.subsMu.Lock()
		s.mu.Lock()
		s.ack.Resources = append(s.ack.Resources, u)
		s.mu.Unlock()
		s.inherited = slices.DeleteFunc(s.inherited, func(v string) bool { return v == u })
		c.subsMu.Unlock()
	}
	go func() {
		defer c.wg.Done()
		<-s.stopCh
		// Unregister first so no notification is delivered after the
		// channel closes, then tell the server.
		acked, inherited := c.unregisterLegacy(s)
		c.unsubscribeLegacy(acked, inherited)
		s.finish(nil)
	}()
	return nil
}

// unregisterLegacy removes s from the live subscriptions and returns the
// URIs it holds on the server: those resources/subscribe accepted, and
// those inherited from a closed subscription (see handOff) whose
// resources/subscribe of s did not settle.
func (c *Client) unregisterLegacy(s *Subscription) (acked, inherited []string) {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	delete(c.subs, s)
	inherited = s.inherited
	s.inherited = nil
	return s.Acknowledged().Resources, inherited
}

// appendNew appends u to list unless it is there.
func appendNew(list []string, u string) []string {
	if slices.Contains(list, u) {
		return list
	}
	return append(list, u)
}

// handOff reports whether a live legacy subscription wants uri: it holds
// it (resources/subscribe accepted), or its resources/subscribe has not
// settled (see subscribeLegacy); a URI the server refused it is not
// wanted. When only unsettled subscriptions want uri, the server's
// subscription, which the caller leaves in place, is handed to them: the
// one whose resources/subscribe fails unsubscribes it (unless another
// still wants it), so a refused or cancelled subscribe never leaves the
// server subscribed with no live subscription.
func (c *Client) handOff(uri string) bool {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	var unsettled []*Subscription
	for s := range c.subs {
		if !s.legacy || !slices.Contains(s.want.Resources, uri) || slices.Contains(s.refused, uri) {
			continue
		}
		if slices.Contains(s.Acknowledged().Resources, uri) {
			return true
		}
		unsettled = append(unsettled, s)
	}
	for _, s := range unsettled {
		s.inherited = appendNew(s.inherited, uri)
	}
	return len(unsettled) > 0
}

// unsubscribeLegacy tells the server that a subscription no longer wants
// acked (URIs its resources/subscribe added, tracked for re-subscription
// by the session) and others (URIs the server may hold for it), having
// unregistered it. A legacy server keeps one subscription per URI, not a
// count: a URI another live subscription still wants is not unsubscribed
// (see handOff), and one that a subscription started wanting while
// resources/unsubscribe was in flight (its resources/subscribe may have
// reached the server first) is subscribed again.
func (c *Client) unsubscribeLegacy(acked, others []string) {
	for _, u := range acked {
		c.sess.TrackSubscription(u, false)
	}
	uris := acked
	for _, u := range others {
		uris = appendNew(uris, u)
	}
	if len(uris) == 0 {
		return
	}
	select {
	case <-c.closed:
		return // the session is going away with its subscriptions
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
	defer cancel()
	for _, u := range uris {
		if c.handOff(u) {
			continue
		}
		if _, err := c.call(ctx, protocol.MethodResourcesUnsubscribe, &protocol.UnsubscribeParams{URI: u}, nil); err != nil {
			c.cfg.logger.Debug("conduit: resources/unsubscribe failed", "uri", u, "err", err)
			continue
		}
		if c.handOff(u) {
			if _, err := c.call(ctx, protocol.MethodResourcesSubscribe, &protocol.SubscribeParams{URI: u}, nil); err != nil {
				c.cfg.logger.Warn("conduit: resources/subscribe after an unsubscribe refused", "uri", u, "err", err)
			}
		}
	}
}

// autoListen gives the handler's change listeners the same notifications
// in the modern era that legacy servers send unsolicited: when the handler
// implements ToolsChangedListener, PromptsChangedListener or
// ResourcesChangedListener, a subscription for those kinds is opened at
// connect time and its events are dispatched to the listeners, in order,
// from one goroutine, for the kinds whose listChanged the server
// declares. A server that refuses the listen (-32601 is final: it is not
// listened again) only costs a log line, and the wait for the listen's
// acknowledgement is bounded by Connect's context.
func (c *Client) autoListen(ctx context.Context) {
	// The field, not a copy: a copy would escape to the goroutine below
	// and cost every connect an allocation (c.listeners is set once).
	l := &c.listeners
	opts := SubscribeOptions{
		ToolsListChanged:     l.ToolsChanged != nil,
		PromptsListChanged:   l.PromptsChanged != nil,
		ResourcesListChanged: l.ResourcesChanged != nil,
	}
	// Only the kinds whose listChanged the server declares: a server
	// that declares none sends no change notification, and may not
	// serve subscriptions/listen at all.
	caps := c.ServerCapabilities()
	opts.ToolsListChanged = opts.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
	opts.PromptsListChanged = opts.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
	opts.ResourcesListChanged = opts.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged
	if !c.isModern() || (!opts.ToolsListChanged && !opts.PromptsListChanged && !opts.ResourcesListChanged) {
		return
	}
	// The subscription lives as long as the client, not Connect's ctx;
	// opening it (the listen and its acknowledgement) is bounded by
	// Connect's ctx.
	sub, err := c.subscribe(context.WithoutCancel(ctx), ctx, opts)
	if err != nil {
		c.cfg.logger.Warn("conduit: cannot listen for the handler's change listeners", "err", err)
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for ev := range sub.Events() {
			switch {
			case ev.Method == protocol.NotificationToolsListChanged:
				l.ToolsChanged.OnToolsChanged(sub.ctx)
			case ev.Method == protocol.NotificationPromptsListChanged:
				l.PromptsChanged.OnPromptsChanged(sub.ctx)
			case ev.Method == protocol.NotificationResourcesListChanged:
				l.ResourcesChanged.OnResourcesChanged(sub.ctx)
			case ev.Resync:
				// Changes may have been missed: tell every listener.
				if l.ToolsChanged != nil {
					l.ToolsChanged.OnToolsChanged(sub.ctx)
				}
				if l.PromptsChanged != nil {
					l.PromptsChanged.OnPromptsChanged(sub.ctx)
				}
				if l.ResourcesChanged != nil {
					l.ResourcesChanged.OnResourcesChanged(sub.ctx)
				}
			}
		}
	}()
}

// onRestored is the session's OnRestored: after a legacy re-negotiation
// the engine has re-sent the tracked resources/subscribe calls; every live
// legacy subscription gets an Event with Resync set (updates may have been missed
// meanwhile). It runs on the session's dispatcher goroutine and never
// blocks. Modern subscriptions are listen streams, which the subscription
// re-opens itself.
func (c *Client) onRestored(context.Context) {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	for s := range c.subs {
		if s.legacy {
			s.send(Event{Resync: true})
		}
	}
}
