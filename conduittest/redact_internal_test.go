package conduittest

import "testing"

// TestRedactJSON: every credential member README.md and Recorder name is
// redacted in any case and at any depth, so is every string that starts
// with an authorization scheme, also where the JSON spells them with
// escapes; everything else is kept byte for byte.
func TestRedactJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"Authorization":"x"}`, `{"Authorization":"[REDACTED]"}`},
		{`{"a":{"Cookie":"s=1"}}`, `{"a":{"Cookie":"[REDACTED]"}}`},
		{`{"a":[{"X-Api-Key":"k"}]}`, `{"a":[{"X-Api-Key":"[REDACTED]"}]}`},
		{`{"ACCESS_TOKEN":"t","n":1.50}`, `{"ACCESS_TOKEN":"[REDACTED]","n":1.50}`},
		{`{"client_secret":{"nested":"s"}}`, `{"client_secret":"[REDACTED]"}`},
		{`{"refresh_token":"r","id_token":"i","password":"p","set-cookie":"c","dpop":"d"}`,
			`{"refresh_token":"[REDACTED]","id_token":"[REDACTED]","password":"[REDACTED]","set-cookie":"[REDACTED]","dpop":"[REDACTED]"}`},
		{`{"h":"Basic dXNlcjpwYXNz"}`, `{"h":"[REDACTED]"}`},
		{`{"h":["bearer eyJ"]}`, `{"h":["[REDACTED]"]}`},
		{`{"h":"DPoP eyJ"}`, `{"h":"[REDACTED]"}`},
		{`{"\u0061ccess_token":"t"}`, `{"access_token":"[REDACTED]"}`},
		{`{"h":"\u0042earer eyJ"}`, `{"h":"[REDACTED]"}`},
		{`{"note":"a bearer of news","n":1e3}`, `{"note":"a bearer of news","n":1e3}`},
		{`not json`, `not json`},
	}
	for _, tt := range tests {
		if got := string(redactJSON([]byte(tt.in))); got != tt.want {
			t.Errorf("redactJSON(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
