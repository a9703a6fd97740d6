package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/internal/testserver"
)

// fakeAuthServer is a minimal OAuth authorization server for the
// client_credentials grant, which also serves the MCP server's protected
// resource metadata.
func fakeAuthServer(t *testing.T, mcpURL, clientID, secret string) *httptest.Server {
	t.Helper()
	var as *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"resource": mcpURL, "authorization_servers": []string{as.URL}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": as.URL, "token_endpoint": as.URL + "/token",
			"grant_types_supported":                 []string{"client_credentials"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic"},
		})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		id, sec, ok := r.BasicAuth()
		if r.FormValue("grant_type") != "client_credentials" || !ok || id != clientID || sec != secret {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]any{"error": "invalid_client"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "tok-123", "token_type": "Bearer", "expires_in": 3600})
	})
	as = httptest.NewServer(mux)
	t.Cleanup(as.Close)
	return as
}

// TestAuthClientCredentials: the server answers 401 once; conduit runs
// the client_credentials flow and the retried requests carry the token,
// which --token-file keeps for the next run.
func TestAuthClientCredentials(t *testing.T) {
	srv := testserver.New(testserver.Options{Era: testserver.ModernOnly})
	mcp := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); mcp.Close() })
	mcpURL := mcp.URL + "/mcp"
	as := fakeAuthServer(t, mcpURL, "cli", "s3cret")
	srv.SetFaults(testserver.Fault{Kind: testserver.FaultHTTPStatus, Method: "*", Status: 401, Times: 1,
		Header: http.Header{"Www-Authenticate": {`Bearer resource_metadata="` + as.URL + `/.well-known/oauth-protected-resource/mcp"`}}})
	tokenFile := filepath.Join(t.TempDir(), "tokens.json")

	cmd := exec.Command(conduitBin, "tools", "--json", "--auth", "client-credentials", "--client-id", "cli", "--token-file", tokenFile, "--timeout", "30s", mcpURL)
	cmd.Env = append(os.Environ(), clientSecretEnv+"=s3cret")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("conduit tools with --auth: %v; stderr:\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), `"name": "echo"`) {
		t.Errorf("no tools listed:\n%s", out.String())
	}
	authorized := false
	for _, r := range srv.Received() {
		if r.Headers.Get("Authorization") == "Bearer tok-123" {
			authorized = true
		}
	}
	if !authorized {
		t.Errorf("no request carried the token")
	}
	if b, err := os.ReadFile(tokenFile); err != nil || !strings.Contains(string(b), "tok-123") {
		t.Errorf("token file: %v, %q", err, b)
	}

	// The stored token is reused by a run without --auth.
	srv.SetFaults()
	before := len(srv.Received())
	r := runConduit(t, "", "probe", "--token-file", tokenFile, mcpURL)
	if r.code != 0 {
		t.Fatalf("second run: exit status %d; stderr:\n%s", r.code, r.stderr)
	}
	for _, rec := range srv.Received()[before:] {
		if rec.Headers.Get("Authorization") != "Bearer tok-123" {
			t.Errorf("%s without the stored token", rec.Method)
		}
	}
}

// TestAuthRequired: without --auth a 401 is a negotiation failure of kind
// auth with a hint.
func TestAuthRequired(t *testing.T) {
	s := startServer(t, "http", "modern", testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultHTTPStatus, Method: "*", Status: 401,
		Header: http.Header{"Www-Authenticate": {`Bearer realm="mcp"`}}}}})
	r := runConduit(t, "", s.args([]string{"tools"})...)
	if r.code != exitNegotiation || !strings.Contains(r.stderr, "--auth") {
		t.Errorf("exit status %d, stderr %q; want %d and a hint about --auth", r.code, r.stderr, exitNegotiation)
	}
}

func TestAuthUsage(t *testing.T) {
	for _, args := range [][]string{
		{"tools", "--auth", "magic", "http://127.0.0.1:1/mcp"},
		{"tools", "--auth", "device"},
		{"tools", "--token-file", "/nonexistent-dir/x.json", "http://127.0.0.1:1/mcp"},
	} {
		r := runConduit(t, "", args...)
		if r.code != exitUsage {
			t.Errorf("conduit %v: exit status %d, want %d; stderr %q", args, r.code, exitUsage, r.stderr)
		}
	}
}
