package openaiconduit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
)

// Sampler answers a server's sampling requests with an OpenAI model
// through chat completions: sampling/createMessage in the legacy era and
// the sampling input requests of the modern era both arrive as
// [Sampler.CreateMessage]. Give it to client.WithHandler (or a host's
// ServerOptions.Handler).
//
// Text and images go to the model; audio is described in text. The
// sampling tools of 2025-11-25 are declared as functions and the model's
// calls come back as tool_use blocks.
type Sampler struct {
	// Client sends the requests, with its own credentials and base URL.
	Client *openai.Client
	// Model is the model asked when ChooseModel is nil or returns "".
	Model string
	// ChooseModel, when set, picks the model from the server's
	// preferences (its hints name models loosely, such as "sonnet").
	ChooseModel func(*protocol.ModelPreferences) string
}

var _ handler.Sampler = (*Sampler)(nil)

// CreateMessage asks the model. It may block; it may be called
// concurrently. Errors are the SDK's, or a content the request holds that
// the model cannot take.
func (s *Sampler) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	model := toolset.SamplingModel(s.Model, s.ChooseModel, p.ModelPreferences)
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(model)}
	if p.SystemPrompt != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(p.SystemPrompt))
	}
	names := toolset.NewSamplingNames(p.Tools)
	for _, m := range p.Messages {
		msgs, err := chatMessages(m, names)
		if err != nil {
			return nil, err
		}
		params.Messages = append(params.Messages, msgs...)
	}
	if p.MaxTokens > 0 {
		params.MaxCompletionTokens = param.NewOpt(p.MaxTokens)
	}
	if p.Temperature != nil {
		params.Temperature = param.NewOpt(*p.Temperature)
	}
	if len(p.StopSequences) > 0 {
		params.Stop.OfStringArray = p.StopSequences
	}
	if err := samplingTools(&params, p, names); err != nil {
		return nil, err
	}
	resp, err := s.Client.Chat.Completions.New(ctx, params)
	if err != nil {
		return nil, err
	}
	if len(resp.Choices) == 0 {
		return nil, errors.New("openaiconduit: the model answered no choice")
	}
	return samplingResult(resp, names)
}

// samplingTools declares the request's tools under their names for the
// model.
func samplingTools(params *openai.ChatCompletionNewParams, p *protocol.CreateMessageParams, names *toolset.SamplingNames) error {
	for i, t := range p.Tools {
		name := names.Tool(i)
		d, err := toolset.Convert(toolset.Tool{Name: name, Tool: t}, toolset.OpenAI)
		if err != nil {
			return err
		}
		fn := shared.FunctionDefinitionParam{Name: name, Parameters: parameters(d.Parameters)}
		if d.Description != "" {
			fn.Description = param.NewOpt(d.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if p.ToolChoice != nil && len(p.Tools) > 0 {
		switch p.ToolChoice.Mode {
		case "required", "none", "auto":
			params.ToolChoice.OfAuto = param.NewOpt(p.ToolChoice.Mode)
		}
	}
	return nil
}

// chatMessages turns one sampling message into chat messages: tool
// results become tool messages, tool uses an assistant's tool calls.
func chatMessages(m protocol.SamplingMessage, names *toolset.SamplingNames) ([]openai.ChatCompletionMessageParamUnion, error) {
	blocks, err := m.Blocks()
	if err != nil {
		return nil, err
	}
	var out []openai.ChatCompletionMessageParamUnion
	var parts []openai.ChatCompletionContentPartUnionParam
	var text strings.Builder // a message may hold many thousands of blocks
	var calls []openai.ChatCompletionMessageToolCallUnionParam
	for _, b := range blocks {
		switch b.Type {
		case protocol.ContentText:
			parts = append(parts, openai.TextContentPart(b.Text))
			text.WriteString(b.Text)
		case protocol.ContentImage:
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:" + b.MIMEType + ";base64," + b.Data}))
		case protocol.ContentToolUse:
			calls = append(calls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: b.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: names.Model(b.Name), Arguments: string(b.Input)},
			}})
		case protocol.ContentToolResult:
			out = append(out, openai.ToolMessage(resultText(toolset.BlockResult(b), nil), b.ToolUseID))
		default:
			parts = append(parts, openai.TextContentPart(fmt.Sprintf("[%s content left out]", b.Type)))
		}
	}
	if m.Role == protocol.RoleAssistant {
		a := openai.ChatCompletionAssistantMessageParam{ToolCalls: calls}
		if text.Len() > 0 || len(calls) == 0 {
			a.Content.OfString = param.NewOpt(text.String())
		}
		return append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a}), nil
	}
	if len(parts) > 0 {
		out = append(out, openai.UserMessage(parts))
	}
	return out, nil
}

var stopReasons = map[string]string{
	"stop": protocol.StopReasonEndTurn, "length": protocol.StopReasonMaxTokens, "tool_calls": protocol.StopReasonToolUse,
}

// samplingResult turns the model's answer into the sampling result:
// one text block, or the text and the tool calls as blocks.
func samplingResult(resp *openai.ChatCompletion, names *toolset.SamplingNames) (*protocol.CreateMessageResult, error) {
	choice := resp.Choices[0]
	var blocks []protocol.Content
	if choice.Message.Content != "" || len(choice.Message.ToolCalls) == 0 {
		blocks = append(blocks, protocol.TextContent(choice.Message.Content))
	}
	for _, tc := range choice.Message.ToolCalls {
		fn := tc.AsFunction().Function
		name := names.Server(fn.Name)
		input, err := toolset.SamplingInput(name, fn.Arguments)
		if err != nil {
			return nil, fmt.Errorf("openaiconduit: %w", err)
		}
		blocks = append(blocks, protocol.Content{Type: protocol.ContentToolUse, ID: tc.ID, Name: name, Input: input})
	}
	reason, ok := stopReasons[string(choice.FinishReason)]
	if !ok {
		reason = string(choice.FinishReason)
	}
	return toolset.SamplingResult(resp.Model, reason, blocks)
}
