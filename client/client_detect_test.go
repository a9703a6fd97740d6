package client_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
)

// countingHandler counts how often handler detection looks through it
// (handler.Detect follows Unwrap chains).
type countingHandler struct {
	unwraps atomic.Int32
	inner   rootsOnly
}

func (h *countingHandler) Unwrap() any { h.unwraps.Add(1); return h.inner }

type rootsOnly struct{}

func (rootsOnly) ListRoots(context.Context) ([]protocol.Root, error) {
	return []protocol.Root{{URI: "file:///tmp"}}, nil
}

// TestHandlerDetectedOnce: a client detects its handler's interfaces once
// per connection, in both eras, and the detected set still serves (the
// roots capability is advertised).
func TestHandlerDetectedOnce(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			h := &countingHandler{}
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(era.p), client.WithHandler(h))
			if f.c.Negotiated().ClientCapabilities.Roots == nil {
				t.Errorf("roots capability not advertised: %+v", f.c.Negotiated().ClientCapabilities)
			}
			if _, err := f.c.ListTools(testCtx(t), ""); err != nil {
				t.Fatal(err)
			}
			if n := h.unwraps.Load(); n != 1 {
				t.Errorf("the handler was detected %d times, want once", n)
			}
		})
	}
}
