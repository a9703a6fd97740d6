package jsonrpc

// MarshalJSON returns r in its wire form, as [EncodeMessage] encodes it
// ({"jsonrpc":"2.0","id":…,"method":…,"params":…}), so that json.Marshal
// of a [Message] (for example one from the client's message log) gives
// the JSON-RPC text, not the Go fields.
func (r Request) MarshalJSON() ([]byte, error) { return AppendMessage(nil, &r) }

// UnmarshalJSON decodes one JSON-RPC request or notification, as
// [DecodeMessage] does. A response is a [*DecodeError].
func (r *Request) UnmarshalJSON(data []byte) error {
	m, err := DecodeMessage(data)
	if err != nil {
		return err
	}
	req, ok := m.(*Request)
	if !ok {
		return &DecodeError{Reason: "a response where a request was expected"}
	}
	*r = *req
	return nil
}

// MarshalJSON returns r in its wire form, as [EncodeMessage] encodes it
// ({"jsonrpc":"2.0","id":…,"result":…} or …"error":{…}); see
// [Request.MarshalJSON].
func (r Response) MarshalJSON() ([]byte, error) { return AppendMessage(nil, &r) }

// UnmarshalJSON decodes one JSON-RPC response, as [DecodeMessage] does. A
// request is a [*DecodeError].
func (r *Response) UnmarshalJSON(data []byte) error {
	m, err := DecodeMessage(data)
	if err != nil {
		return err
	}
	resp, ok := m.(*Response)
	if !ok {
		return &DecodeError{Reason: "a request where a response was expected"}
	}
	*r = *resp
	return nil
}
