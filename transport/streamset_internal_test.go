package transport

import (
	"math/rand/v2"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// TestStreamSetAsMap: a streamSet answers every sequence of puts, gets and
// removes as a map would, whichever entry is the inline one.
func TestStreamSetAsMap(t *testing.T) {
	ids := []jsonrpc.ID{jsonrpc.Int64ID(1), jsonrpc.Int64ID(2), jsonrpc.StringID("1"), jsonrpc.StringID("x"), jsonrpc.Int64ID(3)}
	sts := []*reqStream{{}, {}, {}}
	r := rand.New(rand.NewPCG(1, 2))
	for run := range 200 {
		var s streamSet
		m := map[jsonrpc.ID]*reqStream{}
		for step := range 50 {
			id := ids[r.IntN(len(ids))]
			switch r.IntN(3) {
			case 0:
				st := sts[r.IntN(len(sts))]
				s.put(id, st)
				m[id] = st
			case 1:
				var want *reqStream
				if r.IntN(2) == 0 {
					want = sts[r.IntN(len(sts))]
				}
				got := s.remove(id, want)
				old := m[id]
				if old != nil && (want == nil || old == want) {
					delete(m, id)
				} else {
					old = nil
				}
				if got != old {
					t.Fatalf("run %d step %d: remove(%v, %p) = %p, want %p", run, step, id, want, got, old)
				}
			}
			for _, id := range ids {
				if got, want := s.get(id), m[id]; got != want {
					t.Fatalf("run %d step %d: get(%v) = %p, want %p", run, step, id, got, want)
				}
			}
		}
	}
}

// TestStreamSetOneInFlight: one request at a time never makes the map.
func TestStreamSetOneInFlight(t *testing.T) {
	var s streamSet
	for i := range 100 {
		id, st := jsonrpc.Int64ID(int64(i)), &reqStream{}
		s.put(id, st)
		if s.remove(id, st) != st {
			t.Fatal("the stream put was not removed")
		}
	}
	if s.more != nil {
		t.Error("one request at a time made the map")
	}
}
