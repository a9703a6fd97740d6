package genaiconduit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/genai"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
)

// Sampler answers a server's sampling requests with a Gemini model
// through generateContent: sampling/createMessage in the legacy era and
// the sampling input requests of the modern era both arrive as
// [Sampler.CreateMessage]. Give it to client.WithHandler (or a host's
// ServerOptions.Handler).
//
// Text, images and audio go to the model as parts. The sampling tools
// of 2025-11-25 are declared as functions and the model's calls come
// back as tool_use blocks.
type Sampler struct {
	// Client sends the requests, with its own credentials and backend.
	Client *genai.Client
	// Model is the model asked when ChooseModel is nil or returns "".
	Model string
	// ChooseModel, when set, picks the model from the server's
	// preferences (its hints name models loosely, such as "flash").
	ChooseModel func(*protocol.ModelPreferences) string
}

var _ handler.Sampler = (*Sampler)(nil)

// CreateMessage asks the model. It may block; it may be called
// concurrently. Errors are the SDK's, or a content the request holds
// that the model cannot take.
func (s *Sampler) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	model := toolset.SamplingModel(s.Model, s.ChooseModel, p.ModelPreferences)
	// maxTokens is cut to the API's 32 bits; below zero it is not passed,
	// as zero is not.
	cfg := &genai.GenerateContentConfig{MaxOutputTokens: int32(max(0, min(p.MaxTokens, 1<<31-1))), StopSequences: p.StopSequences}
	if p.SystemPrompt != "" {
		cfg.SystemInstruction = genai.NewContentFromText(p.SystemPrompt, genai.RoleUser)
	}
	if p.Temperature != nil {
		t := float32(*p.Temperature)
		cfg.Temperature = &t
	}
	var contents []*genai.Content
	names := toolset.NewSamplingNames(p.Tools)
	calls := map[string]string{} // tool_use ID → the name of the call
	for _, m := range p.Messages {
		c, err := content(m, names, calls)
		if err != nil {
			return nil, err
		}
		contents = append(contents, c)
	}
	if err := samplingTools(cfg, p, names); err != nil {
		return nil, err
	}
	resp, err := s.Client.Models.GenerateContent(ctx, model, contents, cfg)
	if err != nil {
		return nil, err
	}
	return samplingResult(resp, model, names)
}

func samplingTools(cfg *genai.GenerateContentConfig, p *protocol.CreateMessageParams, names *toolset.SamplingNames) error {
	tool := &genai.Tool{}
	for i, t := range p.Tools {
		decl, err := toolset.Convert(toolset.Tool{Name: names.Tool(i), Tool: t}, toolset.Gemini)
		if err != nil {
			return err
		}
		fd, err := declaration(decl, toolset.Gemini)
		if err != nil {
			return err
		}
		tool.FunctionDeclarations = append(tool.FunctionDeclarations, fd)
	}
	if len(tool.FunctionDeclarations) > 0 {
		cfg.Tools = []*genai.Tool{tool}
		if p.ToolChoice != nil {
			mode := map[string]genai.FunctionCallingConfigMode{"auto": genai.FunctionCallingConfigModeAuto, "required": genai.FunctionCallingConfigModeAny, "none": genai.FunctionCallingConfigModeNone}[p.ToolChoice.Mode]
			if mode != "" {
				cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: mode}}
			}
		}
	}
	return nil
}

// content turns a sampling message into a content of the API.
// The names of its tool_use blocks go into calls, by ID, for the
// functionResponse of the tool_result blocks that follow, which the API
// wants named.
func content(m protocol.SamplingMessage, names *toolset.SamplingNames, calls map[string]string) (*genai.Content, error) {
	blocks, err := m.Blocks()
	if err != nil {
		return nil, err
	}
	var parts []*genai.Part
	for _, b := range blocks {
		switch b.Type {
		case protocol.ContentText:
			parts = append(parts, genai.NewPartFromText(b.Text))
		case protocol.ContentImage, protocol.ContentAudio:
			data, err := base64.StdEncoding.DecodeString(b.Data)
			if err != nil {
				return nil, fmt.Errorf("genaiconduit: %s block: %w", b.Type, err)
			}
			parts = append(parts, genai.NewPartFromBytes(data, b.MIMEType))
		case protocol.ContentToolUse:
			var args map[string]any
			_ = json.Unmarshal(b.Input, &args)
			calls[b.ID] = names.Model(b.Name)
			parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: b.ID, Name: calls[b.ID], Args: args}})
		case protocol.ContentToolResult:
			parts = append(parts, FunctionResponse(&genai.FunctionCall{ID: b.ToolUseID, Name: calls[b.ToolUseID]}, toolset.BlockResult(b)))
		default:
			parts = append(parts, genai.NewPartFromText(fmt.Sprintf("[%s content left out]", b.Type)))
		}
	}
	role := genai.Role(genai.RoleUser)
	if m.Role == protocol.RoleAssistant {
		role = genai.RoleModel
	}
	return genai.NewContentFromParts(parts, role), nil
}

var stopReasons = map[genai.FinishReason]string{genai.FinishReasonStop: protocol.StopReasonEndTurn, genai.FinishReasonMaxTokens: protocol.StopReasonMaxTokens}

func samplingResult(resp *genai.GenerateContentResponse, model string, names *toolset.SamplingNames) (*protocol.CreateMessageResult, error) {
	if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		return nil, errors.New("genaiconduit: the model answered no candidate")
	}
	var blocks []protocol.Content
	for _, p := range resp.Candidates[0].Content.Parts {
		switch {
		case p == nil: // a null part of the answer
		case p.Text != "" && !p.Thought:
			blocks = append(blocks, protocol.TextContent(p.Text))
		case p.FunctionCall != nil:
			input, _ := json.Marshal(p.FunctionCall.Args)
			if p.FunctionCall.Args == nil {
				input = []byte("{}") // a call without arguments
			}
			blocks = append(blocks, protocol.Content{Type: protocol.ContentToolUse, ID: p.FunctionCall.ID, Name: names.Server(p.FunctionCall.Name), Input: input})
		}
	}
	reason := stopReasons[resp.Candidates[0].FinishReason]
	if reason == "" {
		reason = string(resp.Candidates[0].FinishReason)
	}
	if len(blocks) > 0 && blocks[len(blocks)-1].Type == protocol.ContentToolUse {
		reason = protocol.StopReasonToolUse
	}
	if resp.ModelVersion != "" {
		model = resp.ModelVersion
	}
	return toolset.SamplingResult(model, reason, blocks)
}
