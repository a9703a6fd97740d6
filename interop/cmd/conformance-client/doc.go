// Command conformance-client is the client under test for the MCP
// conformance suite (@modelcontextprotocol/conformance), built only on
// Conduit's public API (package client).
//
// The suite runs it as `conformance-client <server-url>` with the scenario
// name in MCP_CONFORMANCE_SCENARIO, scenario data (JSON) in
// MCP_CONFORMANCE_CONTEXT and, when the suite was given --spec-version, the
// protocol version in MCP_CONFORMANCE_PROTOCOL_VERSION. A version pins the
// client to it (client.Pin); without one the client negotiates (client.Auto).
//
// Every scenario maps to one flow (see flows.go); unknown scenarios run the
// basic flow (list tools, call the first one). The auth/* scenarios add an
// auth.Client (authorization code flow, Client ID Metadata Document, or the
// pre-registered credentials of the scenario's context) whose user step
// follows the suite's authorization redirect without a browser (auth.go).
// The process exits 0 when the flow succeeded and 1 otherwise, printing the
// error on stderr. CONFORMANCE_CLIENT_DEBUG=1 logs the client's negotiation
// on stderr.
package main
