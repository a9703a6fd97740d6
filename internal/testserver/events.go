package testserver

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// The events extension (io.modelcontextprotocol/events, SEP-3415), served
// in the modern era when [Options.Events] is set: events/list,
// events/poll, events/stream (push), events/subscribe and
// events/unsubscribe (webhook, with the verification handshake and
// Standard Webhooks signatures). [Server.EmitEvent] raises an event.

// EventsExtension is the events extension's identifier.
const EventsExtension = "io.modelcontextprotocol/events"

// The events extension's methods and notifications.
const (
	methodEventsList        = "events/list"
	methodEventsPoll        = "events/poll"
	methodEventsStream      = "events/stream"
	methodEventsSubscribe   = "events/subscribe"
	methodEventsUnsubscribe = "events/unsubscribe"
	notifyEventsActive      = "notifications/events/active"
	notifyEventsEvent       = "notifications/events/event"
	notifyEventsHeartbeat   = "notifications/events/heartbeat"
	notifyEventsTerminated  = "notifications/events/terminated"
	notifyEventsListChanged = "notifications/events/list_changed"
)

// The error codes of the events extension.
const (
	eventsNotFound    = -32011
	eventsUnsupported = -32014
)

// EventsOptions configures the events extension of a test server.
type EventsOptions struct {
	// Types are the served event types; empty serves "ticks" (every
	// mode, replayable) and "cursorless" (push and webhook, no replay).
	Types []EventType
	// ListChanged declares listChanged in the extension's settings.
	ListChanged bool
	// NextPollMs is every poll result's nextPollMs; 0 means 1000,
	// negative omits the field.
	NextPollMs int64
	// MaxEvents caps the events of one poll result (hasMore says the
	// rest); 0 means 100.
	MaxEvents int
	// Retention is how many past events of a replayable type can be
	// replayed; an older cursor is answered truncated. 0 means 1000.
	Retention int
	// HeartbeatMs is the heartbeat interval of push streams; 0 means
	// 30000.
	HeartbeatMs int64
	// SilentStreams: the first this many events/stream requests go
	// silent after their confirmation (no heartbeat, no event), as a
	// peer that stopped answering.
	SilentStreams int
	// GrantMs is the lifetime a webhook subscription is granted; 0
	// means one hour. A ttlMs of null is granted no expiry.
	GrantMs int64
	// ListChangedOnPoll: the poll with this 1-based number (counted over
	// all types) carries notifications/events/list_changed on its
	// response stream before its result.
	ListChangedOnPoll int
}

// EventType is one served event type.
type EventType struct {
	Name     string
	Delivery []string // "poll", "push", "webhook"
	Replay   bool     // cursors are positions; false: always null
}

var defaultEventTypes = []EventType{
	{Name: "ticks", Delivery: []string{"poll", "push", "webhook"}, Replay: true},
	{Name: "cursorless", Delivery: []string{"push", "webhook"}},
}

// occurrence is one raised event.
type occurrence struct {
	seq  int64
	id   string
	at   time.Time
	data map[string]any
}

// eventsState is the extension's state; zero value ready.
type eventsState struct {
	mu      sync.Mutex
	logs    map[string][]occurrence  // by type; guarded by mu
	seq     int64                    // guarded by mu
	streams map[*eventStreamSub]bool // live push streams; guarded by mu
	hooks   map[string]*webhookSub   // by key; guarded by mu
	polls   int                      // polls served; guarded by mu
	opened  int                      // events/stream requests; guarded by mu
}

// eventStreamSub is one live events/stream.
type eventStreamSub struct {
	name string
	ch   chan occurrence // buffered; an event that does not fit is not sent live (a reconnect replays it)
	term chan struct{}   // closed (under ev.mu, once) to terminate the stream
}

// webhookSub is one webhook subscription.
type webhookSub struct {
	id, name, url, secret string
	args                  string
}

func (s *Server) eventsOn() *EventsOptions { return s.opts.Events }

func (s *Server) eventTypes() []EventType {
	if o := s.eventsOn(); o != nil && len(o.Types) > 0 {
		return o.Types
	}
	return defaultEventTypes
}

func (s *Server) eventType(name string) (EventType, bool) {
	for _, t := range s.eventTypes() {
		if t.Name == name {
			return t, true
		}
	}
	return EventType{}, false
}

// eventsCapability adds the extension to caps when it is on.
func (s *Server) eventsCapability(caps map[string]any) {
	o := s.eventsOn()
	if o == nil {
		return
	}
	ext, _ := caps["extensions"].(map[string]any)
	if ext == nil {
		ext = map[string]any{}
		caps["extensions"] = ext
	}
	settings := map[string]any{}
	if o.ListChanged {
		settings["listChanged"] = true
	}
	ext[EventsExtension] = settings
}

// eventMethods are the extension's methods (but events/stream, served
// by dispatchModern); init in features.go adds them to commonMethods.
var eventMethods = map[string]methodFunc{
	methodEventsList:        (*Server).eventsList,
	methodEventsPoll:        (*Server).eventsPoll,
	methodEventsSubscribe:   (*Server).eventsSubscribe,
	methodEventsUnsubscribe: (*Server).eventsUnsubscribe,
	MethodEmitEvent:         (*Server).emitEventMethod,
	MethodTerminateEvents:   (*Server).terminateEventsMethod,
}

// Test controls, served with the extension so that a test can drive a
// server it cannot call directly (a stdio child): MethodEmitEvent
// {name, data} runs [Server.EmitEvent] and answers {eventId};
// MethodTerminateEvents {name} runs [Server.TerminateEventStreams].
const (
	MethodEmitEvent       = "test/emit_event"
	MethodTerminateEvents = "test/terminate_events"
)

func (s *Server) emitEventMethod(c *call) (map[string]any, *jsonrpc.Error) {
	if err := s.eventsOff(c); err != nil {
		return nil, err
	}
	var name string
	var data map[string]any
	c.param("name", &name)
	c.param("data", &data)
	return map[string]any{"eventId": s.EmitEvent(name, data)}, nil
}

func (s *Server) terminateEventsMethod(c *call) (map[string]any, *jsonrpc.Error) {
	if err := s.eventsOff(c); err != nil {
		return nil, err
	}
	var name string
	c.param("name", &name)
	s.TerminateEventStreams(name)
	return map[string]any{}, nil
}

// eventsOff answers an events request the server does not serve: not
// declared, or the legacy era (the extension is modern only).
func (s *Server) eventsOff(c *call) *jsonrpc.Error {
	if s.eventsOn() == nil || !c.modern {
		return jsonrpc.ErrMethodNotFound.WithMessage("method not found: " + c.req.Method)
	}
	return nil
}

func (s *Server) eventsList(c *call) (map[string]any, *jsonrpc.Error) {
	if err := s.eventsOff(c); err != nil {
		return nil, err
	}
	var items []any
	for _, t := range s.eventTypes() {
		items = append(items, map[string]any{
			"name": t.Name, "description": "test events " + t.Name, "delivery": t.Delivery,
			"inputSchema":   map[string]any{"type": "object", "properties": map[string]any{"filter": map[string]any{"type": "string"}}},
			"payloadSchema": map[string]any{"type": "object"},
		})
	}
	return s.page(c, "events", items)
}

// subscriptionParams are the common params of poll, stream and subscribe.
type subscriptionParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Cursor    *string         `json:"cursor"`
	MaxEvents int             `json:"maxEvents"`
	Delivery  struct {
		Mode   string `json:"mode"`
		URL    string `json:"url"`
		Secret string `json:"secret"`
	} `json:"delivery"`
	TTLMs json.RawMessage `json:"ttlMs"`
}

// target decodes the params and finds the event type, which must offer
// mode.
func (s *Server) target(c *call, mode string) (subscriptionParams, EventType, *jsonrpc.Error) {
	var p subscriptionParams
	if err := json.Unmarshal(c.req.Params, &p); err != nil || p.Name == "" {
		return p, EventType{}, jsonrpc.ErrInvalidParams.WithMessage("name is required")
	}
	t, ok := s.eventType(p.Name)
	if !ok {
		return p, t, &jsonrpc.Error{Code: eventsNotFound, Message: "NotFound", Data: json.RawMessage(`{"kind":"event"}`)}
	}
	if !slices.Contains(t.Delivery, mode) {
		return p, t, &jsonrpc.Error{Code: eventsUnsupported, Message: "Unsupported", Data: json.RawMessage(`{"feature":"delivery"}`)}
	}
	return p, t, nil
}

// EmitEvent raises an event of type name with data: it is logged for
// replay, sent on the live push streams of that type and POSTed to its
// webhook subscriptions (synchronously, each up to 3 attempts). It
// returns the event id.
func (s *Server) EmitEvent(name string, data map[string]any) string {
	ev := &s.ev
	ev.mu.Lock()
	ev.seq++
	o := occurrence{seq: ev.seq, id: "evt-" + strconv.FormatInt(ev.seq, 10), at: time.Now().UTC(), data: data}
	if ev.logs == nil {
		ev.logs = map[string][]occurrence{}
	}
	log := append(ev.logs[name], o)
	if keep := s.retention(); len(log) > keep {
		log = log[len(log)-keep:]
	}
	ev.logs[name] = log
	var hooks []*webhookSub
	for st := range ev.streams {
		if st.name == name {
			select {
			case st.ch <- o:
			default:
			}
		}
	}
	for _, h := range ev.hooks {
		if h.name == name {
			hooks = append(hooks, h)
		}
	}
	ev.mu.Unlock()
	t, _ := s.eventType(name)
	for _, h := range hooks {
		body, _ := json.Marshal(s.occurrenceJSON(t, name, o))
		s.deliverWebhook(h, o.id, body)
	}
	return o.id
}

func (s *Server) retention() int {
	if o := s.eventsOn(); o != nil && o.Retention > 0 {
		return o.Retention
	}
	return 1000
}

// cursorOf is the cursor after o for type t (nil when t has no replay).
func cursorOf(t EventType, seq int64) any {
	if !t.Replay {
		return nil
	}
	return "c-" + strconv.FormatInt(seq, 10)
}

func (s *Server) occurrenceJSON(t EventType, name string, o occurrence) map[string]any {
	data := o.data
	if data == nil {
		data = map[string]any{}
	}
	return map[string]any{"eventId": o.id, "name": name, "timestamp": o.at.Format(time.RFC3339Nano), "data": data, "cursor": cursorOf(t, o.seq)}
}

// since returns the events of name after cursor (nil: none; "start from
// now"), whether the cursor was older than the retained log, and the
// head position.
func (s *Server) since(name string, cursor *string) (out []occurrence, truncated bool, head int64) {
	ev := &s.ev
	ev.mu.Lock()
	defer ev.mu.Unlock()
	log := ev.logs[name]
	head = ev.seq
	if cursor == nil {
		return nil, false, head
	}
	pos, err := strconv.ParseInt(strings.TrimPrefix(*cursor, "c-"), 10, 64)
	if err != nil || !strings.HasPrefix(*cursor, "c-") {
		return nil, true, head
	}
	if len(log) > 0 && pos < log[0].seq-1 {
		truncated = true
	}
	for _, o := range log {
		if o.seq > pos {
			out = append(out, o)
		}
	}
	return out, truncated, head
}

func (s *Server) eventsPoll(c *call) (map[string]any, *jsonrpc.Error) {
	if err := s.eventsOff(c); err != nil {
		return nil, err
	}
	p, t, err := s.target(c, "poll")
	if err != nil {
		return nil, err
	}
	o := s.eventsOn()
	s.ev.mu.Lock()
	s.ev.polls++
	n := s.ev.polls
	s.ev.mu.Unlock()
	if o.ListChangedOnPoll == n {
		c.notify(notifyEventsListChanged, map[string]any{})
	}
	evs, truncated, head := s.since(p.Name, p.Cursor)
	max := o.MaxEvents
	if max <= 0 {
		max = 100
	}
	if p.MaxEvents > 0 && p.MaxEvents < max {
		max = p.MaxEvents
	}
	hasMore := len(evs) > max
	if hasMore {
		evs = evs[:max]
	}
	pos := head
	if hasMore {
		pos = evs[len(evs)-1].seq
	}
	items := []any{}
	for _, e := range evs {
		m := s.occurrenceJSON(t, p.Name, e)
		delete(m, "cursor") // poll carries the cursor at the response level
		items = append(items, m)
	}
	res := map[string]any{"events": items, "cursor": cursorOf(t, pos), "truncated": truncated, "hasMore": hasMore}
	switch {
	case o.NextPollMs == 0:
		res["nextPollMs"] = 1000
	case o.NextPollMs > 0:
		res["nextPollMs"] = o.NextPollMs
	}
	return res, nil
}

// eventsStream serves events/stream: confirm, replay from the cursor,
// then deliver live events and heartbeats until the client ends the
// request or the server closes.
func (s *Server) eventsStream(c *call) reply {
	if err := s.eventsOff(c); err != nil {
		return errReply(err)
	}
	p, t, rerr := s.target(c, "push")
	if rerr != nil {
		return errReply(rerr)
	}
	o := s.eventsOn()
	st := &eventStreamSub{name: p.Name, ch: make(chan occurrence, 256), term: make(chan struct{})}
	s.ev.mu.Lock()
	if s.ev.streams == nil {
		s.ev.streams = map[*eventStreamSub]bool{}
	}
	s.ev.streams[st] = true
	s.ev.opened++
	silent := s.ev.opened <= o.SilentStreams
	s.ev.mu.Unlock()
	defer func() {
		s.ev.mu.Lock()
		delete(s.ev.streams, st)
		s.ev.mu.Unlock()
	}()
	send := func(method string, params map[string]any) {
		params["_meta"] = map[string]any{protocol.MetaSubscriptionID: c.req.ID}
		c.notify(method, params)
	}
	evs, truncated, head := s.since(p.Name, p.Cursor)
	pos := head
	if len(evs) > 0 {
		pos = evs[0].seq - 1
	}
	send(notifyEventsActive, map[string]any{"cursor": cursorOf(t, pos), "truncated": truncated})
	for _, e := range evs {
		send(notifyEventsEvent, s.occurrenceJSON(t, p.Name, e))
		pos = e.seq
	}
	beat := time.Duration(o.HeartbeatMs) * time.Millisecond
	if beat <= 0 {
		beat = 30 * time.Second
	}
	tick := time.NewTicker(beat)
	defer tick.Stop()
	if silent {
		tick.Stop()
	}
	for {
		select {
		case e := <-st.ch:
			if !silent && e.seq > pos {
				send(notifyEventsEvent, s.occurrenceJSON(t, p.Name, e))
				pos = e.seq
			}
		case <-tick.C:
			s.ev.mu.Lock()
			if h := s.ev.seq; h > pos {
				pos = h // nothing of this type up to the head
			}
			s.ev.mu.Unlock()
			send(notifyEventsHeartbeat, map[string]any{"cursor": cursorOf(t, pos)})
		case <-st.term:
			send(notifyEventsTerminated, map[string]any{"error": map[string]any{"code": -32012, "message": "Forbidden", "data": map[string]any{"reason": "access revoked"}}})
			res := map[string]any{"_meta": map[string]any{protocol.MetaSubscriptionID: c.req.ID}}
			return okReply(s.decorateModern(c, c.req.Method, res))
		case <-c.ctx.Done():
			return reply{silent: true}
		case <-s.done:
			return reply{silent: true}
		}
	}
}

// TerminateEventStreams ends every subscription to type name as a
// revoked authorization does: notifications/events/terminated (Forbidden)
// on its push streams, a terminated envelope to its webhooks.
func (s *Server) TerminateEventStreams(name string) {
	s.ev.mu.Lock()
	for st := range s.ev.streams {
		if st.name == name {
			delete(s.ev.streams, st)
			close(st.term)
		}
	}
	s.ev.mu.Unlock()
	s.broadcastEventsTerminated(name)
}

func (s *Server) eventsSubscribe(c *call) (map[string]any, *jsonrpc.Error) {
	if err := s.eventsOff(c); err != nil {
		return nil, err
	}
	p, t, err := s.target(c, "webhook")
	if err != nil {
		return nil, err
	}
	if p.Delivery.URL == "" || !strings.HasPrefix(p.Delivery.Secret, "whsec_") {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("delivery.url and a whsec_ delivery.secret are required")
	}
	if raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(p.Delivery.Secret, "whsec_")); err != nil || len(raw) < 24 || len(raw) > 64 {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("delivery.secret must be whsec_ and base64 of 24 to 64 bytes")
	}
	args := canonicalArgs(p.Arguments)
	key := p.Delivery.URL + "\x00" + p.Name + "\x00" + args
	sum := sha256.Sum256([]byte(key))
	h := &webhookSub{id: "sub_" + base64.RawURLEncoding.EncodeToString(sum[:9]), name: p.Name, url: p.Delivery.URL, secret: p.Delivery.Secret, args: args}
	s.ev.mu.Lock()
	old := s.ev.hooks[key]
	s.ev.mu.Unlock()
	if old == nil || old.url != h.url {
		// A new (principal, url): verify the endpoint's intent first.
		if err := s.verifyWebhook(h); err != nil {
			return nil, &jsonrpc.Error{Code: -32015, Message: "CallbackEndpointError", Data: json.RawMessage(`{"reason":"challenge_failed"}`)}
		}
	}
	s.ev.mu.Lock()
	if s.ev.hooks == nil {
		s.ev.hooks = map[string]*webhookSub{}
	}
	s.ev.hooks[key] = h
	head := s.ev.seq
	s.ev.mu.Unlock()
	res := map[string]any{"id": h.id, "cursor": cursorOf(t, head), "truncated": false}
	grant := time.Hour
	if o := s.eventsOn(); o.GrantMs > 0 {
		grant = time.Duration(o.GrantMs) * time.Millisecond
	}
	if string(p.TTLMs) == "null" {
		res["refreshBefore"] = nil
	} else {
		res["refreshBefore"] = time.Now().Add(grant).UTC().Format(time.RFC3339Nano)
	}
	return res, nil
}

func (s *Server) eventsUnsubscribe(c *call) (map[string]any, *jsonrpc.Error) {
	if err := s.eventsOff(c); err != nil {
		return nil, err
	}
	p, _, err := s.target(c, "webhook")
	if err != nil {
		return nil, err
	}
	key := p.Delivery.URL + "\x00" + p.Name + "\x00" + canonicalArgs(p.Arguments)
	s.ev.mu.Lock()
	delete(s.ev.hooks, key)
	s.ev.mu.Unlock()
	return map[string]any{}, nil
}

// WebhookSubscriptions returns how many webhook subscriptions are live.
func (s *Server) WebhookSubscriptions() int {
	s.ev.mu.Lock()
	defer s.ev.mu.Unlock()
	return len(s.ev.hooks)
}

// canonicalArgs is arguments re-encoded with sorted keys ("{}" if none).
func canonicalArgs(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return "{}"
	}
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	return string(b)
}

// verifyWebhook runs the verification handshake: a signed verification
// envelope whose challenge the endpoint must echo.
func (s *Server) verifyWebhook(h *webhookSub) error {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	challenge := base64.RawURLEncoding.EncodeToString(nonce)
	body, _ := json.Marshal(map[string]any{"type": "verification", "challenge": challenge})
	resp, err := s.postWebhook(h, "msg_verification_"+challenge[:8], body)
	if err != nil {
		return err
	}
	var got struct {
		Challenge string `json:"challenge"`
	}
	if resp.status/100 != 2 || json.Unmarshal(resp.body, &got) != nil || !hmac.Equal([]byte(got.Challenge), []byte(challenge)) {
		return fmt.Errorf("challenge not echoed (HTTP %d)", resp.status)
	}
	return nil
}

// broadcastEventsTerminated POSTs a terminated envelope to the webhook
// subscriptions of name and ends them.
func (s *Server) broadcastEventsTerminated(name string) {
	s.ev.mu.Lock()
	var hooks []*webhookSub
	for k, h := range s.ev.hooks {
		if h.name == name {
			hooks = append(hooks, h)
			delete(s.ev.hooks, k)
		}
	}
	s.ev.mu.Unlock()
	for _, h := range hooks {
		body, _ := json.Marshal(map[string]any{"type": "terminated", "error": map[string]any{"code": -32012, "message": "Forbidden", "data": map[string]any{"reason": "access revoked"}}})
		s.deliverWebhook(h, "msg_terminated_"+h.id, body)
	}
}

type webhookResponse struct {
	status int
	body   []byte
}

// deliverWebhook POSTs body, retrying a non-2xx answer (but 410 and 413)
// up to 3 attempts.
func (s *Server) deliverWebhook(h *webhookSub, id string, body []byte) {
	for attempt := range 3 {
		resp, err := s.postWebhook(h, id, body)
		if err == nil && (resp.status/100 == 2 || resp.status == http.StatusGone || resp.status == http.StatusRequestEntityTooLarge) {
			return
		}
		time.Sleep(time.Duration(attempt+1) * 50 * time.Millisecond)
	}
}

// postWebhook makes one signed delivery (Standard Webhooks).
func (s *Server) postWebhook(h *webhookSub, id string, body []byte) (webhookResponse, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(h.secret, "whsec_"))
	if err != nil {
		return webhookResponse{}, err
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	ctx, cancel := context.WithTimeout(s.base, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return webhookResponse{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	req.Header.Set("X-MCP-Subscription-Id", h.id)
	// No redirects (the extension forbids following them) and no idle
	// connections left behind (each delivery is its own).
	client := &http.Client{
		Transport:     &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return webhookResponse{}, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(http.MaxBytesReader(nil, resp.Body, 64<<10))
	return webhookResponse{status: resp.StatusCode, body: buf.Bytes()}, nil
}
