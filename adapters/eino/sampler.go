package einoconduit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
)

// Sampler answers a server's sampling requests with an Eino chat model:
// sampling/createMessage in the legacy era and the sampling input
// requests of the modern era both arrive as [Sampler.CreateMessage].
// Give it to client.WithHandler (or a host's ServerOptions.Handler).
//
// Text and images go to the model; other content is described in text.
// The sampling tools of 2025-11-25 are given to the model with
// model.WithTools (in the OpenAI dialect), and its tool calls come back
// as tool_use blocks under the server's names.
type Sampler struct {
	// Model is asked; it answers with its own credentials and settings.
	Model model.BaseChatModel
	// Name is the model's name in the result ("eino" when empty).
	Name string
	// Options, when set, adds options to each request, from the server's
	// preferences (for example model.WithModel picked from its hints).
	Options func(*protocol.CreateMessageParams) []model.Option
}

var _ handler.Sampler = (*Sampler)(nil)

// CreateMessage asks the model. It may block; it may be called
// concurrently when the model may. Errors are the model's, or a content
// the request holds that cannot be given to it.
func (s *Sampler) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	if s.Model == nil {
		return nil, errors.New("einoconduit: Sampler without a Model")
	}
	var msgs []*schema.Message
	if p.SystemPrompt != "" {
		msgs = append(msgs, schema.SystemMessage(p.SystemPrompt))
	}
	names := toolset.NewSamplingNames(p.Tools)
	for _, m := range p.Messages {
		ms, err := messages(m, names)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, ms...)
	}
	opts, err := samplingOptions(p, names)
	if err != nil {
		return nil, err
	}
	if s.Options != nil {
		opts = append(opts, s.Options(p)...)
	}
	out, err := s.Model.Generate(ctx, msgs, opts...)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, errors.New("einoconduit: the model answered no message")
	}
	name := s.Name
	if name == "" {
		name = "eino"
	}
	return samplingResult(out, names, name)
}

// samplingOptions are the request's settings and tools, under their
// names for the model, as model options.
func samplingOptions(p *protocol.CreateMessageParams, names *toolset.SamplingNames) ([]model.Option, error) {
	var opts []model.Option
	if p.MaxTokens > 0 {
		opts = append(opts, model.WithMaxTokens(int(p.MaxTokens)))
	}
	if p.Temperature != nil {
		opts = append(opts, model.WithTemperature(float32(*p.Temperature)))
	}
	if len(p.StopSequences) > 0 {
		opts = append(opts, model.WithStop(p.StopSequences))
	}
	if len(p.Tools) == 0 {
		return opts, nil
	}
	infos := make([]*schema.ToolInfo, 0, len(p.Tools))
	for i, t := range p.Tools {
		d, err := toolset.Convert(toolset.Tool{Name: names.Tool(i), Tool: t}, toolset.OpenAI)
		if err != nil {
			return nil, err
		}
		info, err := toolInfo(d, toolset.OpenAI)
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	opts = append(opts, model.WithTools(infos))
	if p.ToolChoice != nil {
		switch p.ToolChoice.Mode {
		case "required":
			opts = append(opts, model.WithToolChoice(schema.ToolChoiceForced))
		case "none":
			opts = append(opts, model.WithToolChoice(schema.ToolChoiceForbidden))
		case "auto":
			opts = append(opts, model.WithToolChoice(schema.ToolChoiceAllowed))
		}
	}
	return opts, nil
}

// messages turns one sampling message into Eino messages: tool results
// become tool messages, tool uses an assistant's tool calls.
func messages(m protocol.SamplingMessage, names *toolset.SamplingNames) ([]*schema.Message, error) {
	blocks, err := m.Blocks()
	if err != nil {
		return nil, err
	}
	var out []*schema.Message
	var parts []schema.MessageInputPart
	var text strings.Builder // a message may hold many thousands of blocks
	var calls []schema.ToolCall
	for _, b := range blocks {
		switch b.Type {
		case protocol.ContentText:
			parts = append(parts, schema.MessageInputPart{Type: schema.ChatMessagePartTypeText, Text: b.Text})
			text.WriteString(b.Text)
		case protocol.ContentImage:
			data := b.Data
			parts = append(parts, schema.MessageInputPart{Type: schema.ChatMessagePartTypeImageURL, Image: &schema.MessageInputImage{
				MessagePartCommon: schema.MessagePartCommon{Base64Data: &data, MIMEType: b.MIMEType}}})
		case protocol.ContentToolUse:
			calls = append(calls, schema.ToolCall{ID: b.ID, Type: "function",
				Function: schema.FunctionCall{Name: names.Model(b.Name), Arguments: string(b.Input)}})
		case protocol.ContentToolResult:
			r := (&toolset.Set{}).Result("", &protocol.CallToolResult{Content: b.Content, StructuredContent: b.StructuredContent, IsError: protocol.Bool(b.IsError)})
			content := r.Text()
			if r.IsError {
				content = errorPrefix + content
			}
			out = append(out, schema.ToolMessage(content, b.ToolUseID))
		default:
			desc := fmt.Sprintf("[%s content left out]", b.Type)
			parts = append(parts, schema.MessageInputPart{Type: schema.ChatMessagePartTypeText, Text: desc})
			text.WriteString(desc)
		}
	}
	if m.Role == protocol.RoleAssistant {
		return append(out, schema.AssistantMessage(text.String(), calls)), nil
	}
	switch {
	case len(parts) == 1 && parts[0].Type == schema.ChatMessagePartTypeText:
		out = append(out, schema.UserMessage(parts[0].Text))
	case len(parts) > 0:
		out = append(out, &schema.Message{Role: schema.User, UserInputMultiContent: parts})
	}
	return out, nil
}

var stopReasons = map[string]string{
	"stop": protocol.StopReasonEndTurn, "length": protocol.StopReasonMaxTokens, "tool_calls": protocol.StopReasonToolUse,
}

// samplingResult turns the model's answer into the sampling result: one
// text block, or the text and the tool calls as blocks.
func samplingResult(out *schema.Message, names *toolset.SamplingNames, model string) (*protocol.CreateMessageResult, error) {
	var blocks []protocol.Content
	if out.Content != "" || len(out.ToolCalls) == 0 {
		blocks = append(blocks, protocol.TextContent(out.Content))
	}
	for _, tc := range out.ToolCalls {
		name := names.Server(tc.Function.Name)
		input, err := toolset.SamplingInput(name, tc.Function.Arguments)
		if err != nil {
			return nil, fmt.Errorf("einoconduit: %w", err)
		}
		blocks = append(blocks, protocol.Content{Type: protocol.ContentToolUse, ID: tc.ID, Name: name, Input: input})
	}
	reason := protocol.StopReasonEndTurn
	if len(out.ToolCalls) > 0 {
		reason = protocol.StopReasonToolUse
	}
	if out.ResponseMeta != nil && out.ResponseMeta.FinishReason != "" {
		if r, ok := stopReasons[out.ResponseMeta.FinishReason]; ok {
			reason = r
		} else {
			reason = out.ResponseMeta.FinishReason
		}
	}
	var content any = blocks
	if len(blocks) == 1 {
		content = blocks[0]
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Content: raw, Model: model, StopReason: reason}, nil
}
