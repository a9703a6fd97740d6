package toolset

import (
	"context"
	"encoding/json"
	"errors"

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
