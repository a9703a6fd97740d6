package client

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/protocol"
)

// TestSubscriptionOverflow pins the overflow policy: when the buffer is
// full the oldest events are dropped, and a resync marker counting them
// is queued ahead of the newest event; a marker that is dropped in turn
// passes its count on to the next one, and a marker the consumer read
// ends the count.
func TestSubscriptionOverflow(t *testing.T) {
	c := &Client{cfg: newConfig(nil)}
	s := &Subscription{c: c, events: make(chan Event, 3), done: make(chan struct{})}
	send := func(uris ...string) {
		for _, u := range uris {
			s.send(Event{Method: protocol.NotificationResourcesUpdated, URI: u})
		}
	}
	drain := func() []Event {
		var got []Event
		for len(s.events) > 0 {
			got = append(got, <-s.events)
		}
		return got
	}
	upd := func(u string) Event { return Event{Method: protocol.NotificationResourcesUpdated, URI: u} }
	// Buffer [a b c] is full when d arrives: a and b are dropped, a resync
	// marker counting them and d are queued behind c.
	send("a", "b", "c", "d")
	want := []Event{upd("c"), {Resync: true, Dropped: 2}, upd("d")}
	if diff := cmp.Diff(want, drain()); diff != "" {
		t.Errorf("events after overflow (-want +got):\n%s", diff)
	}
	// [e f g] full, h drops e and f: [g R2 h]; i drops g and the marker,
	// whose count the new one carries: [h R3 i].
	send("e", "f", "g", "h", "i")
	want = []Event{upd("h"), {Resync: true, Dropped: 3}, upd("i")}
	if diff := cmp.Diff(want, drain()); diff != "" {
		t.Errorf("events after a second overflow (-want +got):\n%s", diff)
	}
	// The marker read, the count starts again.
	send("j", "k", "l", "m")
	want = []Event{upd("l"), {Resync: true, Dropped: 2}, upd("m")}
	if diff := cmp.Diff(want, drain()); diff != "" {
		t.Errorf("events after a third overflow (-want +got):\n%s", diff)
	}
	s.finish(nil)
	s.send(Event{Method: protocol.NotificationToolsListChanged}) // after the end: ignored, no panic
	if _, ok := <-s.events; ok {
		t.Error("events open after finish")
	}
}

func TestSubscribeOptionsIntersect(t *testing.T) {
	want := SubscribeOptions{ToolsListChanged: true, PromptsListChanged: true, Resources: []string{"a", "b"}}
	ack := protocol.SubscriptionFilter{ToolsListChanged: true, ResourcesListChanged: true, ResourceSubscriptions: []string{"b", "c"}}
	got := want.intersect(ack)
	if diff := cmp.Diff(SubscribeOptions{ToolsListChanged: true, Resources: []string{"b"}}, got); diff != "" {
		t.Errorf("intersect (-want +got):\n%s", diff)
	}
}

func TestEventOfAndWants(t *testing.T) {
	o := SubscribeOptions{Resources: []string{"file:///dir/"}}
	if !o.wants(Event{Method: protocol.NotificationResourcesUpdated, URI: "file:///dir/a.txt"}) {
		t.Error("sub-resource update not wanted")
	}
	if o.wants(Event{Method: protocol.NotificationResourcesUpdated, URI: "file:///other"}) || o.wants(Event{Method: protocol.NotificationToolsListChanged}) {
		t.Error("unrequested event wanted")
	}
}

// TestWantsSubResources: an update is wanted for a subscribed URI and
// the resources under it, not for a URI that merely starts with it.
func TestWantsSubResources(t *testing.T) {
	o := SubscribeOptions{Resources: []string{"file:///dir", "db://t?"}}
	for uri, want := range map[string]bool{
		"file:///dir": true, "file:///dir/a.txt": true, "file:///dir?v=2": true, "file:///dir#s": true,
		"file:///dirt": false, "file:///di": false, "file:///dir.bak": false,
		"db://t?row=1": true, "db://t": false,
	} {
		if got := o.wants(Event{Method: protocol.NotificationResourcesUpdated, URI: uri}); got != want {
			t.Errorf("wants(update of %q) = %v, want %v", uri, got, want)
		}
	}
}
