package client_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
)

func root(name string) protocol.Root { return protocol.Root{URI: "file:///" + name, Name: name} }

// awaitServerRoots waits until the legacy server, having been told of a
// change, listed want.
func awaitServerRoots(t *testing.T, srv *testserver.Server, want ...string) {
	t.Helper()
	var got []string
	if !eventually(func() bool {
		got, _ = srv.Roots()
		return slices.Equal(got, want)
	}) {
		t.Fatalf("server roots = %q, want %q", got, want)
	}
}

// TestManagedRoots: the client's own list answers both eras; in the
// legacy era each SetRoots reaches the server as
// notifications/roots/list_changed (the server then lists again), in the
// modern era none is sent and the next input round sees the change.
func TestManagedRoots(t *testing.T) {
	for _, era := range allEras {
		for _, tr := range []string{tPipe, tHTTP} {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p), client.WithRoots(root("a")))
				ctx := testCtx(t)
				caps := f.c.Negotiated().ClientCapabilities
				if caps.Roots == nil || caps.Roots.ListChanged != (era.p == client.Legacy) {
					t.Errorf("roots capability = %+v", caps.Roots)
				}
				callRoots := func(want string) {
					t.Helper()
					res, err := f.c.CallTool(ctx, "roots", nil)
					if err != nil || res.Text() != want {
						t.Fatalf("CallTool(roots) = %v, %v; want %q", res, err, want)
					}
				}
				callRoots("file:///a")
				steps := []struct {
					roots []protocol.Root
					want  []string
				}{
					{[]protocol.Root{root("a"), root("b"), root("a")}, []string{"file:///a", "file:///b"}}, // the last of a URI is kept, in place
					{[]protocol.Root{root("b")}, []string{"file:///b"}},
					{[]protocol.Root{root("c"), root("d")}, []string{"file:///c", "file:///d"}},
				}
				for _, st := range steps {
					if err := f.c.SetRoots(st.roots...); err != nil {
						t.Fatal(err)
					}
					if era.p == client.Legacy {
						awaitServerRoots(t, f.srv, st.want...)
					}
					callRoots(strings.Join(st.want, "\n"))
				}
				n := count(f.srv, protocol.NotificationRootsListChanged)
				if era.p == client.Legacy && n == 0 || era.p == client.Modern && n != 0 {
					t.Errorf("%d notifications/roots/list_changed in the %s era", n, era.name)
				}
			})
		}
	}
}

// TestRootsRefused: roots must be file:// URIs; a refused SetRoots
// changes nothing, a refused WithRoots fails Connect, and SetRoots
// without WithRoots is refused.
func TestRootsRefused(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern), client.WithRoots(root("a")))
	for _, bad := range [][]protocol.Root{
		{{URI: "https://example.com"}},
		{root("b"), {URI: "relative/path"}},
		{root("c"), {URI: ""}},
	} {
		if e, ok := errors.AsType[*client.Error](f.c.SetRoots(bad...)); !ok || e.Kind != client.KindInvalid {
			t.Errorf("SetRoots(%v) = %v, want an *Error of kind invalid", bad, e)
		}
	}
	if res, err := f.c.CallTool(testCtx(t), "roots", nil); err != nil || res.Text() != "file:///a" {
		t.Errorf("roots after refused changes = %v, %v; want file:///a", res, err)
	}

	_, err := tryConnect(t, tPipe, testserver.Options{}, client.WithRoots(root("a"), protocol.Root{URI: "http://x"}))
	if e, ok := errors.AsType[*client.Error](err); !ok || e.Kind != client.KindInvalid {
		t.Errorf("Connect with a non-file root = %v, want an *Error of kind invalid", err)
	}

	plain := connect(t, tPipe, testserver.Options{})
	if e, ok := errors.AsType[*client.Error](plain.c.SetRoots(root("a"))); !ok || e.Kind != client.KindInvalid {
		t.Errorf("SetRoots without WithRoots = %v, want an *Error of kind invalid", e)
	}
}

// TestSetRootsConcurrent: SetRoots from several goroutines while the
// server asks for the roots, in both eras (run with -race); the list
// always is one of those set, the last set is what the server gets next,
// and in the legacy era it is announced. (Which answer a legacy server
// keeps when its roots/list requests overlap is the server's business,
// so the test asks through a tool call.)
func TestSetRootsConcurrent(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(era.p), client.WithRoots())
			ctx := testCtx(t)
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for i := range 20 {
						if err := f.c.SetRoots(root(fmt.Sprintf("g%d-%d", g, i))); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			for range 5 {
				res, err := f.c.CallTool(ctx, "roots", nil)
				if err != nil {
					t.Fatalf("CallTool(roots) = %v", err)
				}
				if got := res.Text(); got != "" && !strings.HasPrefix(got, "file:///g") || strings.Contains(got, "\n") {
					t.Errorf("roots = %q, want none or one of those set", got)
				}
			}
			wg.Wait()
			announced := count(f.srv, protocol.NotificationRootsListChanged)
			if err := f.c.SetRoots(root("last")); err != nil {
				t.Fatal(err)
			}
			if era.p == client.Legacy {
				if !eventually(func() bool { return count(f.srv, protocol.NotificationRootsListChanged) > announced }) {
					t.Fatal("the last SetRoots was not announced")
				}
			}
			if res, err := f.c.CallTool(ctx, "roots", nil); err != nil || res.Text() != "file:///last" {
				t.Errorf("roots = %v, %v; want file:///last", res, err)
			}
		})
	}
}
