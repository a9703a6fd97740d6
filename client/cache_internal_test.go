package client

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

func TestReadCacheHints(t *testing.T) {
	tests := []struct {
		raw       string
		ttl       time.Duration
		wantScope string
	}{
		{`{"ttlMs":1500,"cacheScope":"public"}`, 1500 * time.Millisecond, "public"},
		{`{"resultType":"complete","ttlMs":10,"cacheScope":"private"}`, 10 * time.Millisecond, "private"},
		{`{"ttlMs":10}`, 10 * time.Millisecond, "private"}, // missing scope: private
		{`{"ttlMs":10,"cacheScope":"weird"}`, 10 * time.Millisecond, "private"},
		{`{"cacheScope":"public"}`, 0, "public"},                                  // missing ttl: 0
		{`{"ttlMs":-5,"cacheScope":"public"}`, 0, "public"},                       // negative: 0
		{`{"ttlMs":1.5,"cacheScope":"public"}`, 0, "public"},                      // non-integer: 0
		{`{"ttlMs":"soon","cacheScope":"public"}`, 0, "public"},                   // wrong type: 0
		{`{"resultType":"input_required","ttlMs":99}`, 0, "private"},              // never cacheable
		{`{"ttlMs":1e300,"cacheScope":"public"}`, 365 * 24 * time.Hour, "public"}, // clamped
		{`[1]`, 0, "private"},
	}
	for _, tt := range tests {
		ttl, scope := readCacheHints(json.RawMessage(tt.raw))
		if ttl != tt.ttl || scope != tt.wantScope {
			t.Errorf("readCacheHints(%s) = %v, %q; want %v, %q", tt.raw, ttl, scope, tt.ttl, tt.wantScope)
		}
	}
}

// TestInputMark: every handler hook marks the request context, so results
// that needed input are not cached; the hooks do not change what
// handler.Detect finds.
func TestInputMark(t *testing.T) {
	user := struct {
		handler.SamplerFunc
		handler.URLElicitorFunc
		handler.RootsListerFunc
		handler.ToolsChangedListenerFunc
	}{
		func(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return &protocol.CreateMessageResult{}, nil
		},
		func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			return &protocol.ElicitResult{Action: protocol.ElicitAccept}, nil
		},
		func(context.Context) ([]protocol.Root, error) { return nil, nil },
		func(context.Context) {},
	}
	wrapped := wrapHandler(user)
	set := handler.Detect(wrapped)
	if set.Elicitor != nil {
		t.Error("wrapping added an Elicitor the user does not implement")
	}
	if set.ToolsChanged == nil || set.Sampler == nil || set.URLElicitor == nil || set.RootsLister == nil {
		t.Errorf("Detect(wrapped) lost interfaces: %+v", set)
	}
	calls := map[string]func(ctx context.Context){
		"sampler": func(ctx context.Context) { set.Sampler.CreateMessage(ctx, &protocol.CreateMessageParams{}) },
		"url":     func(ctx context.Context) { set.URLElicitor.ElicitURL(ctx, &protocol.ElicitParams{}) },
		"roots":   func(ctx context.Context) { set.RootsLister.ListRoots(ctx) },
	}
	for name, call := range calls {
		ctx, mark := withInputMark(context.Background())
		call(ctx)
		if !mark.Load() {
			t.Errorf("%s hook did not mark the context", name)
		}
	}
	if wrapHandler(nil) != nil {
		t.Error("wrapHandler(nil) != nil")
	}
}
