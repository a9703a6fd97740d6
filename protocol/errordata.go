package protocol

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

// ResourceNotFoundData is the example data of a resource-not-found error
// (-32002 legacy, -32602 in 2026-07-28).
type ResourceNotFoundData struct {
	URI string `json:"uri"`
}
