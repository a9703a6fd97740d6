package protocol

import "fmt"

// The data members of the MCP error codes whose data has a defined shape.
// The errors themselves travel as the jsonrpc package's Error; decode its
// Data into these.

// UnsupportedProtocolVersionData is the data of an
// UnsupportedProtocolVersion error (-32022, 2026-07-28): the versions the
// server supports and the one the client asked for. Legacy servers that
// reject initialize's version with -32602 may send the same shape.
type UnsupportedProtocolVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested,omitempty"`
}

// MissingRequiredClientCapabilityData is the data of a
// MissingRequiredClientCapability error (-32021, 2026-07-28): the
// capabilities the request needs and did not declare.
type MissingRequiredClientCapabilityData struct {
	RequiredCapabilities ClientCapabilities `json:"requiredCapabilities"`
}

// URLElicitationRequiredData is the data of a URLElicitationRequired
// error (-32042, 2025-11-25 only): URL-mode elicitations to complete
// before retrying.
type URLElicitationRequiredData struct {
	Elicitations []ElicitParams `json:"elicitations"`
}

// URLElicitationRequiredError is a 2025-11-25 server's
// URLElicitationRequiredError (-32042), decoded: the call needs the user
// to visit the URLs of Elicitations (mode "url", each with its
// elicitationId) before it can succeed. Err is the server's error, a
// *jsonrpc.Error (typed as error because package jsonrpc imports this
// package); the error unwraps to it, so errors.Is(err,
// jsonrpc.ErrURLElicitationRequired) holds and errors.AsType[*jsonrpc.Error]
// finds its message and data.
//
// The client package returns it (inside its *client.Error of kind
// client.KindServer) when a call meets -32042 and the handler does not
// implement handler.URLElicitor, when the user did not accept, when the
// elicitations did not complete in time, or when the one retry met
// -32042 again.
type URLElicitationRequiredError struct {
	Elicitations []ElicitParams
	Err          error
}

func (e *URLElicitationRequiredError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("%d URL elicitation(s) required", len(e.Elicitations))
	}
	return fmt.Sprintf("%d URL elicitation(s) required: %v", len(e.Elicitations), e.Err)
}

// Unwrap returns the server's error.
func (e *URLElicitationRequiredError) Unwrap() error { return e.Err }

// ResourceNotFoundData is the example data of a resource-not-found error
// (-32002 legacy, -32602 in 2026-07-28).
type ResourceNotFoundData struct {
	URI string `json:"uri"`
}
