package route_test

import (
	"testing"

	"github.com/conduitmcp/conduit/internal/route"
	"github.com/conduitmcp/conduit/protocol"
)

func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for e := range route.All() {
		if e.Method == "" || e.Route == route.None {
			t.Errorf("entry %+v: empty method or no route", e)
		}
		if seen[e.Method] {
			t.Errorf("%s appears twice", e.Method)
		}
		seen[e.Method] = true
		if got := route.Of(e.Method); got != e.Route {
			t.Errorf("Of(%q) = %v, want %v", e.Method, got, e.Route)
		}
	}
	n := 0
	for range route.Methods() {
		n++
	}
	if n != len(seen) {
		t.Errorf("Methods() yields %d names, the table has %d", n, len(seen))
	}
	// The six methods the seed's previous list missed are routed.
	for _, m := range []string{protocol.MethodResourcesTemplateList, protocol.MethodTasksGet, protocol.MethodTasksResult,
		protocol.MethodTasksList, protocol.MethodTasksCancel, protocol.NotificationCancelled} {
		if route.Of(m) == route.None {
			t.Errorf("%s is not routed", m)
		}
	}
	if route.Incoming(protocol.MethodPing) != route.ServePing || route.Of("vendor/x") != route.None {
		t.Error("Incoming(ping) or Of(unknown) is wrong")
	}
}
