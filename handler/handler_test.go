package handler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

// wrap is middleware that hides what it wraps behind Unwrap.
type wrap struct{ inner any }

func (w wrap) Unwrap() any { return w.inner }

// samplingWrap wraps and also implements Sampler itself.
type samplingWrap struct {
	inner any
	tag   string
}

func (w samplingWrap) Unwrap() any { return w.inner }
func (w samplingWrap) CreateMessage(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	return &protocol.CreateMessageResult{Model: w.tag}, nil
}

// cycle unwraps to itself forever and counts the calls.
type cycle struct{ calls *int }

func (c cycle) Unwrap() any { *c.calls++; return c }

// pingPong is a two-element cycle a → b → a.
type pingPong struct {
	next  *pingPong
	calls *int
}

func (p *pingPong) Unwrap() any { *p.calls++; return p.next }

type all struct{}

func (all) CreateMessage(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	return nil, nil
}
func (all) Elicit(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	return nil, nil
}
func (all) ElicitURL(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	return nil, nil
}
func (all) ListRoots(context.Context) ([]protocol.Root, error)    { return nil, nil }
func (all) OnLog(context.Context, *protocol.LoggingMessageParams) {}
func (all) OnToolsChanged(context.Context)                        {}
func (all) OnPromptsChanged(context.Context)                      {}
func (all) OnResourcesChanged(context.Context)                    {}
func (all) OnResourceUpdated(context.Context, string)             {}

// present lists which fields of a Set are non-nil.
func present(s handler.Set) [9]bool {
	return [9]bool{
		s.Sampler != nil, s.Elicitor != nil, s.URLElicitor != nil, s.RootsLister != nil,
		s.LogListener != nil, s.ToolsChanged != nil, s.PromptsChanged != nil,
		s.ResourcesChanged != nil, s.ResourceUpdated != nil,
	}
}

func TestDetect(t *testing.T) {
	everything := [9]bool{true, true, true, true, true, true, true, true, true}
	tests := []struct {
		name string
		h    any
		want [9]bool
	}{
		{"nil", nil, [9]bool{}},
		{"not a handler", 42, [9]bool{}},
		{"all interfaces", all{}, everything},
		{"sampler func", handler.SamplerFunc(nil), [9]bool{0: true}},
		{"elicitor func", handler.ElicitorFunc(nil), [9]bool{1: true}},
		{"url elicitor func", handler.URLElicitorFunc(nil), [9]bool{2: true}},
		{"roots lister func", handler.RootsListerFunc(nil), [9]bool{3: true}},
		{"log listener func", handler.LogListenerFunc(nil), [9]bool{4: true}},
		{"tools changed func", handler.ToolsChangedListenerFunc(nil), [9]bool{5: true}},
		{"prompts changed func", handler.PromptsChangedListenerFunc(nil), [9]bool{6: true}},
		{"resources changed func", handler.ResourcesChangedListenerFunc(nil), [9]bool{7: true}},
		{"resource updated func", handler.ResourceUpdatedListenerFunc(nil), [9]bool{8: true}},
		{"one wrapper", wrap{all{}}, everything},
		{"three wrappers", wrap{wrap{wrap{handler.RootsListerFunc(nil)}}}, [9]bool{3: true}},
		{"wrapper of nil ends the chain", wrap{nil}, [9]bool{}},
		{"methods gathered along the chain", samplingWrap{inner: wrap{handler.ElicitorFunc(nil)}}, [9]bool{0: true, 1: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := present(handler.Detect(tc.h)); got != tc.want {
				t.Errorf("Detect(%T) = %v, want %v", tc.h, got, tc.want)
			}
		})
	}
}

// TestDetectFirstInChainWins: the outermost implementation is the one
// recorded.
func TestDetectFirstInChainWins(t *testing.T) {
	h := samplingWrap{tag: "outer", inner: wrap{samplingWrap{tag: "inner", inner: all{}}}}
	s := handler.Detect(h)
	res, err := s.Sampler.CreateMessage(context.Background(), nil)
	if err != nil || res.Model != "outer" {
		t.Errorf("Detect(chain).Sampler answered %v, %v; want the outer sampler", res, err)
	}
	if s.Elicitor == nil {
		t.Errorf("Detect(chain).Elicitor = nil, want the innermost all{}")
	}
}

// TestDetectCyclicChainBounded: a chain that unwraps to itself, or loops
// through two values, stops after a bounded number of steps.
func TestDetectCyclicChainBounded(t *testing.T) {
	const bound = 100
	t.Run("self cycle", func(t *testing.T) {
		calls := 0
		s := handler.Detect(cycle{calls: &calls})
		if present(s) != [9]bool{} {
			t.Errorf("Detect(cycle) found %v", present(s))
		}
		if calls == 0 || calls > bound {
			t.Errorf("Detect(cycle) called Unwrap %d times, want 1..%d", calls, bound)
		}
	})
	t.Run("two-element cycle", func(t *testing.T) {
		calls := 0
		a := &pingPong{calls: &calls}
		b := &pingPong{calls: &calls, next: a}
		a.next = b
		handler.Detect(a)
		if calls == 0 || calls > bound {
			t.Errorf("Detect(a→b→a) called Unwrap %d times, want 1..%d", calls, bound)
		}
	})
	t.Run("cycle through a sampler is still detected", func(t *testing.T) {
		s := samplingWrap{tag: "x"}
		s.inner = wrap{s}
		if handler.Detect(s).Sampler == nil {
			t.Errorf("Detect(sampling cycle).Sampler = nil")
		}
	})
}

// TestFuncAdapters: each adapter calls its function with its arguments and
// returns what it returns.
func TestFuncAdapters(t *testing.T) {
	type ctxKey struct{}
	ctx := context.WithValue(context.Background(), ctxKey{}, "v")
	errBoom := errors.New("boom")
	fromCtx := func(c context.Context) string { s, _ := c.Value(ctxKey{}).(string); return s }

	cmParams := &protocol.CreateMessageParams{MaxTokens: 5}
	cmRes := &protocol.CreateMessageResult{Model: "m"}
	var s handler.Sampler = handler.SamplerFunc(func(c context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
		if fromCtx(c) != "v" || p != cmParams {
			t.Errorf("SamplerFunc got ctx %q params %p", fromCtx(c), p)
		}
		return cmRes, errBoom
	})
	if r, err := s.CreateMessage(ctx, cmParams); r != cmRes || !errors.Is(err, errBoom) {
		t.Errorf("SamplerFunc.CreateMessage = %v, %v", r, err)
	}

	ep := &protocol.ElicitParams{Message: "q"}
	er := &protocol.ElicitResult{Action: "accept"}
	var e handler.Elicitor = handler.ElicitorFunc(func(c context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		if fromCtx(c) != "v" || p != ep {
			t.Errorf("ElicitorFunc got ctx %q params %p", fromCtx(c), p)
		}
		return er, nil
	})
	if r, err := e.Elicit(ctx, ep); r != er || err != nil {
		t.Errorf("ElicitorFunc.Elicit = %v, %v", r, err)
	}
	var u handler.URLElicitor = handler.URLElicitorFunc(func(c context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		if fromCtx(c) != "v" || p != ep {
			t.Errorf("URLElicitorFunc got ctx %q params %p", fromCtx(c), p)
		}
		return er, errBoom
	})
	if r, err := u.ElicitURL(ctx, ep); r != er || !errors.Is(err, errBoom) {
		t.Errorf("URLElicitorFunc.ElicitURL = %v, %v", r, err)
	}
	roots := []protocol.Root{{URI: "file:///a"}}
	var rl handler.RootsLister = handler.RootsListerFunc(func(c context.Context) ([]protocol.Root, error) {
		if fromCtx(c) != "v" {
			t.Errorf("RootsListerFunc got ctx %q", fromCtx(c))
		}
		return roots, nil
	})
	if r, err := rl.ListRoots(ctx); len(r) != 1 || r[0].URI != "file:///a" || err != nil {
		t.Errorf("RootsListerFunc.ListRoots = %v, %v", r, err)
	}

	var got []string
	lp := &protocol.LoggingMessageParams{Level: "info"}
	var ll handler.LogListener = handler.LogListenerFunc(func(c context.Context, p *protocol.LoggingMessageParams) {
		if p != lp {
			t.Errorf("LogListenerFunc got params %p", p)
		}
		got = append(got, "log:"+fromCtx(c))
	})
	ll.OnLog(ctx, lp)
	var tc handler.ToolsChangedListener = handler.ToolsChangedListenerFunc(func(c context.Context) { got = append(got, "tools:"+fromCtx(c)) })
	tc.OnToolsChanged(ctx)
	var pc handler.PromptsChangedListener = handler.PromptsChangedListenerFunc(func(c context.Context) { got = append(got, "prompts:"+fromCtx(c)) })
	pc.OnPromptsChanged(ctx)
	var rc handler.ResourcesChangedListener = handler.ResourcesChangedListenerFunc(func(c context.Context) { got = append(got, "resources:"+fromCtx(c)) })
	rc.OnResourcesChanged(ctx)
	var ru handler.ResourceUpdatedListener = handler.ResourceUpdatedListenerFunc(func(c context.Context, uri string) { got = append(got, "updated:"+fromCtx(c)+":"+uri) })
	ru.OnResourceUpdated(ctx, "file:///b")
	want := []string{"log:v", "tools:v", "prompts:v", "resources:v", "updated:v:file:///b"}
	if len(got) != len(want) {
		t.Fatalf("listener calls = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("listener call %d = %q, want %q", i, got[i], want[i])
		}
	}
}
