package engine

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// TestRejectedRequestIDsBounded: a legacy server that sends requests
// beyond MaxConcurrentServerRequests while it reads none of the client's
// answers has the refusals queue up; what the queue holds of their ids is
// bounded in bytes, not only in count: requests with ids of a megabyte
// each are counted as dropped once the queued ids hold
// maxQueuedRejectBytes, instead of the queue holding a megabyte each (up
// to maxQueuedRejects of them: 64 GiB). It runs in real time: the
// refusals must stay stuck behind a write the server does not read.
func TestRejectedRequestIDsBounded(t *testing.T) {
	stall := make(chan struct{})
	var started atomic.Int32
	h := handler.Funcs{ListRoots: func(ctx context.Context) ([]protocol.Root, error) {
		started.Add(1)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	tr := newScripted(func(p *peer, m jsonrpc.Message) {
		if _, ok := m.(*jsonrpc.Response); ok {
			<-stall // the server reads nothing more
			return
		}
		legacyServer(p, m)
	})
	flushed := make(chan struct{}, 1)
	d := &dropCounter{}
	var big atomic.Int32
	s := connected(t, tr, Config{Mode: ModeLegacy, Tap: func(out bool, m jsonrpc.Message) {
		if r, ok := m.(*jsonrpc.Request); ok && !out && r.ID.IsString() {
			big.Add(1)
		}

	}, Handler: detected(h), OnEvent: d.onEvent,
		OnNotification: func(_ context.Context, n *jsonrpc.Request) {
			if n.Method == protocol.NotificationToolsListChanged {
				flushed <- struct{}{}
			}
		}})
	t.Cleanup(func() { close(stall) })
	p := tr.peer(0)
	floodRequests(p, MaxConcurrentServerRequests) // every handler held
	deadline := time.Now().Add(10 * time.Second)
	for started.Load() < MaxConcurrentServerRequests {
		if time.Now().After(deadline) {
			t.Fatalf("%d handlers started, want %d", started.Load(), MaxConcurrentServerRequests)
		}
		time.Sleep(time.Millisecond)
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n, idLen = 64, 1 << 20
	for i := range n {
		id := fmt.Sprintf("%08d", i) + strings.Repeat("x", idLen-8)
		p.send(&jsonrpc.Request{ID: jsonrpc.StringID(id), Method: protocol.MethodRootsList})
	}
	p.notify(protocol.NotificationToolsListChanged, nil) // the loop has seen every request once it is delivered
	select {
	case <-flushed:
	case <-time.After(10 * time.Second):
		t.Fatal("the notification after the flood was not delivered")
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 16<<20 {
		t.Errorf("heap grew by %d MiB with %d refused requests of %d KiB ids queued; want the queued ids bounded", grew>>20, n, idLen>>10)
	}
	s.Close()
	if got := d.get(protocol.MethodRootsList); got == 0 {
		t.Errorf("no refused request was counted as dropped")
	}
}

// TestNotificationQueueBytesBounded: the notification queue is bounded in
// bytes as well as in entries: a server sending a hundred log messages of
// a megabyte each to a listener that does not keep up has the oldest
// dropped (and counted) once the queued params hold
// MaxQueuedNotificationBytes, instead of the queue holding a megabyte
// each (up to MaxQueuedNotifications of them: 16 GiB).
func TestNotificationQueueBytesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var delivered atomic.Int64
		d := &dropCounter{}
		tr := newScripted(legacyServer)
		s := connected(t, tr, Config{Mode: ModeLegacy, OnEvent: d.onEvent, OnNotification: func(_ context.Context, n *jsonrpc.Request) {
			<-release
			delivered.Add(1)
		}})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		const n = 100
		data := strings.Repeat("x", 1<<20)
		floodNotes(tr.peer(0), n, func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%d %s"}}`, i, data)
		})
		synctest.Wait()
		runtime.GC()
		runtime.ReadMemStats(&after)
		if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 2*MaxQueuedNotificationBytes {
			t.Errorf("heap grew by %d MiB with %d notifications of 1 MiB queued; want the queue bounded by %d MiB", grew>>20, n, MaxQueuedNotificationBytes>>20)
		}
		close(release)
		synctest.Wait()
		s.Close()
		got, dropped := int(delivered.Load()), d.get(protocol.NotificationMessage)
		if got+dropped != n || dropped == 0 {
			t.Errorf("delivered %d + dropped %d, want %d with some dropped", got, dropped, n)
		}
	})
}
