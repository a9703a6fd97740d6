package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/client"
)

// The suite's fixed values for the authorization code flow: its mock
// authorization servers approve at once and redirect to this URI, and
// servers advertising Client ID Metadata Document support accept this
// client id.
const (
	redirectURL       = "http://localhost:3000/callback"
	clientMetadataURL = "https://conformance-test.local/client-metadata.json"
)

// authOptions returns the client options of the auth/* scenarios: an
// auth.Client running the authorization code flow (with pre-registered
// credentials when the scenario's context carries them), whose user step
// follows the authorization URL to its redirect without a browser.
func (e scenarioEnv) authOptions() ([]client.Option, error) {
	if !strings.HasPrefix(e.Scenario, "auth/") {
		return nil, nil
	}
	cfg := auth.Config{
		ServerURL:         e.URL,
		Method:            auth.AuthorizationCode,
		RedirectURL:       redirectURL,
		ClientMetadataURL: clientMetadataURL,
		ClientName:        "conduit-conformance-client",
		Interaction:       auth.InteractionFunc(followRedirect),
	}
	var creds struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if raw, ok := e.Context["client_id"]; ok {
		if err := json.Unmarshal(raw, &creds.ClientID); err != nil {
			return nil, fmt.Errorf("context client_id: %w", err)
		}
	}
	if raw, ok := e.Context["client_secret"]; ok {
		if err := json.Unmarshal(raw, &creds.ClientSecret); err != nil {
			return nil, fmt.Errorf("context client_secret: %w", err)
		}
	}
	cfg.ClientID, cfg.ClientSecret = creds.ClientID, creds.ClientSecret
	ac, err := auth.New(cfg)
	if err != nil {
		return nil, err
	}
	return []client.Option{client.WithAuth(client.Auth{Tokens: ac, Authorize: ac.Authorize})}, nil
}

// followRedirect is the headless user step: the suite's authorization
// endpoints answer with a redirect carrying the code (or an error), which
// is returned without being followed.
func followRedirect(ctx context.Context, authURL string) (*url.URL, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil, fmt.Errorf("authorization endpoint answered %s without a redirect", resp.Status)
	}
	return resp.Request.URL.Parse(loc)
}
