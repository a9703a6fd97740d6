// Package genaiconduit gives MCP tools to Gemini through Google's Gen AI
// Go SDK (google.golang.org/genai, generateContent), and answers MCP
// sampling with a Gemini model.
//
// It is a module of its own, so that Conduit's core does not depend on
// the SDK; its package name is not "genai", so that it does not shadow
// the SDK's. The schemas, names and results come from package
// github.com/conduitmcp/conduit/toolset.
//
//	set, _ := toolset.Load(ctx, toolset.FromHost(h), nil)
//	contents := []*genai.Content{genai.NewContentFromText("…", genai.RoleUser)}
//	for {
//		resp, done, err := genaiconduit.ContentTurn(ctx, client, "gemini-2.5-flash", set, &contents, nil, nil)
//		if err != nil || done { … resp.Text() … }
//	}
//
// # Tools and results
//
// [Tools] declares the set's tools as function declarations: parameters
// in the Schema type (the OpenAPI 3.0 subset, see toolset.Gemini) by
// default, parametersJsonSchema when [Options].JSONSchema is set (see
// toolset.GeminiJSONSchema). [FunctionResponse] turns a result into a
// functionResponse part: {"output": …} (the structured content when
// there is one, else the text) or {"error": …}, images as inline parts of
// the response.
//
// # Concurrency
//
// The functions are safe for concurrent use; a turn runs the model's
// function calls one after the other, in the order the model gave them.
//
// # Errors
//
// A turn fails with the SDK's error when the model cannot be asked, and
// with ctx's error when it is done; a tool call that fails does not fail
// the turn: the model reads why (see toolset.Set.Call).
package genaiconduit
