package client_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
)

func root(name string) protocol.Root { return protocol.Root{URI: "file:///" + name, Name: name} }

// awaitServerRoots waits until the legacy server, having been told of a
// change, listed want.
func awaitServerRoots(t *testing.T, srv *testserver.Server, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := srv.Roots()
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server roots = %q, want %q", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestManagedRoots: one Roots answers both eras from the same list; in
// the legacy era each change reaches the server as
// notifications/roots/list_changed (the server then lists again), in the
// modern era none is sent and the next input round sees the change.
func TestManagedRoots(t *testing.T) {
	for _, era := range allEras {
		for _, tr := range []string{tPipe, tHTTP} {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				roots := &client.Roots{}
				if err := roots.Add(root("a")); err != nil {
					t.Fatal(err)
				}
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p), client.WithRoots(roots))
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
					change func() error
					want   []string
				}{
					{func() error { return roots.Add(root("b"), root("a")) }, []string{"file:///a", "file:///b"}},
					{func() error { roots.Remove("file:///a", "file:///zzz"); return nil }, []string{"file:///b"}},
					{func() error { return roots.Replace(root("c"), root("d")) }, []string{"file:///c", "file:///d"}},
				}
				for _, st := range steps {
					if err := st.change(); err != nil {
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

// TestRootsRefused: roots must be file:// URIs; a refused change changes
// nothing.
func TestRootsRefused(t *testing.T) {
	var r client.Roots
	if err := r.Add(root("a")); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func() error{
		func() error { return r.Add(protocol.Root{URI: "https://example.com"}) },
		func() error { return r.Replace(root("b"), protocol.Root{URI: "relative/path"}) },
		func() error { return r.Add(root("c"), protocol.Root{URI: ""}) },
	} {
		if e, ok := errors.AsType[*client.Error](bad()); !ok || e.Kind != client.KindInvalid {
			t.Errorf("err = %v, want an *Error of kind invalid", e)
		}
	}
	if got := r.List(); len(got) != 1 || got[0].URI != "file:///a" {
		t.Errorf("List() = %+v after refused changes", got)
	}
}
