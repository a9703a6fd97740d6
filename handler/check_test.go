package handler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

// ptrSampler has CreateMessage on the pointer type only.
type ptrSampler struct{}

func (*ptrSampler) CreateMessage(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	return nil, nil
}

// typo misspells ListRoots.
type typo struct{}

func (typo) ListRoot(context.Context) ([]protocol.Root, error) { return nil, nil }

// wrapper has an Unwrap chain to an inner value.
type wrapper struct{ inner any }

func (w wrapper) Unwrap() any { return w.inner }

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		h    any
		want []string // substrings of the error; nil means no error
	}{
		{"nil", nil, nil},
		{"pointer", &ptrSampler{}, nil},
		{"func adapter", handler.SamplerFunc(nil), nil},
		{"funcs with a field", handler.Funcs{OnLog: func(context.Context, *protocol.LoggingMessageParams) {}}, nil},
		{"wrapped pointer", wrapper{&ptrSampler{}}, nil},
		{"value with pointer methods", ptrSampler{}, []string{"handler_test.ptrSampler has none of the methods", "CreateMessage (Sampler)",
			"*handler_test.ptrSampler implements Sampler", "pass a pointer"}},
		{"typo", typo{}, []string{"ListRoots (RootsLister)", "OnResourceUpdated (ResourceUpdatedListener)", "method names"}},
		{"empty funcs", handler.Funcs{}, []string{"handler.Funcs has none"}},
		{"nil funcs pointer", (*handler.Funcs)(nil), []string{"nil *handler.Funcs"}},
		{"wrapped value with pointer methods", wrapper{ptrSampler{}}, []string{"handler_test.wrapper has none",
			"*handler_test.ptrSampler implements Sampler"}},
		{"a string", "sampler", []string{"string has none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := handler.Check(tt.h)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, handler.ErrNoInterface) {
				t.Fatalf("Check = %v, want ErrNoInterface", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Check = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestDetectFuncs: a Funcs implements exactly the interfaces whose fields
// are set, directly, through a pointer and through an Unwrap chain.
func TestDetectFuncs(t *testing.T) {
	f := handler.Funcs{
		CreateMessage: func(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return nil, nil
		},
		OnToolsChanged: func(context.Context) {},
	}
	for name, h := range map[string]any{"value": f, "pointer": &f, "wrapped": wrapper{f}} {
		s := handler.Detect(h)
		if s.Sampler == nil || s.ToolsChanged == nil {
			t.Errorf("%s: Detect = %+v, want Sampler and ToolsChanged", name, s)
		}
		if s.Elicitor != nil || s.URLElicitor != nil || s.RootsLister != nil || s.LogListener != nil ||
			s.PromptsChanged != nil || s.ResourcesChanged != nil || s.ResourceUpdated != nil {
			t.Errorf("%s: Detect = %+v, want nothing else", name, s)
		}
	}
	if s := handler.Detect(handler.Funcs{}); s != (handler.Set{}) {
		t.Errorf("Detect(Funcs{}) = %+v, want the zero Set", s)
	}
}
