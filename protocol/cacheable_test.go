package protocol_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/conduitmcp/conduit/protocol"
)

// TestCacheableResultsReadTTLLeniently: a cacheable result whose ttlMs is
// a whole number spelled as a float (300000.0, 3e5, as JSON Schema's
// "integer" allows and a server computing it in floating point sends),
// a fraction, a number past int64 or not a number at all still decodes:
// ttlMs is a freshness hint, read as the client's cache reads it. Each of
// these used to fail the whole result, so a server with such a hint could
// not have its tools, prompts or resources listed.
func TestCacheableResultsReadTTLLeniently(t *testing.T) {
	ptr := func(n int64) *int64 { return &n }
	ttls := []struct {
		raw  string
		want *int64
	}{
		{`300000`, ptr(300000)},
		{`300000.0`, ptr(300000)},
		{`3e5`, ptr(300000)},
		{`3.0E+5`, ptr(300000)},
		{`-5`, ptr(-5)},
		{`-0`, ptr(0)},
		{`-0.0`, ptr(0)},
		{`1.5`, nil},
		{`-1.5`, nil},
		{`18446744073709551616`, ptr(math.MaxInt64)},
		{`1e400`, ptr(math.MaxInt64)},
		{`-1e400`, ptr(math.MinInt64)},
		{`"300000"`, nil},
		{`true`, nil},
		{`{}`, nil},
		{`[1]`, nil},
		{`null`, nil},
	}
	decoders := map[string]func(raw string) (*int64, error){
		"tools/list": func(raw string) (*int64, error) {
			var r protocol.ListToolsResult
			err := json.Unmarshal([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"ttlMs":`+raw+`,"cacheScope":"public"}`), &r)
			if err == nil && (len(r.Tools) != 1 || r.Tools[0].Name != "a" || r.CacheScope != "public") {
				t.Errorf("tools/list with ttlMs %s decoded as %+v", raw, r)
			}
			return r.TTLMs, err
		},
		"prompts/list": func(raw string) (*int64, error) {
			var r protocol.ListPromptsResult
			err := json.Unmarshal([]byte(`{"prompts":[{"name":"p"}],"ttlMs":`+raw+`}`), &r)
			if err == nil && (len(r.Prompts) != 1 || r.Prompts[0].Name != "p") {
				t.Errorf("prompts/list with ttlMs %s decoded as %+v", raw, r)
			}
			return r.TTLMs, err
		},
		"resources/list": func(raw string) (*int64, error) {
			var r protocol.ListResourcesResult
			err := json.Unmarshal([]byte(`{"resources":[{"uri":"u","name":"n"}],"ttlMs":`+raw+`}`), &r)
			if err == nil && (len(r.Resources) != 1 || r.Resources[0].URI != "u") {
				t.Errorf("resources/list with ttlMs %s decoded as %+v", raw, r)
			}
			return r.TTLMs, err
		},
		"resources/templates/list": func(raw string) (*int64, error) {
			var r protocol.ListResourceTemplatesResult
			err := json.Unmarshal([]byte(`{"resourceTemplates":[{"uriTemplate":"u/{x}","name":"n"}],"ttlMs":`+raw+`}`), &r)
			if err == nil && (len(r.ResourceTemplates) != 1 || r.ResourceTemplates[0].Name != "n") {
				t.Errorf("resources/templates/list with ttlMs %s decoded as %+v", raw, r)
			}
			return r.TTLMs, err
		},
		"resources/read": func(raw string) (*int64, error) {
			var r protocol.ReadResourceResult
			err := json.Unmarshal([]byte(`{"contents":[{"uri":"u","text":"t"}],"TTLMS":`+raw+`}`), &r)
			if err == nil && (len(r.Contents) != 1 || r.Contents[0].Text != "t") {
				t.Errorf("resources/read with ttlMs %s decoded as %+v", raw, r)
			}
			return r.TTLMs, err
		},
		"server/discover": func(raw string) (*int64, error) {
			var r protocol.DiscoverResult
			err := json.Unmarshal([]byte(`{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":`+raw+`}`), &r)
			if err == nil && (len(r.SupportedVersions) != 1 || r.Capabilities.Tools == nil) {
				t.Errorf("server/discover with ttlMs %s decoded as %+v", raw, r)
			}
			return r.TTLMs, err
		},
	}
	for method, decode := range decoders {
		for _, tc := range ttls {
			got, err := decode(tc.raw)
			switch {
			case err != nil:
				t.Errorf("%s result with ttlMs %s: %v", method, tc.raw, err)
			case (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want:
				t.Errorf("%s result with ttlMs %s: TTLMs = %v, want %v", method, tc.raw, deref(got), deref(tc.want))
			}
		}
		// Absent leaves a value decoded before, as encoding/json does.
		if got, err := decode(`7,"ttlMs":8`); err != nil || got == nil || *got != 8 {
			t.Errorf("%s result with two ttlMs: TTLMs = %v, %v; want 8", method, deref(got), err)
		}
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
