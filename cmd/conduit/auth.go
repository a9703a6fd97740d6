package main

import (
	"flag"
	"os"
	"path/filepath"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/client"
)

// clientSecretEnv names the environment variable that holds the client
// secret of --auth client-credentials (kept out of the command line, where
// other users could see it).
const clientSecretEnv = "CONDUIT_CLIENT_SECRET"

// Values of --auth.
const (
	authNone              = ""
	authBrowser           = "browser"
	authDevice            = "device"
	authClientCredentials = "client-credentials"
)

// authFlags registers the authorization flags (global).
func (inv *invocation) authFlags(fs *flag.FlagSet) {
	fs.StringVar(&inv.authMode, "auth", authNone, "authorize with OAuth when an HTTP server answers 401; `MODE` is browser (authorization code in a browser), device (a code to enter on another device) or client-credentials (--client-id, secret in $"+clientSecretEnv+")")
	fs.StringVar(&inv.tokenFile, "token-file", "", "keep OAuth tokens and client registrations in `FILE`, reused and refreshed across runs (alone: use stored tokens, never prompt)")
	fs.StringVar(&inv.clientID, "client-id", "", "pre-registered OAuth client `ID` (default: dynamic registration)")
}

// checkAuth validates the authorization flags against the target.
func (inv *invocation) checkAuth() error {
	switch inv.authMode {
	case authNone, authBrowser, authDevice, authClientCredentials:
	default:
		return usagef("--auth %q: want browser, device or client-credentials", inv.authMode)
	}
	if (inv.authMode != authNone || inv.tokenFile != "") && inv.target.kind != targetURL {
		return usagef("--auth and --token-file need an http(s) or ws(s) URL target")
	}
	if inv.tokenFile != "" {
		if _, err := os.Stat(filepath.Dir(inv.tokenFile)); err != nil {
			return usagef("--token-file %s: its directory does not exist", inv.tokenFile)
		}
	}
	return nil
}

// authOption returns the client option for the authorization flags, a
// function releasing what it holds (the browser flow's loopback
// listener), or a nil option without authorization.
func (inv *invocation) authOption() (client.Option, func(), error) {
	if inv.authMode == authNone && inv.tokenFile == "" {
		return nil, func() {}, nil
	}
	cfg := auth.Config{
		ServerURL:  inv.target.url,
		ClientID:   inv.clientID,
		ClientName: "Conduit CLI",
		Logger:     inv.logger(),
	}
	if inv.tokenFile != "" {
		cfg.Store = &auth.FileStore{Path: inv.tokenFile}
	}
	release := func() {}
	switch inv.authMode {
	case authBrowser:
		lb := &auth.Loopback{Out: inv.std.err}
		cfg.Method, cfg.Interaction = auth.AuthorizationCode, lb
		release = func() { lb.Close() }
	case authDevice:
		cfg.Method, cfg.DevicePrompter = auth.DeviceCode, auth.PrintDevice(inv.std.err)
	case authClientCredentials:
		cfg.Method, cfg.ClientSecret = auth.ClientCredentials, os.Getenv(clientSecretEnv)
	default:
		// --token-file alone: stored tokens only (no Interaction, so a
		// flow that needs the user fails with auth.ErrInteractionRequired).
		cfg.Method = auth.AuthorizationCode
	}
	ac, err := auth.New(cfg)
	if err != nil {
		release()
		return nil, nil, usagef("authorization: %v", err)
	}
	return client.WithAuth(client.Auth{Tokens: ac}), release, nil
}
