package jsonrpc

// MarshalJSON returns r in its wire form, as [EncodeMessage] encodes it
// ({"jsonrpc":"2.0","id":…,"method":…,"params":…}), so that json.Marshal
// of a [Message] (for example one from the client's message log) gives
// the JSON-RPC text, not the Go fields.
func (r Request) MarshalJSON() ([]byte, error) { return AppendMessage(nil, &r) }

// UnmarshalJSON decodes one JSON-RPC request or notification, as
// [DecodeMessage] does. A response is a [*DecodeError].
func (r *Request) UnmarshalJSON(data []byte) error {
	return decodeInto(data, r, "a response where a request was expected")
}

// MarshalJSON returns r in its wire form, as [EncodeMessage] encodes it
// ({"jsonrpc":"2.0","id":…,"result":…} or …"error":{…}); see
// [Request.MarshalJSON].
func (r Response) MarshalJSON() ([]byte, error) { return AppendMessage(nil, &r) }

// UnmarshalJSON decodes one JSON-RPC response, as [DecodeMessage] does. A
// request is a [*DecodeError].
func (r *Response) UnmarshalJSON(data []byte) error {
	return decodeInto(data, r, "a request where a response was expected")
}

// decodeInto decodes data into *dst, a *Request or a *Response; a message
// of the other kind is a [*DecodeError] saying wrong.
func decodeInto[T Request | Response](data []byte, dst *T, wrong string) error {
	m, err := DecodeMessage(data)
	if err != nil {
		return err
	}
	got, ok := any(m).(*T)
	if !ok {
		return &DecodeError{Reason: wrong}
	}
	*dst = *got
	return nil
}
