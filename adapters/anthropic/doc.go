// Package anthropicconduit gives MCP tools to Claude through the
// Anthropic Go SDK (github.com/anthropics/anthropic-sdk-go/v2, the
// messages API), and answers MCP sampling with a Claude model.
//
// It is a module of its own, so that Conduit's core does not depend on
// the SDK; its package name is not "anthropic", so that it does not
// shadow the SDK's. The schemas, names and results come from package
// github.com/conduitmcp/conduit/toolset.
//
//	set, _ := toolset.Load(ctx, toolset.FromHost(h), nil)
//	params := anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet4_5, MaxTokens: 1024, Messages: msgs}
//	for {
//		msg, done, err := anthropicconduit.MessageTurn(ctx, &client, set, &params, nil)
//		if err != nil || done { … msg.Content … }
//	}
//
// # Tools and results
//
// [Tools] declares the set's tools as input_schema tools, strict where
// asked and possible (see toolset.AnthropicStrict). [ToolResult] turns a
// result into a tool_result block: text and image blocks, is_error for a
// tool's error or a call that could not run.
//
// # Concurrency
//
// The functions are safe for concurrent use; a turn runs the model's
// tool calls one after the other, in the order the model gave them, and
// answers them all in one user message, as the messages API requires.
//
// # Errors
//
// A turn fails with the SDK's error when the model cannot be asked, and
// with ctx's error when it is done; a tool call that fails does not fail
// the turn: the model reads why (see toolset.Set.Call).
package anthropicconduit
