package client

import (
	"context"

	"github.com/conduitmcp/conduit/protocol"
)

// GetPrompt renders prompt name with args (prompts/get). In the modern era
// the server may ask for input first; the handler answers it.
//
// Errors: a [*jsonrpc.Error] from the server (an unknown prompt is
// usually -32602), [ErrClosed], ctx.Err(), session errors, a
// refusal under [CapabilityOptions.Strict], each inside an [*Error].
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...CallOption) (*protocol.GetPromptResult, error) {
	if err := c.require(protocol.MethodPromptsGet, "prompts", c.ServerCapabilities().Prompts != nil); err != nil {
		return nil, err
	}
	cc := c.callOptions(opts)
	if err := cc.optionError(protocol.MethodPromptsGet); err != nil {
		return nil, err
	}
	raw, err := c.call(identityContext(ctx, &cc), protocol.MethodPromptsGet, &protocol.GetPromptParams{Name: name, Arguments: args}, cc.sessionOptions())
	return decoded[protocol.GetPromptResult](protocol.MethodPromptsGet, raw, err)
}

// Complete asks for completions of an argument (completion/complete). ref
// is [protocol.PromptReference] or [protocol.ResourceTemplateReference];
// resolved holds already-chosen arguments (nil for none).
func (c *Client) Complete(ctx context.Context, ref protocol.CompleteReference, arg protocol.CompleteArgument, resolved map[string]string) (*protocol.CompleteResult, error) {
	if err := c.require(protocol.MethodCompletionComplete, "completions", c.ServerCapabilities().Completions != nil); err != nil {
		return nil, err
	}
	p := &protocol.CompleteParams{Ref: ref, Argument: arg}
	if len(resolved) > 0 {
		p.Context = &protocol.CompleteContext{Arguments: resolved}
	}
	raw, err := c.call(ctx, protocol.MethodCompletionComplete, p, nil)
	return decoded[protocol.CompleteResult](protocol.MethodCompletionComplete, raw, err)
}
