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
// auth.Client through client.WithAuth(client.Auth{Tokens: a}), configured from the scenario's
// context (auth.go): the authorization code flow (Client ID Metadata
// Document, or the context's pre-registered credentials) whose user step
// follows the suite's authorization redirect without a browser, with a
// DPoP key for auth/dpop*; client_credentials with a secret or
// private_key_jwt; the JWT bearer grant with a workload identity token;
// or enterprise-managed authorization (token exchange at the identity
// provider for an ID-JAG, then the JWT bearer grant).
// The sep-2640-client-* scenarios run the skills host (package skills):
// list the skills and, in the verify scenarios, load the first one, which
// refuses the tampered SKILL.md (skills.go).
// The process exits 0 when the flow succeeded and 1 otherwise, printing the
// error on stderr. CONFORMANCE_CLIENT_DEBUG=1 logs the client's negotiation
// on stderr.
package main
