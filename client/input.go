package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/protocol"
)

// WithMaxInputRounds caps the modern multi-round-trip (MRTR) rounds of
// one tools/call, prompts/get or resources/read, and the rounds of input
// a task of the tasks extension asks for while [Client.AwaitTask] (or a
// task-augmented call) follows it: a call that needs more fails with an
// [*Error] of kind [KindProtocol], before the handler is asked again. Zero or negative selects
// the default, 10. Rounds continued by [Client.Resume] count from where
// the stored call stopped.
func WithMaxInputRounds(n int) Option {
	return optionFunc(func(c *config) { c.maxInputRounds = max(n, 0) })
}

// WithManualInput(true) makes the call hand its pending input requests
// back to the caller instead of asking the handler: the call ends with an
// [*Error] wrapping an [*InputRequired] (errors.As finds it), and
// [Client.Resume] continues it with the answers. The capabilities
// advertised are still those the handler declares: a handler that
// implements handler.Elicitor, say, tells the server that elicitation may
// be asked, and manual calls then answer it themselves.
//
// Modern era (tools/call, prompts/get, resources/read): the
// InputRequired holds everything the retry needs; store it (it encodes as
// JSON, requestState byte for byte) and resume it later on this or
// another client of the same server, in this or another process.
//
// Legacy era: a server asks with a request that must be answered on the
// live connection, so nothing can be stored. While the manual call is in
// flight, the server's sampling, elicitation and roots requests are held
// and handed to its caller (to the oldest manual call in flight: over
// stdio a request names no call), keyed by their JSON-RPC ids as text (a
// string id as it is, "srv-1", not the JSON "\"srv-1\""; an integer id
// as its digits); the call
// goes on in the background, and Resume, on the same client with that
// same InputRequired, answers them (a key left out is answered with an
// error) and waits for the call again. A held request gets an error
// answer, and the call is cancelled, when Resume does not come within
// five minutes or when the caller's context ends while it waits. An
// InputRequired decoded from JSON is not live: resuming it in the legacy
// era fails with kind [KindUnsupported]. Default: false.
func WithManualInput(manual bool) CallOption {
	return callOptionFunc(func(c *callConfig) { c.manual = manual })
}

// InputRequired is the state of a modern call that stopped for input
// (see [WithManualInput]). It holds everything the retry needs, so it may
// be stored and resumed later, elsewhere: encoding/json round-trips it,
// and RequestState is kept byte for byte (it is the server's, opaque).
type InputRequired struct {
	// Method is the method of the call (tools/call, prompts/get or
	// resources/read) and Params the params the caller sent.
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	// Requests are the server's input requests, by the server's keys.
	// Answer each with the result its method defines:
	// *protocol.ElicitResult, *protocol.CreateMessageResult or
	// *protocol.ListRootsResult.
	Requests map[string]protocol.InputRequest `json:"inputRequests"`
	// RequestState is the server's requestState (a JSON string), nil when
	// it sent none.
	RequestState json.RawMessage `json:"requestState,omitempty"`
	// Round is the number of input rounds so far, this one included.
	Round int `json:"round"`

	held *engine.InputRequiredError // legacy: the live call holding the requests
}

func (e *InputRequired) Error() string {
	return fmt.Sprintf("client: %s needs input (%d request(s), round %d)", e.Method, len(e.Requests), e.Round)
}

// inputRequired turns the engine's pending input into an *InputRequired;
// other errors are returned as they are (a -32042 answer is already a
// *protocol.URLElicitationRequiredError: a client whose handler
// implements handler.URLElicitor first shows the URLs, waits for
// notifications/elicitation/complete, bounded by the call's context and
// five minutes, and retries once).
func inputRequired(err error) error {
	p, ok := errors.AsType[*engine.InputRequiredError](err)
	if !ok {
		return err
	}
	e := &InputRequired{Method: p.Method, Params: p.Params, RequestState: p.RequestState, Round: p.Round,
		Requests: make(map[string]protocol.InputRequest, len(p.Requests))}
	if p.Live() {
		e.held = p
	}
	for k, r := range p.Requests {
		e.Requests[k] = protocol.InputRequest{Method: r.Method, Params: r.Params}
	}
	return e
}

// Resume continues the call that stopped with p, sending answers (by the
// keys of p.Requests; each value is marshalled, a json.RawMessage is sent
// as it is) and decodes the final result into result unless it is nil
// (for example a *protocol.CallToolResult for tools/call). In the modern
// era p's requestState goes with the answers and a key left out is one
// the server may ask again; in the legacy era the answers go to the held
// server requests (see [WithManualInput]). Give [WithManualInput] again
// to have a later modern round stop again with a new [*InputRequired];
// without it the handler answers it (a legacy manual call keeps handing
// back the requests of its server while it runs).
func (c *Client) Resume(ctx context.Context, p *InputRequired, answers map[string]any, result any, opts ...CallOption) error {
	op := "resume"
	if p == nil {
		return newError(op, KindInvalid, "no pending call to resume")
	}
	op = p.Method
	raw := make(map[string]json.RawMessage, len(answers))
	for k, a := range answers {
		b, err := marshalJSON(a)
		if err != nil {
			return newError(op, KindInvalid, "encoding the answer to %s: %w", strconv.Quote(k), err)
		}
		raw[k] = b
	}
	ep := p.held
	if ep == nil {
		ep = &engine.InputRequiredError{Method: p.Method, Params: p.Params, RequestState: p.RequestState, Round: p.Round,
			Requests: make(map[string]engine.PendingRequest, len(p.Requests))}
		for k, r := range p.Requests {
			ep.Requests[k] = engine.PendingRequest{Method: r.Method, Params: r.Params}
		}
	}
	cc := c.callOptions(opts)
	if err := cc.optionError(op); err != nil {
		return err
	}
	res, err := c.sess.Resume(identityContext(ctx, &cc), ep, raw, cc.sessionOptions())
	if err != nil {
		if errors.Is(err, engine.ErrNotModern) {
			// A legacy InputRequired that is not live: decoded from JSON,
			// copied, or from another client.
			return &Error{Op: op, Kind: KindUnsupported, Err: withKindSentinels(KindUnsupported, errNotLive)}
		}
		if errors.Is(err, engine.ErrInvalidResume) {
			return &Error{Op: op, Kind: KindInvalid, Err: err}
		}
		return c.fail(op, inputRequired(err))
	}
	if result == nil {
		return nil
	}
	return decode(op, res, result)
}

// errNotLive is why a legacy [*InputRequired] that is not live cannot be
// resumed.
var errNotLive = errors.New("a legacy server's request can only be answered on its live connection, and this InputRequired is not live (it was decoded or copied, or another client made it): call again")

// marshalJSON encodes v; a json.RawMessage or []byte is taken as JSON
// text and checked.
func marshalJSON(v any) (json.RawMessage, error) {
	switch b := v.(type) {
	case json.RawMessage:
		if !json.Valid(b) {
			return nil, errors.New("not valid JSON")
		}
		return b, nil
	case []byte:
		if !json.Valid(b) {
			return nil, errors.New("not valid JSON")
		}
		return b, nil
	}
	return json.Marshal(v)
}
