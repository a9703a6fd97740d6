package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPConcurrentSameIDs: writers on one Streamable HTTP connection,
// each reusing its own id round after round, get exactly the response of
// each round from Read, whichever way it comes (a JSON body, an event
// stream, a stream the server keeps open after the response), with
// CancelStream of a request the server never answers in between, and
// whether Read starts before or after the first response: never a hang,
// a response lost, delivered twice, or given to the wrong round.
func TestHTTPConcurrentSameIDs(t *testing.T) {
	const writers, rounds = 6, 12
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := requestOf(w, r)
		if !ok {
			return
		}
		var p struct {
			Round int `json:"round"`
		}
		json.Unmarshal(req.Params, &p)
		res := httpResult(req.ID, `{"round":`+strconv.Itoa(p.Round)+`}`)
		switch req.Method {
		case "json":
			httpWriteJSON(w, http.StatusOK, res)
		case "sse":
			httpWriteSSE(w, "data: "+res+"\n\n")
		case "linger":
			httpWriteSSE(w, "data: "+res+"\n\n")
			select { // kept open after the response
			case <-r.Context().Done():
			case <-time.After(50 * time.Millisecond):
			}
		case "never":
			httpWriteSSE(w, ": waiting\n\n")
			select {
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
		}
	}))
	defer srv.Close()
	kinds := []string{"json", "sse", "never", "linger", "sse", "json"}
	for trial := range 6 {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		c, err := (&transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true}).Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
		canceler := c.(transport.StreamCanceler)
		got := make([]chan jsonrpc.Message, writers)
		for i := range got {
			got[i] = make(chan jsonrpc.Message, rounds)
		}
		readerStart := make(chan struct{})
		readerDone := make(chan struct{})
		go func() {
			defer close(readerDone)
			<-readerStart
			for {
				m, err := c.Read(ctx)
				var se *transport.StreamError
				switch {
				case errors.As(err, &se):
					t.Errorf("trial %d: stream error for %v: %v", trial, se.ID, se.Err)
					continue
				case err != nil:
					return
				}
				r, ok := m.(*jsonrpc.Response)
				if !ok {
					t.Errorf("trial %d: read %T", trial, m)
					continue
				}
				n, _ := strconv.Atoi(r.ID.String())
				if n < 0 || n >= writers {
					t.Errorf("trial %d: response to unknown id %v", trial, r.ID)
					continue
				}
				got[n] <- r
			}
		}()
		if trial%2 == 0 {
			close(readerStart) // Read waits first
		}
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for round := range rounds {
					kind := kinds[(w+round)%len(kinds)]
					if err := c.Write(ctx, httpRequest(t, int64(w), kind, map[string]int{"round": round})); err != nil {
						t.Errorf("trial %d writer %d round %d: Write: %v", trial, w, round, err)
						return
					}
					if kind == "never" {
						if !canceler.CancelStream(jsonrpc.Int64ID(int64(w))) {
							t.Errorf("trial %d writer %d round %d: CancelStream found no stream", trial, w, round)
						}
						continue
					}
					select {
					case m := <-got[w]:
						var res struct {
							Round int `json:"round"`
						}
						json.Unmarshal(m.(*jsonrpc.Response).Result, &res)
						if res.Round != round {
							t.Errorf("trial %d writer %d: round %d got the response of round %d", trial, w, round, res.Round)
						}
					case <-ctx.Done():
						t.Errorf("trial %d writer %d round %d (%s): no response", trial, w, round, kind)
						return
					}
				}
			})
		}
		if trial%2 == 1 {
			time.Sleep(5 * time.Millisecond) // JSON answers queue before Read
			close(readerStart)
		}
		wg.Wait()
		c.Close()
		select {
		case <-readerDone:
		case <-time.After(10 * time.Second):
			t.Fatalf("trial %d: Read did not end within 10 s of Close", trial)
		}
		for w := range got {
			select {
			case m := <-got[w]:
				t.Errorf("trial %d writer %d: a response more: %v", trial, w, m)
			default:
			}
		}
		cancel()
	}
}
