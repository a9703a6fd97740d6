package engine

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// answers counts the client's answers to server requests, by outcome
// ("result", "busy" for the overload error, "other") and by id.
type answers struct {
	outcomes tally[string]
	ids      tally[string]
}

func (a *answers) peer(p *peer, m jsonrpc.Message) {
	r, ok := m.(*jsonrpc.Response)
	if !ok {
		legacyServer(p, m)
		return
	}
	a.ids.add(r.ID.String(), 1)
	switch {
	case r.Error == nil:
		a.outcomes.add("result", 1)
	case r.Error.Code == jsonrpc.CodeInternalError:
		a.outcomes.add("busy", 1)
	default:
		a.outcomes.add("other", 1)
	}
}

func (a *answers) counts() (results, busy, other, distinct int) {
	n := a.outcomes.all()
	return n["result"], n["busy"], n["other"], len(a.ids.all())
}

// floodRequests writes n roots/list requests with ids 1..n in one go.
func floodRequests(p *peer, n int) {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"roots/list"}`+"\n", i+1)
	}
	p.wlock <- struct{}{}
	p.rw.Write(b.Bytes())
	<-p.wlock
}

// TestServerRequestOverflowAnswered: a legacy server's requests beyond
// MaxConcurrentServerRequests in flight are answered with a JSON-RPC
// error, never left unanswered (issue 15, item 2). With a handler that
// holds every request, 300 requests get 44 "client busy" errors at once
// and 256 results once the handler lets go.
func TestServerRequestOverflowAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		h := handler.Funcs{ListRoots: func(ctx context.Context) ([]protocol.Root, error) {
			select {
			case <-release:
				return []protocol.Root{}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
		a := &answers{}
		tr := newScripted(a.peer)
		if _, err := connect(t, tr, Config{Mode: ModeLegacy, Handler: detected(h)}); err != nil {
			t.Fatal(err)
		}
		floodRequests(tr.peer(0), 300)
		synctest.Wait()
		if res, busy, other, _ := a.counts(); res != 0 || busy != 300-MaxConcurrentServerRequests || other != 0 {
			t.Errorf("while the handler holds: results %d, busy %d, other %d; want 0, %d, 0", res, busy, other, 300-MaxConcurrentServerRequests)
		}
		close(release)
		synctest.Wait()
		if res, busy, other, ids := a.counts(); res != MaxConcurrentServerRequests || busy != 300-MaxConcurrentServerRequests || other != 0 || ids != 300 {
			t.Errorf("after: results %d, busy %d, other %d, distinct ids %d; want %d, %d, 0, 300", res, busy, other, ids, MaxConcurrentServerRequests, 300-MaxConcurrentServerRequests)
		}
	})
}

// TestServerRequestFloodAllAnswered: 10,000 requests sent at once by a
// legacy server are all answered (a result or a "client busy" error).
func TestServerRequestFloodAllAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := handler.Funcs{ListRoots: rootsOK}
		a := &answers{}
		tr := newScripted(a.peer)
		if _, err := connect(t, tr, Config{Mode: ModeLegacy, Handler: detected(h)}); err != nil {
			t.Fatal(err)
		}
		const n = 10000
		floodRequests(tr.peer(0), n)
		synctest.Wait()
		res, busy, other, ids := a.counts()
		if res+busy != n || other != 0 || ids != n {
			t.Errorf("results %d + busy %d = %d, other %d, distinct ids %d; want %d answered", res, busy, res+busy, other, ids, n)
		}
		t.Logf("%d requests: %d results, %d busy errors", n, res, busy)
	})
}

// TestServerRequestFlood: a legacy server sending more concurrent requests
// than MaxConcurrentServerRequests gets the excess refused (see
// TestServerRequestOverflowAnswered); the client's goroutines stay bounded.
func TestServerRequestFlood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var started atomic.Int32
		h := handler.Funcs{ListRoots: func(ctx context.Context) ([]protocol.Root, error) {
			started.Add(1)
			<-ctx.Done()
			return nil, ctx.Err()
		}}
		tr := newScripted(legacyServer)
		s := connected(t, tr, Config{Mode: ModeLegacy, Handler: detected(h)})
		for i := range MaxConcurrentServerRequests + 10 {
			tr.peer(0).send(&jsonrpc.Request{ID: jsonrpc.Int64ID(int64(i + 1)), Method: protocol.MethodRootsList})
		}
		synctest.Wait()
		if n := started.Load(); n != MaxConcurrentServerRequests {
			t.Errorf("handlers started = %d, want %d", n, MaxConcurrentServerRequests)
		}
		s.Close()
	})
}

// dropCounter sums EventDropped counts per method.
type dropCounter struct{ by tally[string] }

func (d *dropCounter) onEvent(ev Event) {
	if ev.Kind != EventDropped {
		return
	}
	if ev.Count <= 0 {
		panic("EventDropped without a count")
	}
	d.by.add(ev.Method, ev.Count)
}

func (d *dropCounter) get(method string) int { return d.by.get(method) }

// floodNotes writes n notifications made by line(i), in chunks.
func floodNotes(p *peer, n int, line func(i int) string) {
	var b bytes.Buffer
	for i := range n {
		b.WriteString(line(i))
		b.WriteByte('\n')
		if b.Len() > 1<<16 || i == n-1 {
			p.wlock <- struct{}{}
			p.rw.Write(b.Bytes())
			<-p.wlock
			b.Reset()
		}
	}
}

// TestNotificationFloodCounted: a million notifications against a
// listener that does not keep up: memory stays bounded and every
// notification is either delivered or counted as dropped, exactly, in
// EventDropped (issue 15, item 2).
func TestNotificationFloodCounted(t *testing.T) {
	n := 1_000_000
	if testing.Short() || raceEnabled {
		n = 200_000
	}
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var delivered atomic.Int64
		d := &dropCounter{}
		tr := newScripted(legacyServer)
		s := connected(t, tr, Config{Mode: ModeLegacy, OnEvent: d.onEvent, OnNotification: func(_ context.Context, n *jsonrpc.Request) {
			<-release
			delivered.Add(1)
		}})
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		floodNotes(tr.peer(0), n, func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"message number %d of the flood"}}`, i)
		})
		synctest.Wait()
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 16<<20 {
			t.Errorf("heap grew by %d MiB under the flood; want it bounded by the queue", grew>>20)
		}
		close(release)
		synctest.Wait()
		s.Close()
		got := int(delivered.Load())
		dropped := d.get(protocol.NotificationMessage)
		if got+dropped != n {
			t.Errorf("delivered %d + dropped %d = %d, want %d", got, dropped, got+dropped, n)
		}
		if got > MaxQueuedNotifications+2 {
			t.Errorf("delivered %d, want at most the queue (%d) and the one in hand", got, MaxQueuedNotifications)
		}
		t.Logf("%d notifications: %d delivered, %d dropped (reported)", n, got, dropped)
	})
}

// TestNotificationCoalescing: under a burst of list_changed and
// resources/updated that fills the queue, equal notifications are
// coalesced with the queued one (and counted), so that a different
// notification arriving after the burst still gets through.
func TestNotificationCoalescing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var notes tally[string]
		d := &dropCounter{}
		tr := newScripted(legacyServer)
		s := connected(t, tr, Config{Mode: ModeLegacy, OnEvent: d.onEvent, OnNotification: func(_ context.Context, n *jsonrpc.Request) {
			<-release
			notes.add(n.Method+" "+string(n.Params), 1)
		}})
		const burst = 50000
		// Fill the queue with distinct log messages, then the burst.
		floodNotes(tr.peer(0), MaxQueuedNotifications-2, func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}`, i)
		})
		floodNotes(tr.peer(0), burst, func(i int) string {
			if i%2 == 0 {
				return `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
			}
			return `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}}`
		})
		tr.peer(0).notify(protocol.NotificationPromptsListChanged, nil)
		synctest.Wait()
		close(release)
		synctest.Wait()
		s.Close()
		got := notes.all()
		if got[protocol.NotificationPromptsListChanged+" "] != 1 {
			t.Errorf("the prompts list_changed after the burst was not delivered: %v", got)
		}
		tools := got[protocol.NotificationToolsListChanged+" "]
		updated := got[protocol.NotificationResourcesUpdated+` {"uri":"file:///a"}`]
		if tools < 1 || updated < 1 {
			t.Errorf("delivered tools %d, updated %d; want each at least once", tools, updated)
		}
		if n := tools + d.get(protocol.NotificationToolsListChanged); n != burst/2 {
			t.Errorf("tools list_changed delivered %d + coalesced %d != %d", tools, d.get(protocol.NotificationToolsListChanged), burst/2)
		}
		if n := updated + d.get(protocol.NotificationResourcesUpdated); n != burst/2 {
			t.Errorf("resources/updated delivered %d + coalesced %d != %d", updated, d.get(protocol.NotificationResourcesUpdated), burst/2)
		}
		// The burst coalesces: it evicts no log message; only the prompts
		// notification, arriving at a full queue, evicts the oldest one.
		logs := 0
		for k, v := range got {
			if strings.HasPrefix(k, protocol.NotificationMessage+" ") {
				logs += v
			}
		}
		if dl := d.get(protocol.NotificationMessage); dl > 1 || logs+dl != MaxQueuedNotifications-2 {
			t.Errorf("log messages delivered %d, dropped %d; want at most 1 dropped of %d", logs, dl, MaxQueuedNotifications-2)
		}
	})
}
