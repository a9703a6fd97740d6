package jsonrpc_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
)

func collect(data string) (msgs []jsonrpc.Message, errs []error) {
	for m, err := range jsonrpc.DecodeMessages([]byte(data)) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		msgs = append(msgs, m)
	}
	return msgs, errs
}

func TestDecodeMessagesBatch(t *testing.T) {
	msgs, errs := collect(` [{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}},
		{"jsonrpc":"2.0","id":7,"method":"ping"}, {"jsonrpc":"2.0","id":"a","result":{}}] `)
	if len(errs) != 0 || len(msgs) != 3 {
		t.Fatalf("got %d messages, errors %v; want 3, none", len(msgs), errs)
	}
	if r, ok := msgs[0].(*jsonrpc.Request); !ok || r.Method != "notifications/message" || r.ID.IsValid() {
		t.Errorf("first = %#v; want the notification", msgs[0])
	}
	if r, ok := msgs[1].(*jsonrpc.Request); !ok || r.Method != "ping" || r.ID != jsonrpc.Int64ID(7) {
		t.Errorf("second = %#v; want the ping request", msgs[1])
	}
	if r, ok := msgs[2].(*jsonrpc.Response); !ok || r.ID != jsonrpc.StringID("a") {
		t.Errorf("third = %#v; want the response", msgs[2])
	}
}

func TestDecodeMessagesSingle(t *testing.T) {
	msgs, errs := collect(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	if len(errs) != 0 || len(msgs) != 1 {
		t.Fatalf("got %v, %v; want one message", msgs, errs)
	}
	_, errs = collect(`{"jsonrpc":"2.0","id":1}`)
	if len(errs) != 1 || !errors.Is(errs[0], jsonrpc.ErrInvalidRequest) {
		t.Errorf("broken single: errors %v; want one invalid request", errs)
	}
}

// TestDecodeMessagesBrokenBatch: a broken element yields its typed error
// (with the id it names) and the elements after it still come; whole
// batches that are empty, not JSON or nested yield typed errors; the
// elements beyond MaxBatch yield one error.
func TestDecodeMessagesBrokenBatch(t *testing.T) {
	msgs, errs := collect(`[{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}},{"jsonrpc":"2.0","method":"ping","id":4}]`)
	if len(msgs) != 1 || len(errs) != 1 {
		t.Fatalf("got %d messages, %d errors; want 1, 1", len(msgs), len(errs))
	}
	if de, ok := errors.AsType[*jsonrpc.DecodeError](errs[0]); !ok || de.ID != jsonrpc.Int64ID(3) {
		t.Errorf("err = %v; want a *DecodeError naming id 3", errs[0])
	}
	for _, in := range []string{`[]`, `[{"jsonrpc":"2.0",`, `[[{"jsonrpc":"2.0","method":"ping"}]]`, `[1]`} {
		msgs, errs := collect(in)
		if len(msgs) != 0 || len(errs) != 1 {
			t.Errorf("%s: got %d messages, errors %v; want one error", in, len(msgs), errs)
			continue
		}
		if _, ok := errors.AsType[*jsonrpc.DecodeError](errs[0]); !ok {
			t.Errorf("%s: err %v is not a *DecodeError", in, errs[0])
		}
	}
	many := "[" + strings.Repeat(`{"jsonrpc":"2.0","method":"ping"},`, jsonrpc.MaxBatch+5) + `{"jsonrpc":"2.0","method":"ping"}]`
	msgs, errs = collect(many)
	if len(msgs) != jsonrpc.MaxBatch || len(errs) != 1 {
		t.Errorf("oversized batch: %d messages, %d errors; want %d, 1", len(msgs), len(errs), jsonrpc.MaxBatch)
	}
}

// TestDecodeMessagesHugeBatch: a batch of far more than MaxBatch elements
// costs memory in proportion to the elements looked at, not to all of
// them. The elements used to be decoded into a slice first, one
// allocation each, so that a 16 MiB body of millions of tiny elements
// took gigabytes and seconds before the first message came, and all of
// it again when the caller stopped after one.
func TestDecodeMessagesHugeBatch(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	data := []byte("[" + strings.Repeat("0,", 1<<20) + `{"jsonrpc":"2.0","method":"ping"}]`)
	for _, stopAfter := range []int{1, jsonrpc.MaxBatch + 1} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		n := 0
		for _, err := range jsonrpc.DecodeMessages(data) {
			if err == nil {
				t.Fatal("DecodeMessages yielded a message for the element 0")
			}
			if n++; n == stopAfter {
				break
			}
		}
		runtime.ReadMemStats(&after)
		if n != stopAfter {
			t.Errorf("DecodeMessages of %d elements yielded %d times, want %d", 1<<20+1, n, stopAfter)
		}
		// Each element looked at yields a *DecodeError: about a hundred
		// bytes apiece, and nothing for the others.
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(1<<20); got > limit {
			t.Errorf("DecodeMessages of a %d-byte batch, stopped after %d, allocated %d bytes, want at most %d", len(data), stopAfter, got, limit)
		}
	}
}

func TestIsBatch(t *testing.T) {
	for in, want := range map[string]bool{` [`: true, "\n\t[]": true, `{}`: false, ``: false, `  `: false} {
		if got := jsonrpc.IsBatch([]byte(in)); got != want {
			t.Errorf("IsBatch(%q) = %v", in, got)
		}
	}
}
