package toolset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/conduitmcp/conduit/protocol"
)

// This file holds what the adapters' samplers and tool loops share.

// SamplingModel returns the model a sampler asks: what choose picks from
// the server's preferences, or model when choose is nil or picks "".
func SamplingModel(model string, choose func(*protocol.ModelPreferences) string, prefs *protocol.ModelPreferences) string {
	if choose != nil {
		if m := choose(prefs); m != "" {
			return m
		}
	}
	return model
}

// SamplingResult is the answer to a sampling request from the blocks the
// model produced: one block alone (what every protocol version takes),
// several as an array (2025-11-25 and later); no block is an empty text.
func SamplingResult(model, stopReason string, blocks []protocol.Content) (*protocol.CreateMessageResult, error) {
	var content any = blocks
	switch len(blocks) {
	case 0:
		content = protocol.TextContent("")
	case 1:
		content = blocks[0]
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Content: raw, Model: model, StopReason: stopReason}, nil
}

// SamplingInput is the input of a tool_use block from the arguments a
// model gave its call of tool as text: blank is {} (a call without
// arguments); anything but a JSON object is an error wrapping
// [ErrInvalidArguments], so that the sampling request fails where the
// server would otherwise run its tool with arguments the model did not
// give.
func SamplingInput(tool, args string) (json.RawMessage, error) {
	raw := bytes.TrimSpace([]byte(args))
	if len(raw) == 0 {
		return json.RawMessage("{}"), nil
	}
	if raw[0] != '{' || !json.Valid(raw) {
		return nil, fmt.Errorf("the model's call of %q: %w: %.200q", tool, ErrInvalidArguments, args)
	}
	return raw, nil
}

// SamplingNames maps the names of a sampling request's tools to names a
// model takes, as [Load] names a Set's tools: each fits every provider
// and is unique, also when two of the server's names differ only in
// characters providers refuse ("get.weather" and "get_weather") or are
// the same. The zero value maps no tool.
type SamplingNames struct {
	names  []string          // the model's name of each tool of the request
	model  map[string]string // the server's name → the model's (its first tool of that name)
	server map[string]string // the model's name → the server's
}

// NewSamplingNames names tools, the tools of a sampling request.
func NewSamplingNames(tools []protocol.Tool) *SamplingNames {
	n := &SamplingNames{model: map[string]string{}, server: map[string]string{}}
	nm := newNamer()
	for i, t := range tools {
		name := nm.name(t.Name, strconv.Itoa(i)+"\x00"+t.Name)
		n.names = append(n.names, name)
		n.server[name] = t.Name
		if _, ok := n.model[t.Name]; !ok {
			n.model[t.Name] = name
		}
	}
	return n
}

// Tool returns the model's name of the request's i-th tool.
func (n *SamplingNames) Tool(i int) string { return n.names[i] }

// Model returns the model's name of the server's tool name, for the
// tool_use blocks of the request's messages; [SanitizeName] of it when
// it is not among the request's tools.
func (n *SamplingNames) Model(server string) string {
	if m, ok := n.model[server]; ok {
		return m
	}
	return SanitizeName(server)
}

// Server returns the server's name of the tool the model called name;
// name itself when the request has no such tool.
func (n *SamplingNames) Server(name string) string {
	if s, ok := n.server[name]; ok {
		return s
	}
	return name
}

// BlockResult turns a tool_result block of a sampling message into a
// [Result] under the default bounds.
func BlockResult(b protocol.Content) *Result {
	return (&Set{}).result("", &protocol.CallToolResult{Content: b.Content, StructuredContent: b.StructuredContent, IsError: protocol.Bool(b.IsError)})
}

// Stopped reports whether err, from [Set.Call], ends a tool loop: ctx is
// done. Other errors are the model's to read.
func Stopped(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
