package client_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// completions records notifications/elicitation/complete.
type completions struct {
	mu  sync.Mutex
	ids []string
	ch  chan struct{}
}

func newCompletions() *completions { return &completions{ch: make(chan struct{}, 16)} }

func (c *completions) on(_ context.Context, id string) {
	c.mu.Lock()
	c.ids = append(c.ids, id)
	c.mu.Unlock()
	c.ch <- struct{}{}
}

func (c *completions) await(t *testing.T) string {
	t.Helper()
	await(t, c.ch, "no notifications/elicitation/complete reached the listener")
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ids[len(c.ids)-1]
}

// TestURLElicitationRequiredTyped: without a URLElicitor, -32042 reaches
// the caller as a typed error carrying the URL, and the server's
// elicitation/complete reaches the listener.
func TestURLElicitationRequiredTyped(t *testing.T) {
	for _, tr := range []string{tPipe, tStdio, tHTTP} {
		t.Run(tr, func(t *testing.T) {
			done := newCompletions()
			f := connect(t, tr, testserver.Options{}, client.WithProtocol(client.Pin(protocol.Version20251125)),
				client.WithHandler(handler.Funcs{OnElicitationComplete: done.on}))
			_, err := f.c.CallTool(testCtx(t), "url_required", nil)
			var ue *protocol.URLElicitationRequiredError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want a *protocol.URLElicitationRequiredError", err)
			}
			if len(ue.Elicitations) != 1 || !strings.HasPrefix(ue.Elicitations[0].URL, "https://example.com/consent?id=consent-") || ue.Elicitations[0].ElicitationID == "" {
				t.Fatalf("Elicitations = %+v", ue.Elicitations)
			}
			if !errors.Is(err, jsonrpc.ErrURLElicitationRequired) {
				t.Errorf("err does not match jsonrpc.ErrURLElicitationRequired")
			}
			if e, _ := errors.AsType[*client.Error](err); e == nil || e.Kind != client.KindServer {
				t.Errorf("err = %#v, want an *Error of kind server", err)
			}
			if id := done.await(t); id != ue.Elicitations[0].ElicitationID {
				t.Errorf("completed %q, want %q", id, ue.Elicitations[0].ElicitationID)
			}
		})
	}
}

// TestURLElicitationRequiredHandled: with a URLElicitor the URL reaches
// the handler; after the server's completion the call is sent again and
// succeeds. A declined URL is the caller's typed error.
func TestURLElicitationRequiredHandled(t *testing.T) {
	for _, tr := range []string{tPipe, tStdio, tHTTP} {
		t.Run(tr, func(t *testing.T) {
			var mu sync.Mutex
			var urls []string
			action := protocol.ElicitAccept
			h := handler.Funcs{ElicitURL: func(_ context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
				mu.Lock()
				defer mu.Unlock()
				urls = append(urls, p.URL)
				return &protocol.ElicitResult{Action: action}, nil
			}}
			f := connect(t, tr, testserver.Options{}, client.WithProtocol(client.Pin(protocol.Version20251125)), client.WithHandler(h))
			ctx := testCtx(t)
			res, err := f.c.CallTool(ctx, "url_required", nil)
			if err != nil {
				t.Fatalf("CallTool = %v", err)
			}
			if !strings.HasPrefix(res.Text(), "signed in (consent-") {
				t.Errorf("result = %q", res.Text())
			}
			mu.Lock()
			if len(urls) != 1 || !strings.Contains(urls[0], "consent-") {
				t.Errorf("handler saw %q, want one consent URL", urls)
			}
			action = protocol.ElicitDecline
			mu.Unlock()
			_, err = f.c.CallTool(ctx, "url_required", nil)
			if ue, ok := errors.AsType[*protocol.URLElicitationRequiredError](err); !ok || len(ue.Elicitations) != 1 {
				t.Errorf("declined: err = %v, want a *protocol.URLElicitationRequiredError", err)
			}
		})
	}
}

// TestURLElicitationNeverCompletes: an elicitation the server never
// completes ends with the caller's context, not a hang.
func TestURLElicitationNeverCompletes(t *testing.T) {
	h := handler.Funcs{ElicitURL: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		return &protocol.ElicitResult{Action: protocol.ElicitAccept}, nil
	}}
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Pin(protocol.Version20251125)), client.WithHandler(h))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := f.c.CallTool(ctx, "url_required", map[string]any{"complete": false})
	if e, ok := errors.AsType[*client.Error](err); !ok || e.Kind != client.KindTimeout {
		t.Errorf("err = %v, want a timeout", err)
	}
}
