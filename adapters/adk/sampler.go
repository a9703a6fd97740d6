package adkconduit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
)

// Sampler answers a server's sampling requests with an ADK model
// (model.LLM, such as gemini.NewModel's): sampling/createMessage in the
// legacy era and the sampling input requests of the modern era both
// arrive as [Sampler.CreateMessage]. Give it to client.WithHandler (or a
// host's ServerOptions.Handler).
//
// Text, images and audio go to the model as parts. The sampling tools
// of 2025-11-25 are declared as functions and the model's calls come
// back as tool_use blocks.
type Sampler struct {
	// Model answers, with its own credentials and backend.
	Model model.LLM
	// ChooseModel, when set, names the model to ask (LLMRequest.Model)
	// from the server's preferences; Model.Name() when nil or "".
	ChooseModel func(*protocol.ModelPreferences) string
}

var _ handler.Sampler = (*Sampler)(nil)

// ErrNoAnswer: the model's answer held no content.
var ErrNoAnswer = errors.New("adkconduit: the model answered no content")

// CreateMessage asks the model (not streaming). It may block; it may be
// called concurrently. Errors are the model's (an error code of its
// response is an *ModelError), [ErrNoAnswer], or a content the request
// holds that the model cannot take.
func (s *Sampler) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	// maxTokens is cut to the API's 32 bits; below zero it is not passed,
	// as zero is not.
	req := &model.LLMRequest{Model: s.Model.Name(), Config: &genai.GenerateContentConfig{
		MaxOutputTokens: int32(max(0, min(p.MaxTokens, 1<<31-1))), StopSequences: p.StopSequences}}
	if s.ChooseModel != nil {
		if m := s.ChooseModel(p.ModelPreferences); m != "" {
			req.Model = m
		}
	}
	if p.SystemPrompt != "" {
		req.Config.SystemInstruction = genai.NewContentFromText(p.SystemPrompt, genai.RoleUser)
	}
	if p.Temperature != nil {
		t := float32(*p.Temperature)
		req.Config.Temperature = &t
	}
	names := toolset.NewSamplingNames(p.Tools)
	calls := map[string]string{} // tool_use ID → the name of the call
	for _, m := range p.Messages {
		c, err := content(m, names, calls)
		if err != nil {
			return nil, err
		}
		req.Contents = append(req.Contents, c)
	}
	if err := samplingTools(req.Config, p, names); err != nil {
		return nil, err
	}
	var resp *model.LLMResponse
	for r, err := range s.Model.GenerateContent(ctx, req, false) {
		if err != nil {
			return nil, err
		}
		if r != nil && (resp == nil || !r.Partial) {
			resp = r
		}
	}
	if resp != nil && resp.ErrorCode != "" {
		return nil, &ModelError{Code: resp.ErrorCode, Message: resp.ErrorMessage}
	}
	if resp == nil || resp.Content == nil {
		return nil, ErrNoAnswer
	}
	if resp.ModelVersion != "" {
		req.Model = resp.ModelVersion
	}
	return samplingResult(resp, req.Model, names)
}

// ModelError is an error code a model answered in its response.
type ModelError struct {
	Code, Message string
}

func (e *ModelError) Error() string {
	return "adkconduit: the model answered " + e.Code + ": " + e.Message
}

func samplingTools(cfg *genai.GenerateContentConfig, p *protocol.CreateMessageParams, names *toolset.SamplingNames) error {
	tool := &genai.Tool{}
	for i, t := range p.Tools {
		decl, err := toolset.Convert(toolset.Tool{Name: names.Tool(i), Tool: t}, toolset.GeminiJSONSchema)
		if err != nil {
			return err
		}
		fd, err := declaration(decl, toolset.GeminiJSONSchema)
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

// content turns a sampling message into a genai content.
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
				return nil, fmt.Errorf("adkconduit: %s block: %w", b.Type, err)
			}
			parts = append(parts, genai.NewPartFromBytes(data, b.MIMEType))
		case protocol.ContentToolUse:
			var args map[string]any
			_ = json.Unmarshal(b.Input, &args)
			calls[b.ID] = names.Model(b.Name)
			parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: b.ID, Name: calls[b.ID], Args: args}})
		case protocol.ContentToolResult:
			r := (&toolset.Set{}).Result("", &protocol.CallToolResult{Content: b.Content, StructuredContent: b.StructuredContent, IsError: protocol.Bool(b.IsError)})
			key, out := "output", any(r.Text())
			if r.IsError {
				key = "error"
			}
			parts = append(parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: b.ToolUseID, Name: calls[b.ToolUseID], Response: map[string]any{key: out}}})
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

func samplingResult(resp *model.LLMResponse, modelName string, names *toolset.SamplingNames) (*protocol.CreateMessageResult, error) {
	var blocks []protocol.Content
	for _, p := range resp.Content.Parts {
		switch {
		case p == nil:
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
	reason := stopReasons[resp.FinishReason]
	if reason == "" {
		reason = string(resp.FinishReason)
	}
	if len(blocks) == 0 {
		blocks = append(blocks, protocol.TextContent(""))
	} else if blocks[len(blocks)-1].Type == protocol.ContentToolUse {
		reason = protocol.StopReasonToolUse
	}
	var c any = blocks
	if len(blocks) == 1 {
		c = blocks[0]
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Content: raw, Model: modelName, StopReason: reason}, nil
}
