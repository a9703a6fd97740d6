package anthropicconduit

import (
	"context"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
)

// Sampler answers a server's sampling requests with a Claude model
// through the messages API: sampling/createMessage in the legacy era and
// the sampling input requests of the modern era both arrive as
// [Sampler.CreateMessage]. Give it to client.WithHandler (or a host's
// ServerOptions.Handler).
//
// Text and images go to the model; audio is described in text; the
// request's temperature is not passed (the SDK's v2 has no such field). The
// sampling tools of 2025-11-25 are declared as tools and the model's
// tool_use blocks come back as tool_use blocks.
type Sampler struct {
	// Client sends the requests, with its own credentials and base URL.
	Client *anthropic.Client
	// Model is the model asked when ChooseModel is nil or returns "".
	Model string
	// ChooseModel, when set, picks the model from the server's
	// preferences (its hints name models loosely, such as "sonnet").
	ChooseModel func(*protocol.ModelPreferences) string
}

var _ handler.Sampler = (*Sampler)(nil)

// CreateMessage asks the model. It may block; it may be called
// concurrently. Errors are the SDK's, a content the request holds that
// the model cannot take, or a tool_use of the model whose input is not a
// JSON object (wrapping toolset.ErrInvalidArguments).
func (s *Sampler) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	model := toolset.SamplingModel(s.Model, s.ChooseModel, p.ModelPreferences)
	params := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: p.MaxTokens, StopSequences: p.StopSequences}
	if p.SystemPrompt != "" {
		params.System = []anthropic.TextBlockParam{{Text: p.SystemPrompt}}
	}
	names := toolset.NewSamplingNames(p.Tools)
	for _, m := range p.Messages {
		mp, err := messageParam(m, names)
		if err != nil {
			return nil, err
		}
		params.Messages = append(params.Messages, mp)
	}
	for i, t := range p.Tools {
		decl, err := toolset.Convert(toolset.Tool{Name: names.Tool(i), Tool: t}, toolset.Anthropic)
		if err != nil {
			return nil, err
		}
		params.Tools = append(params.Tools, toolParam(decl))
	}
	if p.ToolChoice != nil && len(p.Tools) > 0 {
		switch p.ToolChoice.Mode {
		case "auto":
			params.ToolChoice.OfAuto = &anthropic.ToolChoiceAutoParam{}
		case "required":
			params.ToolChoice.OfAny = &anthropic.ToolChoiceAnyParam{}
		case "none":
			params.ToolChoice.OfNone = &anthropic.ToolChoiceNoneParam{}
		}
	}
	msg, err := s.Client.Messages.New(ctx, params)
	if err != nil {
		return nil, err
	}
	return samplingResult(msg, names)
}

// messageParam turns a sampling message into a message of the API.
func messageParam(m protocol.SamplingMessage, names *toolset.SamplingNames) (anthropic.MessageParam, error) {
	blocks, err := m.Blocks()
	if err != nil {
		return anthropic.MessageParam{}, err
	}
	var out []anthropic.ContentBlockParamUnion
	for _, b := range blocks {
		switch b.Type {
		case protocol.ContentText:
			out = append(out, anthropic.NewTextBlock(b.Text))
		case protocol.ContentImage:
			out = append(out, anthropic.NewImageBlockBase64(b.MIMEType, b.Data))
		case protocol.ContentToolUse:
			out = append(out, anthropic.NewToolUseBlock(b.ID, b.Input, names.Model(b.Name)))
		case protocol.ContentToolResult:
			out = append(out, ToolResult(b.ToolUseID, toolset.BlockResult(b)))
		default:
			out = append(out, anthropic.NewTextBlock(fmt.Sprintf("[%s content left out]", b.Type)))
		}
	}
	if m.Role == protocol.RoleAssistant {
		return anthropic.NewAssistantMessage(out...), nil
	}
	return anthropic.NewUserMessage(out...), nil
}

var stopReasons = map[anthropic.StopReason]string{
	"end_turn": protocol.StopReasonEndTurn, "max_tokens": protocol.StopReasonMaxTokens,
	"stop_sequence": protocol.StopReasonStopSequence, "tool_use": protocol.StopReasonToolUse,
}

// samplingResult turns the model's message into the sampling result: one
// block, or the blocks of text and tool_use.
func samplingResult(msg *anthropic.Message, names *toolset.SamplingNames) (*protocol.CreateMessageResult, error) {
	var blocks []protocol.Content
	for _, c := range msg.Content {
		switch c.Type {
		case "text":
			blocks = append(blocks, protocol.TextContent(c.Text))
		case "tool_use":
			name := names.Server(c.Name)
			input, err := toolset.SamplingInput(name, string(c.Input))
			if err != nil {
				return nil, fmt.Errorf("anthropicconduit: %w", err)
			}
			blocks = append(blocks, protocol.Content{Type: protocol.ContentToolUse, ID: c.ID, Name: name, Input: input})
		}
	}
	reason, ok := stopReasons[msg.StopReason]
	if !ok {
		reason = string(msg.StopReason)
	}
	return toolset.SamplingResult(string(msg.Model), reason, blocks)
}
