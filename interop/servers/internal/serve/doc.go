// Package serve holds what the SDK-based interop servers (goserver,
// mcpgoserver) share and that needs no SDK: their flags and serving an
// http.Handler on 127.0.0.1.
package serve
