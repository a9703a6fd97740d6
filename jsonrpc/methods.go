package jsonrpc

import "github.com/conduitmcp/conduit/internal/route"

// commonMethods maps the method names of MCP to themselves, so decoding
// them returns a constant string instead of allocating one. It is built
// from the client's dispatch table (package internal/route), the one list
// of the methods the client routes (seed 002).
var commonMethods = func() map[string]string {
	m := make(map[string]string)
	for name := range route.Methods() {
		m[name] = name
	}
	return m
}()
