package client

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

// TestWrapHandler: wrapping puts the validating elicitor in front of a
// user's Elicitor and changes nothing else handler.Detect finds: no
// interface is added or lost.
func TestWrapHandler(t *testing.T) {
	sampler := handler.SamplerFunc(func(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
		return &protocol.CreateMessageResult{}, nil
	})
	urlElicitor := handler.URLElicitorFunc(func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		return &protocol.ElicitResult{Action: protocol.ElicitAccept}, nil
	})
	roots := handler.RootsListerFunc(func(context.Context) ([]protocol.Root, error) { return nil, nil })
	elicitor := handler.ElicitorFunc(func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		return &protocol.ElicitResult{Action: protocol.ElicitDecline}, nil
	})
	tests := []struct {
		name       string
		h          any
		validating bool
	}{
		{"no-elicitor", struct {
			handler.SamplerFunc
			handler.URLElicitorFunc
			handler.RootsListerFunc
			handler.ToolsChangedListenerFunc
		}{sampler, urlElicitor, roots, func(context.Context) {}}, false},
		{"elicitor", struct {
			handler.ElicitorFunc
			handler.SamplerFunc
			handler.RootsListerFunc
			handler.ToolsChangedListenerFunc
		}{elicitor, sampler, roots, func(context.Context) {}}, true},
	}
	present := func(s handler.Set) []bool {
		return []bool{s.Sampler != nil, s.Elicitor != nil, s.URLElicitor != nil, s.RootsLister != nil, s.ToolsChanged != nil}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := handler.Detect(tt.h)
			got := handler.Detect(wrapHandler(tt.h))
			if diff := cmp.Diff(present(want), present(got)); diff != "" {
				t.Errorf("interfaces found (sampler, elicitor, url, roots, tools-changed) (-want +got):\n%s", diff)
			}
			_, validating := got.Elicitor.(*validatingElicitor)
			if validating != tt.validating {
				t.Errorf("Elicitor is the validating wrapper: %v, want %v", validating, tt.validating)
			}
		})
	}
	if wrapHandler(nil) != nil {
		t.Error("wrapHandler(nil) != nil")
	}
}
