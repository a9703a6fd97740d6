package transport_test

import (
	"encoding/json"
	"errors"
	"mime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/transport"
)

// TestValidateToolHeadersEscaped checks that an annotation whose key is
// spelled with \u escapes is still found and validated.
func TestValidateToolHeadersEscaped(t *testing.T) {
	good := `{"type":"object","properties":{"region":{"type":"string","\u0078-mcp-header":"Region"}}}`
	got, err := transport.ValidateToolHeaders(json.RawMessage(good))
	if err != nil {
		t.Fatalf("ValidateToolHeaders = %v", err)
	}
	want := []transport.ParamHeader{{Name: "Region", Path: []string{"region"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ValidateToolHeaders (-want +got):\n%s", diff)
	}

	bad := `{"type":"object","properties":{"region":{"type":"object","x\u002dmcp\u002Dheader":"Region"}}}`
	_, err = transport.ValidateToolHeaders(json.RawMessage(bad))
	var the *transport.ToolHeaderError
	if !errors.As(err, &the) {
		t.Fatalf("ValidateToolHeaders(%s) = %v; want *ToolHeaderError", bad, err)
	}
}

func TestValidateToolHeadersAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	schema := json.RawMessage(benchSchemas["plain"])
	allocs := testing.AllocsPerRun(100, func() {
		if h, err := transport.ValidateToolHeaders(schema); err != nil || h != nil {
			t.Fatalf("ValidateToolHeaders = %v, %v", h, err)
		}
	})
	if allocs != 0 {
		t.Errorf("ValidateToolHeaders of a plain schema: %v allocs, want 0", allocs)
	}
}

// TestMediaType checks mediaType against mime.ParseMediaType (whose
// media type it must return, falling back to the text before ';' when the
// value does not parse), and that it does not allocate.
func TestMediaType(t *testing.T) {
	for _, ct := range []string{
		"", "application/json", "Application/JSON; charset=utf-8", " text/event-stream ",
		"text/event-stream;charset=UTF-8", "text/event-stream; bad", "text/", ";x=y",
		"application/json; charset=\"unterminated", "TEXT/HTML;a=1;a=2",
	} {
		want := ""
		if ct != "" {
			mt, _, err := mime.ParseMediaType(ct)
			if err != nil {
				mt = strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
			}
			want = mt
		}
		if got := transport.MediaType(ct); got != want {
			t.Errorf("mediaType(%q) = %q, want %q", ct, got, want)
		}
	}
	if raceEnabled {
		return
	}
	if n := testing.AllocsPerRun(100, func() { _ = transport.MediaType("text/event-stream; charset=utf-8") }); n != 0 {
		t.Errorf("mediaType: %v allocs, want 0", n)
	}
}
