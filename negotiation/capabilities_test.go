package negotiation_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

type sampler struct{}

func (sampler) CreateMessage(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	return nil, nil
}

type everything struct{ sampler }

func (everything) Elicit(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	return nil, nil
}
func (everything) ElicitURL(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	return nil, nil
}
func (everything) ListRoots(context.Context) ([]protocol.Root, error) { return nil, nil }

// listenerOnly implements only notification listeners: no capability.
type listenerOnly struct{}

func (listenerOnly) OnLog(context.Context, *protocol.LoggingMessageParams) {}
func (listenerOnly) OnToolsChanged(context.Context)                        {}

// wrapper hides its inner handler's methods behind Unwrap.
type wrapper struct{ inner any }

func (w wrapper) Unwrap() any { return w.inner }

// TestClientCapabilities: capabilities come only from the handler
// interfaces implemented (seed 000 client_capabilities and its options).
func TestClientCapabilities(t *testing.T) {
	roots := handler.RootsListerFunc(func(context.Context) ([]protocol.Root, error) { return nil, nil })
	tests := []struct {
		name string
		h    any
		opts negotiation.CapabilityOptions
		want string
	}{
		{"nil handler advertises {}", nil, negotiation.CapabilityOptions{}, `{}`},
		{"nil handler with every option advertises {}", nil, negotiation.CapabilityOptions{Era: negotiation.EraLegacy, SamplingTools: true, SamplingContext: true, RootsListChanged: true}, `{}`},
		{"listeners only advertise {}", listenerOnly{}, negotiation.CapabilityOptions{}, `{}`},
		{"non-handler value advertises {}", 42, negotiation.CapabilityOptions{}, `{}`},
		{"sampler", sampler{}, negotiation.CapabilityOptions{}, `{"sampling":{}}`},
		{"sampler with sampling_tools", sampler{}, negotiation.CapabilityOptions{SamplingTools: true}, `{"sampling":{"tools":{}}}`},
		{"sampler with sampling_context", sampler{}, negotiation.CapabilityOptions{SamplingContext: true}, `{"sampling":{"context":{}}}`},
		{"sampler with both", handler.SamplerFunc(nil), negotiation.CapabilityOptions{SamplingTools: true, SamplingContext: true}, `{"sampling":{"context":{},"tools":{}}}`},
		{"elicitor", handler.ElicitorFunc(nil), negotiation.CapabilityOptions{}, `{"elicitation":{"form":{}}}`},
		{"url elicitor", handler.URLElicitorFunc(nil), negotiation.CapabilityOptions{}, `{"elicitation":{"url":{}}}`},
		{"roots modern", roots, negotiation.CapabilityOptions{}, `{"roots":{}}`},
		{"roots modern ignores roots_list_changed", roots, negotiation.CapabilityOptions{RootsListChanged: true}, `{"roots":{}}`},
		{"roots legacy without roots_list_changed", roots, negotiation.CapabilityOptions{Era: negotiation.EraLegacy}, `{"roots":{}}`},
		{"roots legacy with roots_list_changed", roots, negotiation.CapabilityOptions{Era: negotiation.EraLegacy, RootsListChanged: true}, `{"roots":{"listChanged":true}}`},
		{"everything", everything{}, negotiation.CapabilityOptions{SamplingTools: true}, `{"roots":{},"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}}}`},
		{"through an Unwrap chain", wrapper{wrapper{everything{}}}, negotiation.CapabilityOptions{}, `{"roots":{},"sampling":{},"elicitation":{"form":{},"url":{}}}`},
		{"sampling options without a sampler", roots, negotiation.CapabilityOptions{SamplingTools: true, SamplingContext: true}, `{"roots":{}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(negotiation.ClientCapabilities(tc.h, tc.opts))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("ClientCapabilities(%T, %+v) = %s, want %s", tc.h, tc.opts, got, tc.want)
			}
		})
	}
}
