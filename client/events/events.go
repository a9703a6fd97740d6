package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/conduitmcp/conduit/internal/textcut"
	"hash/maphash"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/client/internal/link"
)

// ExtensionID is the events extension's identifier.
const ExtensionID = "io.modelcontextprotocol/events"

// The extension's methods and notifications.
const (
	MethodList        = "events/list"
	MethodPoll        = "events/poll"
	MethodStream      = "events/stream"
	MethodSubscribe   = "events/subscribe"
	MethodUnsubscribe = "events/unsubscribe"

	NotificationEvent       = "notifications/events/event"
	NotificationActive      = "notifications/events/active"
	NotificationHeartbeat   = "notifications/events/heartbeat"
	NotificationError       = "notifications/events/error"
	NotificationTerminated  = "notifications/events/terminated"
	NotificationListChanged = "notifications/events/list_changed"
)

// Mode is a delivery mode.
type Mode string

// The delivery modes.
const (
	Poll    Mode = "poll"
	Push    Mode = "push"
	Webhook Mode = "webhook"
)

// ErrTerminated is matched by the error of a subscription the server
// terminated (notifications/events/terminated, a terminated webhook
// envelope).
var ErrTerminated = errors.New("events: subscription terminated by the server")

// Descriptor is one event type of events/list.
type Descriptor struct {
	Name          string          `json:"name"`
	Description   string          `json:"description,omitempty"`
	Delivery      []Mode          `json:"delivery"`
	InputSchema   json.RawMessage `json:"inputSchema,omitempty"`
	PayloadSchema json.RawMessage `json:"payloadSchema,omitempty"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// Options configures a [Client]. The zero value selects every default.
type Options struct {
	// PollFloor is the least wait between two polls that are not
	// draining a backlog, whatever nextPollMs says; zero or negative
	// selects 1 s.
	PollFloor time.Duration
	// PollInterval is the wait when a poll result has no nextPollMs;
	// zero or negative selects 30 s.
	PollInterval time.Duration
	// HeartbeatTimeout is how long a push stream may stay silent (no
	// event, no heartbeat) before it is treated as dead and reopened;
	// zero or negative selects 60 s.
	HeartbeatTimeout time.Duration
	// MaxBackoff caps the backoff between failed attempts (a stream
	// reopened, a poll or refresh retried); zero or negative selects
	// 30 s.
	MaxBackoff time.Duration
	// Buffer is how many events a subscription holds for its consumer;
	// zero or negative selects 64.
	Buffer int
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.PollFloor, time.Second)
	def(&o.PollInterval, 30*time.Second)
	def(&o.HeartbeatTimeout, 60*time.Second)
	def(&o.MaxBackoff, 30*time.Second)
	if o.Buffer <= 0 {
		o.Buffer = 64
	}
	return o
}

// Client is an events client over a [client.Client].
type Client struct {
	c    *client.Client
	opts Options // frozen by New

	mu    sync.Mutex
	descs []Descriptor // the last complete listing; guarded by mu
	fresh bool         // descs is current (no list_changed since); guarded by mu
}

// New returns an events client over c. It sends nothing: whether the
// server offers the extension is checked by each method.
func New(c *client.Client, opts Options) *Client {
	return &Client{c: c, opts: opts.withDefaults()}
}

// Supported reports whether the server declared the extension and the
// modern era was negotiated.
func (ec *Client) Supported() bool {
	_, ok := ec.c.ServerCapabilities().Extensions[ExtensionID]
	return ok && link.Modern(ec.c)
}

// ListChanged reports whether the server declared that it sends
// notifications/events/list_changed.
func (ec *Client) ListChanged() bool {
	raw := ec.c.ServerCapabilities().Extensions[ExtensionID]
	var s struct {
		ListChanged bool `json:"listChanged"`
	}
	return json.Unmarshal(raw, &s) == nil && s.ListChanged
}

// check returns the error of op when the extension cannot be used.
func (ec *Client) check(op string) error {
	if !link.Modern(ec.c) {
		return &client.Error{Op: op, Kind: client.KindUnsupported,
			Err: fmt.Errorf("the %s extension needs protocol 2026-07-28 (the legacy era was negotiated): %w", ExtensionID, client.ErrNotSupported)}
	}
	if _, ok := ec.c.ServerCapabilities().Extensions[ExtensionID]; !ok {
		return &client.Error{Op: op, Kind: client.KindUnsupported,
			Err: fmt.Errorf("server did not declare the %s extension: %w", ExtensionID, client.ErrNotSupported)}
	}
	return nil
}

// maxListPages bounds a listing, so a server that never ends its cursor
// chain cannot keep List busy forever.
const maxListPages = 100

// List yields the server's event types, walking events/list's pages. A
// failure is yielded once, as the last pair. It refreshes what
// [Client.Subscribe] knows of the types.
func (ec *Client) List(ctx context.Context) iter.Seq2[Descriptor, error] {
	return func(yield func(Descriptor, error) bool) {
		all, err := ec.list(ctx)
		if err != nil {
			yield(Descriptor{}, err)
			return
		}
		for _, d := range all {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// list fetches every page of events/list.
func (ec *Client) list(ctx context.Context) ([]Descriptor, error) {
	if err := ec.check(MethodList); err != nil {
		return nil, err
	}
	var all []Descriptor
	seen := map[uint64]bool{} // hashes of the cursors followed: long ones do not pile up
	var cursor string
	for range maxListPages {
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		var page struct {
			Events     []Descriptor `json:"events"`
			NextCursor string       `json:"nextCursor"`
		}
		if err := ec.c.Call(ctx, MethodList, params, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Events...)
		if page.NextCursor == "" {
			ec.mu.Lock()
			ec.descs, ec.fresh = slices.Clone(all), true
			ec.mu.Unlock()
			return all, nil
		}
		h := maphash.String(idSeed, page.NextCursor)
		if seen[h] {
			return nil, &client.Error{Op: MethodList, Kind: client.KindProtocol, Err: fmt.Errorf("repeated cursor %q", textcut.Cut(page.NextCursor, 100))}
		}
		seen[h] = true
		cursor = page.NextCursor
	}
	return nil, &client.Error{Op: MethodList, Kind: client.KindProtocol, Err: fmt.Errorf("more than %d pages", maxListPages)}
}

// descriptor returns the type name, listing again when the last listing
// is stale (or there is none).
func (ec *Client) descriptor(ctx context.Context, name string) (Descriptor, bool, error) {
	ec.mu.Lock()
	descs, fresh := ec.descs, ec.fresh
	ec.mu.Unlock()
	if !fresh {
		var err error
		if descs, err = ec.list(ctx); err != nil {
			return Descriptor{}, false, err
		}
	}
	for _, d := range descs {
		if d.Name == name {
			return d, true, nil
		}
	}
	return Descriptor{}, false, nil
}

// stale marks the listing out of date (notifications/events/list_changed).
func (ec *Client) stale() {
	ec.mu.Lock()
	ec.fresh = false
	ec.mu.Unlock()
}
