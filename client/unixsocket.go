package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// unixScheme starts an endpoint of Streamable HTTP over a Unix socket:
// http+unix://<socket path, percent-encoded>/<HTTP path>, for example
// http+unix://%2Frun%2Fmcp.sock/mcp (socket /run/mcp.sock, path /mcp).
const unixScheme = "http+unix://"

// unixEndpoint splits an http+unix endpoint into the socket path and the
// URL the requests name (host localhost); ok is false for another scheme.
func unixEndpoint(endpoint string) (socket, httpURL string, ok bool, err error) {
	if len(endpoint) < len(unixScheme) || !strings.EqualFold(endpoint[:len(unixScheme)], unixScheme) {
		return "", "", false, nil
	}
	rest := endpoint[len(unixScheme):]
	host, path, _ := strings.Cut(rest, "/")
	socket, err = url.PathUnescape(host)
	if err != nil || socket == "" {
		return "", "", true, fmt.Errorf("http+unix endpoint %q: want http+unix://<percent-encoded socket path>/<path>", endpoint)
	}
	return socket, "http://localhost/" + path, true, nil
}

// unixHTTPClient returns a copy of base (nil: a client of its own) whose
// connections go to the Unix socket.
func unixHTTPClient(base *http.Client, socket string) (*http.Client, error) {
	var tr *http.Transport
	hc := &http.Client{}
	if base != nil {
		*hc = *base
		switch t := base.Transport.(type) {
		case nil:
		case *http.Transport:
			tr = t.Clone()
		default:
			return nil, errors.New("http+unix endpoints need WithHTTPClient's Transport to be an *http.Transport (or nil)")
		}
	}
	if tr == nil {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	tr.Proxy = nil
	tr.DialTLSContext = nil
	tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}
	hc.Transport = tr
	return hc, nil
}
