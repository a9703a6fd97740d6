package openaiconduit

import (
	"context"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/conduitmcp/conduit/toolset"
)

// FunctionCallOutput turns a result into the function_call_output item
// that answers call callID: text parts as input_text, images as
// input_image data URLs.
func FunctionCallOutput(callID string, r *toolset.Result, callErr error) responses.ResponseInputItemUnionParam {
	out := &responses.ResponseInputItemFunctionCallOutputParam{CallID: param.NewOpt(callID)}
	if !r.HasImages() {
		out.Output.OfString = param.NewOpt(resultText(r, callErr))
		return responses.ResponseInputItemUnionParam{OfFunctionCallOutput: out}
	}
	var items responses.ResponseFunctionCallOutputItemListParam
	if r.IsError && callErr == nil {
		items = append(items, inputText(errorPrefix))
	}
	for _, p := range r.Parts {
		if p.Type == toolset.PartImage {
			items = append(items, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{
				ImageURL: param.NewOpt("data:" + p.MIMEType + ";base64," + p.Data),
			}})
			continue
		}
		items = append(items, inputText(p.Text))
	}
	out.Output.OfResponseFunctionCallOutputItemArray = items
	return responses.ResponseInputItemUnionParam{OfFunctionCallOutput: out}
}

func inputText(s string) responses.ResponseFunctionCallOutputItemUnionParam {
	return responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: s}}
}

// ResponseToolOutputs runs the function calls among resp's output items
// through set and returns, for each, the function_call item and the
// function_call_output item that answers it, ready to append to the next
// request's input. The error is ctx's, when it ended the calls.
func ResponseToolOutputs(ctx context.Context, set *toolset.Set, resp *responses.Response) ([]responses.ResponseInputItemUnionParam, error) {
	var out []responses.ResponseInputItemUnionParam
	for _, item := range resp.Output {
		if item.Type != "function_call" {
			continue
		}
		call := item.AsFunctionCall()
		res, err := set.Call(ctx, call.Name, call.Arguments)
		if toolset.Stopped(ctx, err) {
			return out, err
		}
		out = append(out, responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name),
			FunctionCallOutput(call.CallID, res, err))
	}
	return out, nil
}

// ResponseTurn runs one turn of the tool loop on the responses API,
// without state kept by the server: it asks the model with params (the
// set's tools declared when params.Tools is empty) and, when the model
// called tools, runs them and appends the model's text, its calls and
// their outputs to params.Input for the next turn. done reports that the
// model called none: its answer is resp.OutputText().
func ResponseTurn(ctx context.Context, client *openai.Client, set *toolset.Set, params *responses.ResponseNewParams, o *Options) (resp *responses.Response, done bool, err error) {
	if len(params.Tools) == 0 {
		params.Tools, _ = ResponseTools(set, o)
	}
	resp, err = client.Responses.New(ctx, *params)
	if err != nil {
		return nil, false, err
	}
	outputs, err := ResponseToolOutputs(ctx, set, resp)
	if len(outputs) == 0 && err == nil {
		return resp, true, nil
	}
	input := params.Input.OfInputItemList
	if s := params.Input.OfString; s.Valid() {
		input = append(responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(s.Value, responses.EasyInputMessageRoleUser)}, input...)
	}
	if text := resp.OutputText(); text != "" {
		input = append(input, responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleAssistant))
	}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: append(input, outputs...)}
	return resp, false, err
}
