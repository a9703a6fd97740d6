package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// TestUnansweredKeepsAnswers: an answer that arrives as the caller's
// context ends stays an answer: it never reads "outcome unknown" or "not
// sent"; what the context ended says whether the request was written.
func TestUnansweredKeepsAnswers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var s Session
	answer := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}
	for _, wrote := range []bool{false, true} {
		cs := &callState{method: "tools/call"}
		c := &call{wrote: wrote}
		if err := s.unanswered(ctx, cs, c, answer); err != error(answer) {
			t.Errorf("wrote %v: an answer as ctx ended = %v, want the answer itself", wrote, err)
		}
		err := s.unanswered(ctx, cs, c, ctx.Err())
		if errors.Is(err, ErrOutcomeUnknown) != wrote || errors.Is(err, ErrNotSent) == wrote || !errors.Is(err, context.Canceled) {
			t.Errorf("wrote %v: ctx ended = %v, want ErrOutcomeUnknown %v, ErrNotSent %v, and context.Canceled", wrote, err, wrote, !wrote)
		}
	}
}
