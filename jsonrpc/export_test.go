package jsonrpc

// DecodeMessageReference exposes the encoding/json-based reference decoder
// to the external tests (differential test and fuzz target).
var DecodeMessageReference = decodeMessageReference
