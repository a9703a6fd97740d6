package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
)

// TestTypedListChangedListeners: the handler's PromptsChangedListener and
// ResourcesChangedListener hear prompts/list_changed and
// resources/list_changed in both eras, on pipe, Streamable HTTP and
// WebSocket (issue 29, item 7: the feature audit found them untested).
// Modern: through the listen stream Connect opens for them; legacy: the
// session's notifications (on HTTP, its GET stream).
func TestTypedListChangedListeners(t *testing.T) {
	for _, era := range allEras {
		for _, tr := range []string{tPipe, tHTTP, tWS} {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				prompts := make(chan struct{}, 16)
				resources := make(chan struct{}, 16)
				h := handler.Funcs{
					OnPromptsChanged:   func(context.Context) { prompts <- struct{}{} },
					OnResourcesChanged: func(context.Context) { resources <- struct{}{} },
				}
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p), client.WithHandler(h))
				// A legacy HTTP session opens its GET stream for the
				// listeners; notify until the first one is heard, so
				// the test does not depend on when that stream is up.
				heard := func(ch chan struct{}, notify func()) bool {
					for range 100 {
						notify()
						select {
						case <-ch:
							return true
						case <-timeAfter(100):
						}
					}
					return false
				}
				if !heard(prompts, f.srv.NotifyPromptsChanged) {
					t.Error("OnPromptsChanged was never called")
				}
				if !heard(resources, f.srv.NotifyResourcesChanged) {
					t.Error("OnResourcesChanged was never called")
				}
			})
		}
	}
}

// timeAfter is time.After in milliseconds.
func timeAfter(ms int) <-chan time.Time { return time.After(time.Duration(ms) * time.Millisecond) }
