// Package openaiconduit gives MCP tools to models through the OpenAI Go
// SDK (github.com/openai/openai-go/v3), for chat completions and for the
// responses API, and answers MCP sampling with an OpenAI model.
//
// It is a module of its own, so that Conduit's core does not depend on
// the SDK; its package name is not "openai", so that it does not shadow
// the SDK's. The schemas, names and results come from package
// github.com/conduitmcp/conduit/toolset.
//
//	set, _ := toolset.Load(ctx, toolset.FromHost(h), nil)
//	params := openai.ChatCompletionNewParams{Model: openai.ChatModelGPT5, Messages: msgs}
//	for {
//		resp, done, err := openaiconduit.ChatTurn(ctx, &client, set, &params, nil)
//		if err != nil || done { … resp.Choices[0].Message.Content … }
//	}
//
// # Tools
//
// [ChatTools] and [ResponseTools] declare the set's tools in the SDK's
// types, in the OpenAI dialect, or the strict one when asked ([Options]);
// a tool that strict mode cannot express is declared non-strict (see
// toolset.OpenAIStrict).
//
// # Results
//
// Chat completions take only text in a tool message: a result's images
// become short notes there. The responses API takes text and images in a
// function_call_output: images go as data URLs. OpenAI has no error flag
// on tool results: a failed call's text says so.
//
// # Concurrency
//
// The functions are safe for concurrent use; a turn runs the model's
// tool calls one after the other, in the order the model gave them.
//
// # Errors
//
// A turn fails with the SDK's error when the model cannot be asked, and
// with ctx's error when it is done; a tool call that fails does not fail
// the turn: the model reads why (see toolset.Set.Call).
package openaiconduit
