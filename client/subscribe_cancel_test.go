package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
)

// TestSubscribeContextEnds: cancelling the context given to Subscribe ends
// the subscription as Close does (Events closed, Err nil), in both eras,
// and no event arrives after that.
func TestSubscribeContextEnds(t *testing.T) {
	for _, tr := range []string{tPipe, tHTTP} {
		for _, era := range allEras {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p))
				ctx, cancel := context.WithCancel(testCtx(t))
				sub, err := f.c.Subscribe(ctx, client.SubscribeOptions{ToolsListChanged: true, Resources: []string{"file:///hello.txt"}})
				if err != nil {
					t.Fatalf("Subscribe: %v", err)
				}
				f.srv.NotifyToolsChanged()
				waitEvent(t, sub, client.Event{Method: protocol.NotificationToolsListChanged})
				cancel()
				// Events closes, with nothing in it: no event was sent
				// after the one read.
				timeout := time.After(10 * time.Second)
				for open := true; open; {
					select {
					case ev, ok := <-sub.Events():
						if open = ok; ok {
							t.Errorf("event %v after the subscription's context ended", ev)
						}
					case <-timeout:
						t.Fatal("the subscription did not end after its context was cancelled")
					}
				}
				f.srv.NotifyToolsChanged()
				if ev, ok := <-sub.Events(); ok {
					t.Errorf("event %v after the subscription ended", ev)
				}
				if err := sub.Err(); err != nil {
					t.Errorf("Err() = %v, want nil (ended as by Close)", err)
				}
				// The client goes on.
				if _, err := f.c.ListTools(testCtx(t), ""); err != nil {
					t.Errorf("ListTools after the subscription ended: %v", err)
				}
			})
		}
	}
}
