package transport

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"testing"
)

// TestPostRequestURL: a POST built from the endpoint Connect parsed once
// has the URL and Host http.NewRequest gives the connection's URL string
// (the empty port removed, escapes and query kept), for the URL as given
// and for one whose string form differs from it.
func TestPostRequestURL(t *testing.T) {
	for _, raw := range []string{
		"http://127.0.0.1:8080/mcp",
		"http://example.com:/mcp",
		"http://[::1]:/mcp?x=1",
		"https://user:pw@example.com/a%2fb?q=1&r=%20#frag",
		"HTTP://Example.COM/mcp",
		"http://example.com/p?",
		"http://example.com/%7Euser/ü",
	} {
		parsed, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		str := parsed.String() // the connection's URL string
		want, err := http.NewRequestWithContext(context.Background(), http.MethodPost, str, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Streamable HTTP passes the URL it parsed; HTTP+SSE only the
		// string of the endpoint the server named.
		fromParsed, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, from := range []struct {
			parsed *url.URL
			orig   string
		}{{fromParsed, raw}, {nil, ""}} {
			endpoint, err := endpointOf(from.parsed, from.orig, str)
			if err != nil {
				t.Fatalf("endpointOf(%q): %v", raw, err)
			}
			got, _, err := newPostRequest(context.Background(), sameOriginClient, endpoint, []byte("{}"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.URL, want.URL) || got.Host != want.Host {
				t.Errorf("%q (parsed given: %v): POST URL %#v host %q; NewRequest gives %#v host %q", raw, from.parsed != nil, got.URL, got.Host, want.URL, want.Host)
			}
			if got.URL == endpoint {
				t.Errorf("%q: the request shares the connection's URL", raw)
			}
		}
	}
}
