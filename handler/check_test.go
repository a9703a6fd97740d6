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

// wrongSig has ListRoots without the error result.
type wrongSig struct{}

func (wrongSig) ListRoots(context.Context) []protocol.Root { return nil }

// typoBeside has a right OnLog and a misspelt OnToolsChanged.
type typoBeside struct{}

func (typoBeside) OnLog(context.Context, *protocol.LoggingMessageParams) {}
func (typoBeside) OnToolChanged(context.Context)                         {}

// caseTypo has ListRoots in the wrong case.
type caseTypo struct{}

func (caseTypo) Listroots(context.Context) ([]protocol.Root, error) { return nil, nil }

// ptrBeside has OnLog on the value and ListRoots on the pointer.
type ptrBeside struct{}

func (ptrBeside) OnLog(context.Context, *protocol.LoggingMessageParams) {}
func (*ptrBeside) ListRoots(context.Context) ([]protocol.Root, error)   { return nil, nil }

// others has OnLog and methods that are not near any handler method.
type others struct{}

func (others) OnLog(context.Context, *protocol.LoggingMessageParams) {}
func (others) Log(string)                                            {}
func (others) Close() error                                          { return nil }
func (others) ListTools() []string                                   { return nil }

func TestCheck(t *testing.T) {
	tests := []struct {
		name           string
		h              any
		none, mismatch bool
		want           []string // substrings of the error; nil means no error
	}{
		{"nil", nil, false, false, nil},
		{"pointer", &ptrSampler{}, false, false, nil},
		{"func adapter", handler.SamplerFunc(nil), false, false, nil},
		{"funcs with a field", handler.Funcs{OnLog: func(context.Context, *protocol.LoggingMessageParams) {}}, false, false, nil},
		{"wrapped pointer", wrapper{&ptrSampler{}}, false, false, nil},
		{"other methods", others{}, false, false, nil},
		{"value with pointer methods", ptrSampler{}, true, true, []string{"handler_test.ptrSampler implements none",
			"*handler_test.ptrSampler implements Sampler (its CreateMessage has a pointer receiver): pass a pointer"}},
		{"typo", typo{}, true, true, []string{"ListRoot looks like a misspelling of ListRoots (RootsLister)"}},
		{"typo beside a right method", typoBeside{}, false, true, []string{
			"handler: handler_test.typoBeside: OnToolChanged looks like a misspelling of OnToolsChanged (ToolsChangedListener)"}},
		{"case typo", caseTypo{}, true, true, []string{"Listroots looks like a misspelling of ListRoots"}},
		{"wrong signature", wrongSig{}, true, true, []string{
			"ListRoots has the wrong signature for RootsLister: func(context.Context) []protocol.Root, want func(context.Context) ([]protocol.Root, error)"}},
		{"pointer method beside a value method", ptrBeside{}, false, true, []string{"*handler_test.ptrBeside implements RootsLister", "pass a pointer"}},
		{"empty funcs", handler.Funcs{}, true, false, []string{"handler.Funcs implements none", "no field of the handler.Funcs is set"}},
		{"empty funcs pointer", &handler.Funcs{}, true, false, []string{"no field of the handler.Funcs is set"}},
		{"nil funcs pointer", (*handler.Funcs)(nil), true, false, []string{"*handler.Funcs implements none of the handler interfaces: it is nil"}},
		{"wrapped value with pointer methods", wrapper{ptrSampler{}}, true, true, []string{"handler_test.wrapper implements none",
			"*handler_test.ptrSampler implements Sampler"}},
		{"a string", "sampler", true, false, []string{"string implements none", "CreateMessage, Elicit", "handler.Funcs"}},
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
			if errors.Is(err, handler.ErrNoInterface) != tt.none || errors.Is(err, handler.ErrMethodMismatch) != tt.mismatch {
				t.Fatalf("Check = %v: matches ErrNoInterface %v, ErrMethodMismatch %v; want %v, %v", err,
					errors.Is(err, handler.ErrNoInterface), errors.Is(err, handler.ErrMethodMismatch), tt.none, tt.mismatch)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Check = %q, want it to contain %q", err, w)
				}
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 300 {
				t.Errorf("Check = %q: want one line of at most 300 characters", msg)
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

// nilFuncsWrapper is a wrapper whose Unwrap chain ends in a nil *Funcs.
type nilFuncsWrapper struct{}

func (nilFuncsWrapper) Unwrap() any { return (*handler.Funcs)(nil) }

// TestCheckNilFuncsInChain: a nil *Funcs inside an Unwrap chain (not
// only as the handler itself) is reported, not dereferenced: Check, and
// so the client's Connect, does not panic on it.
func TestCheckNilFuncsInChain(t *testing.T) {
	err := handler.Check(nilFuncsWrapper{})
	if !errors.Is(err, handler.ErrNoInterface) || !strings.Contains(err.Error(), "nil *handler.Funcs") {
		t.Errorf("Check = %v, want an error matching ErrNoInterface naming the nil *handler.Funcs", err)
	}
}
