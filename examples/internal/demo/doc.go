// Package demo gives the examples a server to talk to when the user names
// none: Conduit's dual-era test server, in-process or on 127.0.0.1.
package demo
