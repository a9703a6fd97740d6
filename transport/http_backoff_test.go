package transport_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPGETReconnectBackoffSettable: ReconnectBackoff and
// MaxReconnectBackoff pace the reconnects of a failing legacy GET stream
// (issue 29, item 4). With 20 ms doubling to 40 ms the five attempts come
// within the wait bound, each at least 20 ms after the one before; the
// default pacing (1 s, 2 s, 4 s, 8 s) would take 15 s.
func TestHTTPGETReconnectBackoffSettable(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	ls := &httpLegacyServer{t: t, session: "s", deletes: make(chan http.Header, 1)}
	ls.get = func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		w.WriteHeader(http.StatusInternalServerError)
	}
	srv := newHTTPServer(t, ls.ServeHTTP)
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, ReconnectBackoff: 20 * time.Millisecond, MaxReconnectBackoff: 40 * time.Millisecond})
	httpInitialize(t, c)
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(at)
		mu.Unlock()
		if n >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d GET attempts within 5 s, want 5", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < 5; i++ {
		if gap := at[i].Sub(at[i-1]); gap < 20*time.Millisecond {
			t.Errorf("GET %d came %v after the previous one, want at least 20ms", i+1, gap)
		}
	}
}
