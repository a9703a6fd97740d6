package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/transport"
)

// testRedirect is the redirect URI of tests that use autoApprove: it is
// never contacted (autoApprove reads the Location header instead).
const testRedirect = "http://127.0.0.1:1/callback"

// noRedirectClient does not follow redirects.
var noRedirectClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       10 * time.Second,
}

// autoApprove is the user: it opens authURL at the (auto-approving) test
// authorization server and returns the redirect's URL.
func autoApprove(t *testing.T) InteractionFunc {
	return func(ctx context.Context, authURL string) (*url.URL, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := noRedirectClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			b, _ := io.ReadAll(resp.Body)
			return nil, fmt.Errorf("authorize: status %d: %s", resp.StatusCode, b)
		}
		return url.Parse(resp.Header.Get("Location"))
	}
}

// tamper wraps an interaction and edits the redirect's query.
func tamper(in InteractionFunc, edit func(q url.Values)) InteractionFunc {
	return func(ctx context.Context, authURL string) (*url.URL, error) {
		u, err := in(ctx, authURL)
		if err != nil {
			return nil, err
		}
		q := u.Query()
		edit(q)
		u.RawQuery = q.Encode()
		return u, nil
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustNew(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// send makes one request to u with the client's credentials (as the
// transport's HeaderFunc would) and returns the status and, for 401/403,
// the error the transport would report.
func send(ctx context.Context, c *Client, u string) (int, *transport.HTTPError, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(`{}`))
	if err != nil {
		return 0, nil, err
	}
	if err := c.Header(ctx, req); err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode == 401 || resp.StatusCode == 403 {
		return resp.StatusCode, &transport.HTTPError{
			Method: "POST", URL: u, StatusCode: resp.StatusCode,
			WWWAuthenticate: strings.Join(resp.Header.Values("WWW-Authenticate"), ", "),
		}, nil
	}
	return resp.StatusCode, nil, nil
}

// call emulates the session: request, on 401/403 Authorize and retry, at
// most 4 times.
func call(ctx context.Context, c *Client, u string) error {
	for range 4 {
		status, herr, err := send(ctx, c, u)
		if err != nil {
			return err
		}
		if herr == nil {
			if status != 200 {
				return fmt.Errorf("status %d", status)
			}
			return nil
		}
		if err := c.Authorize(ctx, herr); err != nil {
			return err
		}
	}
	return errors.New("still unauthorized after 4 attempts")
}

// Cross-process helper: the test binary re-executed with helperEnv set
// acts as a second process sharing a FileStore.
const helperEnv = "CONDUIT_AUTH_HELPER"

func runHelper() int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := New(Config{
		ServerURL: os.Getenv("CONDUIT_AUTH_SERVER"),
		ClientID:  os.Getenv("CONDUIT_AUTH_CLIENT"),
		Store:     &FileStore{Path: os.Getenv("CONDUIT_AUTH_STORE")},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// Wait for the parent's go signal so that all processes start together.
	io.ReadAll(os.Stdin)
	tok, err := c.Token(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Print(tok)
	return 0
}

// transportHTTPError403 builds 403 errors as the transport reports them.
type transportHTTPError403 struct{ scope string }

func (e *transportHTTPError403) err(s *testServer) *transport.HTTPError {
	return &transport.HTTPError{StatusCode: 403, WWWAuthenticate: `Bearer error="insufficient_scope", scope="` + e.scope +
		`", resource_metadata="` + s.URL + `/.well-known/oauth-protected-resource/mcp"`}
}

func (e *transportHTTPError403) errNoChallenge() *transport.HTTPError {
	return &transport.HTTPError{StatusCode: 403, ContentType: "text/plain", Body: []byte("bad origin")}
}

type transportHTTPError401 struct{}

func (transportHTTPError401) err(s *testServer) *transport.HTTPError {
	return &transport.HTTPError{StatusCode: 401, WWWAuthenticate: `Bearer resource_metadata="` + s.URL + `/.well-known/oauth-protected-resource/mcp"`}
}

// httpClient posts through a RoundTripper.
type httpClient struct{ rt http.RoundTripper }

func (h *httpClient) post(ctx context.Context, u string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(`{}`))
	if err != nil {
		return 0, err
	}
	resp, err := (&http.Client{Transport: h.rt}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}
