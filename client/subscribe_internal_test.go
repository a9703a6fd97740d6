package client

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/protocol"
)

// TestSubscriptionOverflow pins the overflow policy: when the buffer is
// full the oldest events are dropped, counted, and a resync marker is
// queued ahead of the newest event.
func TestSubscriptionOverflow(t *testing.T) {
	c := &Client{cfg: newConfig(nil)}
	s := &Subscription{c: c, events: make(chan Event, 3), done: make(chan struct{})}
	for _, u := range []string{"a", "b", "c", "d"} {
		s.send(Event{Method: protocol.NotificationResourcesUpdated, URI: u})
	}
	// Buffer [a b c] is full when d arrives: a and b are dropped, a resync
	// marker and d are queued behind c.
	var got []Event
	for len(s.events) > 0 {
		got = append(got, <-s.events)
	}
	want := []Event{{Method: protocol.NotificationResourcesUpdated, URI: "c"}, {Resync: true}, {Method: protocol.NotificationResourcesUpdated, URI: "d"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events after overflow (-want +got):\n%s", diff)
	}
	if got := s.Dropped(); got != 2 {
		t.Errorf("Dropped() = %d, want 2", got)
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
