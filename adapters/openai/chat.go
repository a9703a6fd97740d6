package openaiconduit

import (
	"context"

	"github.com/openai/openai-go/v3"

	"github.com/conduitmcp/conduit/toolset"
)

// errorPrefix starts the text of a tool's own error, since OpenAI's tool
// results have no error flag.
const errorPrefix = "The tool reported an error:\n"

// resultText is a result as the text of a tool message.
func resultText(r *toolset.Result, callErr error) string {
	text := r.Text()
	if r.IsError && callErr == nil {
		return errorPrefix + text
	}
	return text
}

// ChatToolMessages runs the function calls of msg (a chat completion's
// message) through set and returns the tool messages that answer them,
// in order: one for every call, as the API requires of a conversation.
// The error is ctx's, when it ended the calls; the call it cut and the
// calls after it, not run, are then answered with that error.
func ChatToolMessages(ctx context.Context, set *toolset.Set, msg openai.ChatCompletionMessage) ([]openai.ChatCompletionMessageParamUnion, error) {
	var out []openai.ChatCompletionMessageParamUnion
	var stopped error
	for _, tc := range msg.ToolCalls {
		switch {
		case stopped != nil:
			out = append(out, openai.ToolMessage("The call was not run: "+ctx.Err().Error(), tc.ID))
		case tc.Type != "function":
			out = append(out, openai.ToolMessage("Only function tools exist here.", tc.ID))
		default:
			fn := tc.AsFunction().Function
			res, err := set.Call(ctx, fn.Name, fn.Arguments)
			if toolset.Stopped(ctx, err) {
				stopped = err
			}
			out = append(out, openai.ToolMessage(resultText(res, err), tc.ID))
		}
	}
	return out, stopped
}

// ChatTurn runs one turn of the tool loop on chat completions: it asks
// the model with params (the set's tools declared when params.Tools is
// empty), appends the model's message to params.Messages and, when the
// model called tools, runs them and appends the results. done reports
// that the model called none: its answer is the completion's message.
func ChatTurn(ctx context.Context, client *openai.Client, set *toolset.Set, params *openai.ChatCompletionNewParams, o *Options) (resp *openai.ChatCompletion, done bool, err error) {
	if len(params.Tools) == 0 {
		// A schema error leaves a tool out; the others are declared.
		params.Tools, _ = ChatTools(set, o)
	}
	resp, err = client.Chat.Completions.New(ctx, *params)
	if err != nil {
		return nil, false, err
	}
	if len(resp.Choices) == 0 {
		return resp, true, nil
	}
	msg := resp.Choices[0].Message
	params.Messages = append(params.Messages, msg.ToParam())
	if len(msg.ToolCalls) == 0 {
		return resp, true, nil
	}
	results, err := ChatToolMessages(ctx, set, msg)
	params.Messages = append(params.Messages, results...)
	return resp, false, err
}
