package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// TestReconnectedAcrossHeals: over many heals in a row, on real
// goroutines, the channel Reconnected returned before a heal closes at
// that heal and the generation is bumped by then; one taken after the heal
// stays open until the next; a watcher taking channels concurrently never
// sees one closed without the generation having moved past what it read
// before taking it; Done, asked for concurrently, closes only once Err is
// set.
func TestReconnectedAcrossHeals(t *testing.T) {
	const heals = 12
	tr := newScripted(dieOn("die", legacyServer))
	s, err := Connect(t.Context(), tr, Config{Mode: ModeLegacy, Replay: ReplayNone})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.wait()
	defer s.Close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				g := s.Generation()
				ch := s.Reconnected()
				select {
				case <-ch:
					if now := s.Generation(); now <= g {
						t.Errorf("a Reconnected channel taken at generation %d closed at generation %d", g, now)
					}
				case <-stop:
					return
				case <-s.Done():
					if s.Err() == nil {
						t.Error("Done closed while Err is nil")
					}
					return
				}
			}
		})
	}

	bound := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not within 10 s", what)
		}
	}
	for i := range heals {
		before := s.Reconnected()
		g := s.Generation()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		_, err := s.Call(ctx, "die", nil, nil)
		cancel()
		if !errors.Is(err, ErrConnectionLost) {
			t.Fatalf("heal %d: Call error = %v, want a lost connection", i, err)
		}
		bound(before, "the channel taken before the heal")
		if now := s.Generation(); now != g+1 {
			t.Fatalf("heal %d: generation %d after its Reconnected closed, want %d", i, now, g+1)
		}
		after := s.Reconnected()
		if isClosed(after) {
			t.Fatalf("heal %d: the channel taken after the heal is closed", i)
		}
		// A good answer in between, so that the heals are not consecutive.
		ctx, cancel = context.WithTimeout(t.Context(), 10*time.Second)
		_, err = s.Call(ctx, "ping", nil, nil)
		cancel()
		if err != nil {
			t.Fatalf("heal %d: ping: %v", i, err)
		}
		if isClosed(after) {
			t.Fatalf("heal %d: the channel taken after the heal closed without one", i)
		}
	}
	close(stop)
	wg.Wait()

	done := s.Done()
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	bound(done, "Done after Close")
	if s.Err() == nil {
		t.Error("Err is nil once Done closed")
	}
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return within 20 s")
	}
}

// TestCloseRacesFailure: a session whose server dies for good (so that its
// heal fails) while callers, Done waiters and Close run concurrently
// always ends with Done closed, Err set, every call returned and Close
// returned; never a hang or a Done without Err.
func TestCloseRacesFailure(t *testing.T) {
	for i := range 30 {
		var mu sync.Mutex
		n := 0
		// The first connection dies on "die"; every later one refuses to
		// negotiate, so the heal fails and the session fails.
		tr := newScripted(dieOn("die", legacyServer), reqHandler(func(p *peer, req *jsonrpc.Request) {
			mu.Lock()
			n++
			mu.Unlock()
			p.kill()
		}))
		s, err := Connect(t.Context(), tr, Config{Mode: ModeLegacy, Replay: ReplayNone})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				defer cancel()
				for ctx.Err() == nil {
					if _, err := s.Call(ctx, "ping", nil, nil); err != nil {
						if s.Err() == nil && !s.isClosing() && !errors.Is(err, ErrConnectionLost) && !errors.Is(err, ErrOutcomeUnknown) {
							t.Errorf("ping failed with %v while the session is usable", err)
						}
						select {
						case <-s.Done():
							return
						default:
						}
					}
				}
				t.Error("the session did not end within 20 s")
			})
		}
		wg.Go(func() {
			select {
			case <-s.Done():
				if s.Err() == nil {
					t.Error("Done closed while Err is nil")
				}
			case <-time.After(20 * time.Second):
				t.Error("Done not closed within 20 s")
			}
		})
		go s.Call(context.Background(), "die", nil, nil)
		if i%2 == 1 {
			time.Sleep(time.Duration(i) * 100 * time.Microsecond)
			go s.Close()
		}
		wg.Wait()
		closed := make(chan struct{})
		go func() { s.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(20 * time.Second):
			t.Fatal("Close did not return within 20 s")
		}
		tr.wait()
	}
}

// TestHTTPCallsCancelAndClose: over Streamable HTTP, concurrent calls
// answered in a JSON body, in an event stream, or never (their callers
// give up, which cancels the stream and tells the server), with a session
// that may be closed at any point meanwhile: every call returns (with its
// own result, or an error once it gave up or the session closed), Close
// returns, and Done is closed with Err set; never a hang.
func TestHTTPCallsCancelAndClose(t *testing.T) {
	h := toolCallScript(serveModernHTTP, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		var p struct {
			Name string `json:"name"`
		}
		json.Unmarshal(req.Params, &p)
		switch p.Name {
		case "json":
			writeResult(w, req, echoResult(req.Params, true))
		case "sse":
			resp, _ := jsonrpc.NewResponse(req.ID, echoResult(req.Params, true))
			b, _ := jsonrpc.EncodeMessage(resp)
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: " + string(b) + "\n\n"))
		default: // never answered
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
		}
	})
	names := []string{"json", "sse", "never"}
	for trial := range 8 {
		s := httpSession(t, h, Config{})
		var wg sync.WaitGroup
		for g := range 6 {
			wg.Go(func() {
				for i := range 10 {
					name := names[(g+i)%len(names)]
					ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
					if name == "never" {
						ctx, cancel = context.WithTimeout(t.Context(), 20*time.Millisecond)
					}
					res, err := s.Call(ctx, "tools/call", map[string]any{"name": name, "n": g*100 + i}, nil)
					cancel()
					switch {
					case err == nil && name == "never":
						t.Errorf("trial %d: a call never answered returned %s", trial, res)
					case err == nil:
						var got struct {
							Echo struct {
								N int `json:"n"`
							} `json:"echo"`
						}
						json.Unmarshal(res, &got)
						if got.Echo.N != g*100+i {
							t.Errorf("trial %d: call %d got the result of %d: %s", trial, g*100+i, got.Echo.N, res)
						}
					case errors.Is(err, ErrClosed) || s.Err() != nil || s.isClosing():
						return
					case name != "never":
						t.Errorf("trial %d: call %s: %v", trial, name, err)
					}
				}
			})
		}
		if trial%2 == 1 {
			time.Sleep(time.Duration(trial) * time.Millisecond)
			closed := make(chan struct{})
			go func() { s.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(20 * time.Second):
				t.Fatalf("trial %d: Close did not return within 20 s", trial)
			}
			if !isClosed(s.Done()) || s.Err() == nil {
				t.Errorf("trial %d: after Close, Done closed %v, Err %v", trial, isClosed(s.Done()), s.Err())
			}
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("trial %d: calls did not return within 30 s", trial)
		}
		s.Close()
	}
}
