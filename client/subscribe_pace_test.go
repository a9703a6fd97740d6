package client_test

import (
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
)

// TestSubscribeRelistenPaced: a server whose every listen stream is
// acknowledged and then dropped soon after (here: its HTTP connections
// are closed every 20 ms) is re-listened with a growing backoff (issue
// 15, item 6). Before, an acknowledgement reset the backoff and the
// subscription re-listened about every 100 ms.
func TestSubscribeRelistenPaced(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 5 seconds")
	}
	f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(client.Modern))
	sub, err := f.c.Subscribe(testCtx(t), client.SubscribeOptions{ToolsListChanged: true})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	go func() {
		for range sub.Events() {
		}
	}()
	end := time.Now().Add(5 * time.Second)
	for time.Now().Before(end) {
		f.ts.CloseClientConnections()
		time.Sleep(20 * time.Millisecond)
	}
	n := count(f.srv, "subscriptions/listen")
	if n < 3 || n > 10 {
		t.Errorf("subscriptions/listen sent %d times in 5 s, want 3..10 (paced)", n)
	}
	if err := sub.Err(); err != nil {
		t.Errorf("subscription ended: %v", err)
	}
	t.Logf("%d listens in 5 s", n)
}
