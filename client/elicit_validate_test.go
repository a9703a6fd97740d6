package client_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/conduitmcp/conduit/handler"

	"github.com/google/go-cmp/cmp"
)

func TestValidateElicitation(t *testing.T) {
	const schema = `{"type":"object","properties":{
		"name":{"type":"string","minLength":2,"maxLength":5},
		"email":{"type":"string","format":"email"},
		"site":{"type":"string","format":"uri"},
		"day":{"type":"string","format":"date"},
		"at":{"type":"string","format":"date-time"},
		"color":{"type":"string","enum":["red","green"]},
		"hex":{"type":"string","oneOf":[{"const":"#f00","title":"Red"},{"const":"#0f0","title":"Green"}]},
		"age":{"type":"integer","minimum":0,"maximum":150},
		"ratio":{"type":"number","minimum":0,"maximum":1,"default":0.5},
		"ok":{"type":"boolean","default":false},
		"tags":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["a","b","c"]}},
		"picks":{"type":"array","items":{"anyOf":[{"const":"x"},{"const":"y"}]}}
	},"required":["name"]}`
	tests := []struct {
		name    string
		content map[string]any
		want    map[string]any
		wantErr bool
	}{
		{"minimal, defaults applied", map[string]any{"name": "Ada"}, map[string]any{"name": "Ada", "ratio": 0.5, "ok": false}, false},
		{"all valid", map[string]any{"name": "Ada", "email": "ada@example.com", "site": "https://example.com", "day": "2026-07-28",
			"at": "2026-07-28T10:00:00Z", "color": "red", "hex": "#0f0", "age": 36, "ratio": 1, "ok": true, "tags": []string{"a", "b"}, "picks": []any{"y"}},
			map[string]any{"name": "Ada", "email": "ada@example.com", "site": "https://example.com", "day": "2026-07-28",
				"at": "2026-07-28T10:00:00Z", "color": "red", "hex": "#0f0", "age": 36.0, "ratio": 1.0, "ok": true, "tags": []any{"a", "b"}, "picks": []any{"y"}}, false},
		{"missing required", map[string]any{}, nil, true},
		{"too short", map[string]any{"name": "A"}, nil, true},
		{"too long", map[string]any{"name": "Adalovelace"}, nil, true},
		{"wrong type", map[string]any{"name": 3}, nil, true},
		{"bad email", map[string]any{"name": "Ada", "email": "nope"}, nil, true},
		{"bad uri", map[string]any{"name": "Ada", "site": "not a uri"}, nil, true},
		{"bad date", map[string]any{"name": "Ada", "day": "28/07/2026"}, nil, true},
		{"bad date-time", map[string]any{"name": "Ada", "at": "2026-07-28 10:00"}, nil, true},
		{"not in enum", map[string]any{"name": "Ada", "color": "blue"}, nil, true},
		{"not a const", map[string]any{"name": "Ada", "hex": "#00f"}, nil, true},
		{"fraction for integer", map[string]any{"name": "Ada", "age": 3.5}, nil, true},
		{"below minimum", map[string]any{"name": "Ada", "age": -1}, nil, true},
		{"above maximum", map[string]any{"name": "Ada", "ratio": 2}, nil, true},
		{"boolean type", map[string]any{"name": "Ada", "ok": "yes"}, nil, true},
		{"too many items", map[string]any{"name": "Ada", "tags": []string{"a", "b", "c"}}, nil, true},
		{"too few items", map[string]any{"name": "Ada", "tags": []string{}}, nil, true},
		{"item not allowed", map[string]any{"name": "Ada", "tags": []string{"z"}}, nil, true},
		{"item not a const", map[string]any{"name": "Ada", "picks": []string{"z"}}, nil, true},
		{"unknown field", map[string]any{"name": "Ada", "extra": 1}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := handler.ValidateElicitation(json.RawMessage(schema), tt.content)
			var ve *handler.ValidationError
			if tt.wantErr != errors.As(err, &ve) {
				t.Fatalf("ValidateElicitation(%v) error = %v, want error: %v", tt.content, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ValidateElicitation(%v) (-want +got):\n%s", tt.content, diff)
			}
		})
	}
}

func TestValidateElicitationBadSchema(t *testing.T) {
	if _, err := handler.ValidateElicitation(json.RawMessage(`[`), map[string]any{}); err == nil {
		t.Error("unreadable schema accepted")
	}
	got, err := handler.ValidateElicitation(nil, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("empty schema and content = %v, %v; want empty, nil", got, err)
	}
}
