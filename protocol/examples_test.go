package protocol_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// specDir holds the specification files the tests read (the schemas and
// the 2026-07-28 examples), copied into the module so that the tests run
// from any checkout; testdata/spec/README.md says where from.
const specDir = "testdata/spec"

// codec decodes one example into its Go type and encodes it again.
type codec func(raw []byte) ([]byte, error)

// strictDecode decodes raw into v and fails on members v has no field for,
// so a type that would drop part of an example is caught with a precise
// message (the JSON comparison would catch it too).
func strictDecode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

// plain round-trips a bare JSON value through T.
func plain[T any]() codec {
	return func(raw []byte) ([]byte, error) {
		var v T
		if err := strictDecode(raw, &v); err != nil {
			return nil, err
		}
		return json.Marshal(v)
	}
}

// content round-trips a content block and checks its type.
func content(typ string) codec {
	return func(raw []byte) ([]byte, error) {
		var c protocol.Content
		if err := strictDecode(raw, &c); err != nil {
			return nil, err
		}
		if c.Type != typ {
			return nil, fmt.Errorf("type = %q, want %q", c.Type, typ)
		}
		return json.Marshal(c)
	}
}

// schema round-trips an elicitation property schema through
// ParsePrimitiveSchema and checks the concrete type it picks.
func schema[T protocol.PrimitiveSchema]() codec {
	return func(raw []byte) ([]byte, error) {
		s, err := protocol.ParsePrimitiveSchema(raw)
		if err != nil {
			return nil, err
		}
		if _, ok := s.(T); !ok {
			var want T
			return nil, fmt.Errorf("ParsePrimitiveSchema = %T, want %T", s, want)
		}
		// The strict decode checks that the type knows every member.
		again := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
		if err := strictDecode(raw, again); err != nil {
			return nil, err
		}
		return json.Marshal(s)
	}
}

// request round-trips a full JSON-RPC request whose params are a T.
func request[T any](method string) codec {
	return func(raw []byte) ([]byte, error) {
		req, err := decodeRequest(raw, method, true)
		if err != nil {
			return nil, err
		}
		var p T
		if err := strictDecode(req.Params, &p); err != nil {
			return nil, err
		}
		out, err := jsonrpc.NewRequest(req.ID, req.Method, p)
		if err != nil {
			return nil, err
		}
		return jsonrpc.EncodeMessage(out)
	}
}

// notification round-trips a full JSON-RPC notification with T params.
func notification[T any](method string) codec {
	return func(raw []byte) ([]byte, error) {
		req, err := decodeRequest(raw, method, false)
		if err != nil {
			return nil, err
		}
		var p T
		if err := strictDecode(req.Params, &p); err != nil {
			return nil, err
		}
		out, err := jsonrpc.NewNotification(req.Method, p)
		if err != nil {
			return nil, err
		}
		return jsonrpc.EncodeMessage(out)
	}
}

func decodeRequest(raw []byte, method string, wantID bool) (*jsonrpc.Request, error) {
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		return nil, err
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return nil, fmt.Errorf("DecodeMessage = %T, want *jsonrpc.Request", msg)
	}
	if req.Method != method {
		return nil, fmt.Errorf("method = %q, want %q", req.Method, method)
	}
	if req.IsNotification() == wantID {
		return nil, fmt.Errorf("IsNotification = %v, want %v", req.IsNotification(), !wantID)
	}
	return req, nil
}

// response round-trips a full JSON-RPC success response with a T result.
func response[T any]() codec {
	return func(raw []byte) ([]byte, error) {
		resp, err := decodeResponse(raw)
		if err != nil {
			return nil, err
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("unexpected error response: %v", resp.Error)
		}
		var r T
		if err := strictDecode(resp.Result, &r); err != nil {
			return nil, err
		}
		out, err := jsonrpc.NewResponse(resp.ID, r)
		if err != nil {
			return nil, err
		}
		return jsonrpc.EncodeMessage(out)
	}
}

func decodeResponse(raw []byte) (*jsonrpc.Response, error) {
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		return nil, err
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return nil, fmt.Errorf("DecodeMessage = %T, want *jsonrpc.Response", msg)
	}
	return resp, nil
}

// errorData re-encodes an error's data through D; absent data stays
// absent.
func errorData[D any](data json.RawMessage) (json.RawMessage, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var d D
	if err := strictDecode(data, &d); err != nil {
		return nil, fmt.Errorf("error data: %w", err)
	}
	return json.Marshal(d)
}

// errorResponse round-trips a full JSON-RPC error response with code and
// data of type D.
func errorResponse[D any](code int64) codec {
	return func(raw []byte) ([]byte, error) {
		resp, err := decodeResponse(raw)
		if err != nil {
			return nil, err
		}
		if resp.Error == nil || resp.Error.Code != code {
			return nil, fmt.Errorf("error = %v, want code %d", resp.Error, code)
		}
		data, err := errorData[D](resp.Error.Data)
		if err != nil {
			return nil, err
		}
		e := *resp.Error
		e.Data = data
		return jsonrpc.EncodeMessage(jsonrpc.NewErrorResponse(resp.ID, &e))
	}
}

// errorObject round-trips a bare JSON-RPC error object.
func errorObject[D any](code int64) codec {
	return func(raw []byte) ([]byte, error) {
		var e jsonrpc.Error
		if err := strictDecode(raw, &e); err != nil {
			return nil, err
		}
		if e.Code != code {
			return nil, fmt.Errorf("code = %d, want %d", e.Code, code)
		}
		data, err := errorData[D](e.Data)
		if err != nil {
			return nil, err
		}
		e.Data = data
		return json.Marshal(&e)
	}
}

// typedParams decodes an embedded request's params into the type of its
// method and re-encodes them, so the typed params are round-tripped too.
func typedParams(r protocol.InputRequest) (protocol.InputRequest, error) {
	var v any
	switch r.Method {
	case protocol.MethodElicitationCreate:
		p, err := r.ElicitParams()
		if err != nil {
			return r, err
		}
		if p.Mode != protocol.ElicitModeURL {
			if _, err := protocol.ParseRequestedSchema(p.RequestedSchema); err != nil {
				return r, err
			}
		}
		v = p
	case protocol.MethodSamplingCreateMessage:
		p, err := r.CreateMessageParams()
		if err != nil {
			return r, err
		}
		v = p
	case protocol.MethodRootsList:
		if len(r.Params) == 0 {
			return r, nil
		}
		p, err := r.ListRootsParams()
		if err != nil {
			return r, err
		}
		v = p
	default:
		return r, fmt.Errorf("unexpected input request method %q", r.Method)
	}
	var err error
	r.Params, err = json.Marshal(v)
	return r, err
}

// inputRequest round-trips one bare embedded request.
func inputRequest(method string) codec {
	return func(raw []byte) ([]byte, error) {
		var r protocol.InputRequest
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, err
		}
		if r.Method != method {
			return nil, fmt.Errorf("method = %q, want %q", r.Method, method)
		}
		r, err := typedParams(r)
		if err != nil {
			return nil, err
		}
		return json.Marshal(r)
	}
}

func inputRequests(raw []byte) ([]byte, error) {
	var m protocol.InputRequests
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for k, r := range m {
		r, err := typedParams(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		m[k] = r
	}
	return json.Marshal(m)
}

func inputRequiredResult(raw []byte) ([]byte, error) {
	var res protocol.InputRequiredResult
	if err := strictDecode(raw, &res); err != nil {
		return nil, err
	}
	for k, r := range res.InputRequests {
		r, err := typedParams(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		res.InputRequests[k] = r
	}
	return json.Marshal(res)
}

// inputResponses round-trips each answer through the result type its
// shape names: action ⇒ ElicitResult, roots ⇒ ListRootsResult, otherwise
// CreateMessageResult.
func inputResponses(raw []byte) ([]byte, error) {
	var m protocol.InputResponses
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	out := protocol.InputResponses{}
	for k, v := range m {
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(v, &probe); err != nil {
			return nil, err
		}
		var typed any
		switch {
		case probe["action"] != nil:
			typed = new(protocol.ElicitResult)
		case probe["roots"] != nil:
			typed = new(protocol.ListRootsResult)
		default:
			typed = new(protocol.CreateMessageResult)
		}
		if err := strictDecode(v, typed); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if err := out.Set(k, typed); err != nil {
			return nil, err
		}
	}
	return json.Marshal(out)
}

func samplingMessage(raw []byte) ([]byte, error) {
	var m protocol.SamplingMessage
	if err := strictDecode(raw, &m); err != nil {
		return nil, err
	}
	blocks, err := m.Blocks()
	if err != nil {
		return nil, err
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("no content blocks")
	}
	return json.Marshal(m)
}

// exampleCodecs maps every folder of spec/2026-07-28/examples to the Go
// type that holds it.
var exampleCodecs = map[string]codec{
	"AudioContent":                          content(protocol.ContentAudio),
	"BlobResourceContents":                  plain[protocol.ResourceContents](),
	"BooleanSchema":                         schema[*protocol.BooleanSchema](),
	"CallToolRequest":                       request[protocol.CallToolParams](protocol.MethodToolsCall),
	"CallToolRequestParams":                 plain[protocol.CallToolParams](),
	"CallToolResult":                        plain[protocol.CallToolResult](),
	"CallToolResultResponse":                response[protocol.CallToolResult](),
	"CancelledNotification":                 notification[protocol.CancelledParams](protocol.NotificationCancelled),
	"CancelledNotificationParams":           plain[protocol.CancelledParams](),
	"ClientCapabilities":                    plain[protocol.ClientCapabilities](),
	"CompleteRequest":                       request[protocol.CompleteParams](protocol.MethodCompletionComplete),
	"CompleteRequestParams":                 plain[protocol.CompleteParams](),
	"CompleteResult":                        plain[protocol.CompleteResult](),
	"CompleteResultResponse":                response[protocol.CompleteResult](),
	"CreateMessageRequest":                  inputRequest(protocol.MethodSamplingCreateMessage),
	"CreateMessageRequestParams":            plain[protocol.CreateMessageParams](),
	"CreateMessageResult":                   plain[protocol.CreateMessageResult](),
	"DiscoverRequest":                       request[protocol.DiscoverParams](protocol.MethodDiscover),
	"DiscoverResult":                        plain[protocol.DiscoverResult](),
	"DiscoverResultResponse":                response[protocol.DiscoverResult](),
	"ElicitRequest":                         inputRequest(protocol.MethodElicitationCreate),
	"ElicitRequestFormParams":               plain[protocol.ElicitParams](),
	"ElicitRequestURLParams":                plain[protocol.ElicitParams](),
	"ElicitResult":                          plain[protocol.ElicitResult](),
	"EmbeddedResource":                      content(protocol.ContentResource),
	"GetPromptRequest":                      request[protocol.GetPromptParams](protocol.MethodPromptsGet),
	"GetPromptRequestParams":                plain[protocol.GetPromptParams](),
	"GetPromptResult":                       plain[protocol.GetPromptResult](),
	"GetPromptResultResponse":               response[protocol.GetPromptResult](),
	"HeaderMismatchError":                   errorResponse[json.RawMessage](jsonrpc.CodeHeaderMismatch),
	"ImageContent":                          content(protocol.ContentImage),
	"InputRequests":                         inputRequests,
	"InputRequiredResult":                   inputRequiredResult,
	"InputResponses":                        inputResponses,
	"InternalError":                         errorObject[json.RawMessage](jsonrpc.CodeInternalError),
	"InvalidParamsError":                    errorObject[json.RawMessage](jsonrpc.CodeInvalidParams),
	"ListPromptsRequest":                    request[protocol.ListPromptsParams](protocol.MethodPromptsList),
	"ListPromptsResult":                     plain[protocol.ListPromptsResult](),
	"ListPromptsResultResponse":             response[protocol.ListPromptsResult](),
	"ListResourceTemplatesRequest":          request[protocol.ListResourceTemplatesParams](protocol.MethodResourcesTemplateList),
	"ListResourceTemplatesResult":           plain[protocol.ListResourceTemplatesResult](),
	"ListResourceTemplatesResultResponse":   response[protocol.ListResourceTemplatesResult](),
	"ListResourcesRequest":                  request[protocol.ListResourcesParams](protocol.MethodResourcesList),
	"ListResourcesResult":                   plain[protocol.ListResourcesResult](),
	"ListResourcesResultResponse":           response[protocol.ListResourcesResult](),
	"ListRootsRequest":                      inputRequest(protocol.MethodRootsList),
	"ListRootsResult":                       plain[protocol.ListRootsResult](),
	"ListToolsRequest":                      request[protocol.ListToolsParams](protocol.MethodToolsList),
	"ListToolsResult":                       plain[protocol.ListToolsResult](),
	"ListToolsResultResponse":               response[protocol.ListToolsResult](),
	"LoggingMessageNotification":            notification[protocol.LoggingMessageParams](protocol.NotificationMessage),
	"LoggingMessageNotificationParams":      plain[protocol.LoggingMessageParams](),
	"MethodNotFoundError":                   errorObject[map[string]string](jsonrpc.CodeMethodNotFound),
	"MissingRequiredClientCapabilityError":  errorResponse[protocol.MissingRequiredClientCapabilityData](jsonrpc.CodeMissingRequiredClientCapability),
	"ModelPreferences":                      plain[protocol.ModelPreferences](),
	"NumberSchema":                          schema[*protocol.NumberSchema](),
	"PaginatedRequestParams":                plain[protocol.PaginatedParams](),
	"ParseError":                            errorObject[json.RawMessage](jsonrpc.CodeParseError),
	"ProgressNotification":                  notification[protocol.ProgressParams](protocol.NotificationProgress),
	"ProgressNotificationParams":            plain[protocol.ProgressParams](),
	"PromptListChangedNotification":         notification[protocol.ListChangedParams](protocol.NotificationPromptsListChanged),
	"ReadResourceRequest":                   request[protocol.ReadResourceParams](protocol.MethodResourcesRead),
	"ReadResourceResult":                    plain[protocol.ReadResourceResult](),
	"ReadResourceResultResponse":            response[protocol.ReadResourceResult](),
	"Resource":                              plain[protocol.Resource](),
	"ResourceLink":                          content(protocol.ContentResourceLink),
	"ResourceListChangedNotification":       notification[protocol.ListChangedParams](protocol.NotificationResourcesListChanged),
	"ResourceUpdatedNotification":           notification[protocol.ResourceUpdatedParams](protocol.NotificationResourcesUpdated),
	"ResourceUpdatedNotificationParams":     plain[protocol.ResourceUpdatedParams](),
	"Root":                                  plain[protocol.Root](),
	"SamplingMessage":                       samplingMessage,
	"ServerCapabilities":                    plain[protocol.ServerCapabilities](),
	"StringSchema":                          schema[*protocol.StringSchema](),
	"SubscriptionsAcknowledgedNotification": notification[protocol.SubscriptionsAcknowledgedParams](protocol.NotificationSubscriptionsAcknowledged),
	"SubscriptionsListenRequest":            request[protocol.ListenParams](protocol.MethodSubscriptionsListen),
	"SubscriptionsListenResult":             plain[protocol.ListenResult](),
	"SubscriptionsListenResultResponse":     response[protocol.ListenResult](),
	"TextContent":                           content(protocol.ContentText),
	"TextResourceContents":                  plain[protocol.ResourceContents](),
	"TitledMultiSelectEnumSchema":           schema[*protocol.TitledMultiSelectEnumSchema](),
	"TitledSingleSelectEnumSchema":          schema[*protocol.TitledSingleSelectEnumSchema](),
	"Tool":                                  plain[protocol.Tool](),
	"ToolListChangedNotification":           notification[protocol.ListChangedParams](protocol.NotificationToolsListChanged),
	"ToolResultContent":                     content(protocol.ContentToolResult),
	"ToolUseContent":                        content(protocol.ContentToolUse),
	"UnsupportedProtocolVersionError":       errorResponse[protocol.UnsupportedProtocolVersionData](jsonrpc.CodeUnsupportedProtocolVersion),
	"UntitledMultiSelectEnumSchema":         schema[*protocol.UntitledMultiSelectEnumSchema](),
	"UntitledSingleSelectEnumSchema":        schema[*protocol.UntitledSingleSelectEnumSchema](),
}

// jsonDiff reports the difference between two JSON documents, ignoring
// key order and formatting.
func jsonDiff(t *testing.T, want, got []byte) string {
	t.Helper()
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("decoding want: %v", err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("decoding got %s: %v", got, err)
	}
	return cmp.Diff(w, g)
}

// TestSpecExamplesRoundTrip decodes every example of the 2026-07-28 spec
// into its Go type, encodes it again and compares the JSON.
func TestSpecExamplesRoundTrip(t *testing.T) {
	root := filepath.Join(specDir, "2026-07-28", "examples")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		seen[name] = true
		c, ok := exampleCodecs[name]
		if !ok {
			t.Errorf("example folder %s has no Go type in exampleCodecs", name)
			continue
		}
		files, err := filepath.Glob(filepath.Join(root, name, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Errorf("example folder %s has no JSON files", name)
		}
		for _, f := range files {
			t.Run(name+"/"+filepath.Base(f), func(t *testing.T) {
				raw, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				got, err := c(raw)
				if err != nil {
					t.Fatalf("round trip: %v", err)
				}
				if d := jsonDiff(t, raw, got); d != "" {
					t.Errorf("round trip changed the JSON (-example +encoded):\n%s", d)
				}
			})
		}
	}
	var stale []string
	for name := range exampleCodecs {
		if !seen[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("exampleCodecs names folders that do not exist: %v", stale)
	}
}
