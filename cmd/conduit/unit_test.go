package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/protocol"
)

const testSchema = `{"type":"object","properties":{
	"text":{"type":"string"},"n":{"type":"integer"},"x":{"type":"number"},"on":{"type":"boolean"},
	"obj":{"type":"object"},"list":{"type":"array"},"maybe":{"type":["integer","null"]},"any":{}},
	"required":["text","n"]}`

func TestParseToolArgs(t *testing.T) {
	schema := parseObjectSchema(json.RawMessage(testSchema))
	tests := []struct {
		name    string
		args    []string
		want    string // compact JSON; "" for none
		wantErr string
	}{
		{name: "none", args: nil, want: ""},
		{name: "json object", args: []string{`{"text":"hi","n":1}`}, want: `{"text":"hi","n":1}`},
		{name: "typed", args: []string{"text=42", "n=7", "x=2.50", "on=true", "obj={\"a\":1}", "list=[1,2]", "maybe=null", "any=5"},
			want: `{"any":"5","list":[1,2],"maybe":null,"n":7,"obj":{"a":1},"on":true,"text":"42","x":2.50}`},
		{name: "union picks the first fitting type", args: []string{"maybe=3"}, want: `{"maybe":3}`},
		{name: "unknown key is a string", args: []string{"other=1"}, want: `{"other":"1"}`},
		{name: "raw JSON", args: []string{"text:=[1,2]", "n:=\"x\""}, want: `{"n":"x","text":[1,2]}`},
		{name: "value with =", args: []string{"text=a=b"}, want: `{"text":"a=b"}`},
		{name: "bad integer", args: []string{"n=1.5"}, wantErr: "wants integer"},
		{name: "bad boolean", args: []string{"on=maybe"}, wantErr: "wants boolean"},
		{name: "array is not an object", args: []string{"obj=[1]"}, wantErr: "wants object"},
		{name: "bad raw JSON", args: []string{"x:=nope"}, wantErr: "not valid JSON"},
		{name: "not key=value", args: []string{"text"}, wantErr: "want key=value"},
		{name: "duplicate", args: []string{"n=1", "n=2"}, wantErr: "given twice"},
		{name: "bad JSON object", args: []string{`{"a":`}, wantErr: "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseToolArgs(tc.args, schema)
			if tc.wantErr != "" {
				var ue *usageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want a usage error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSchemaSummary(t *testing.T) {
	s := parseObjectSchema(json.RawMessage(testSchema))
	if got, want := s.summary(), "text*, n*, x, on, obj, list, maybe, any"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
	if got := parseObjectSchema(json.RawMessage(`{"type":"object","required":["a"]}`)).summary(); got != "a*" {
		t.Errorf("summary without properties = %q, want a*", got)
	}
	if got := parseObjectSchema(json.RawMessage(`not json`)).summary(); got != "" {
		t.Errorf("summary of garbage = %q", got)
	}
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		name       string
		positional []string
		command    []string
		fixed      int
		want       target
		wantRest   []string
		wantErr    bool
	}{
		{name: "none", want: target{kind: targetEmbedded}},
		{name: "url", positional: []string{"https://x/mcp", "echo"}, fixed: -1, want: target{kind: targetURL, url: "https://x/mcp"}, wantRest: []string{"echo"}},
		{name: "websocket", positional: []string{"WSS://x/mcp"}, fixed: 0, want: target{kind: targetURL, url: "WSS://x/mcp"}, wantRest: []string{}},
		{name: "command wins", positional: []string{"http://x", "y"}, command: []string{"srv", "-a"}, fixed: -1, want: target{kind: targetCommand, argv: []string{"srv", "-a"}}, wantRest: []string{"http://x", "y"}},
		{name: "lone URI of a fixed command", positional: []string{"https://docs/readme"}, fixed: 1, want: target{kind: targetEmbedded}, wantRest: []string{"https://docs/readme"}},
		{name: "URI after target", positional: []string{"https://x/mcp", "https://docs/readme"}, fixed: 1, want: target{kind: targetURL, url: "https://x/mcp"}, wantRest: []string{"https://docs/readme"}},
		{name: "other scheme is an argument", positional: []string{"file:///a"}, fixed: 1, want: target{kind: targetEmbedded}, wantRest: []string{"file:///a"}},
		{name: "no host", positional: []string{"http://", "x"}, fixed: -1, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, rest, err := parseTarget(tc.positional, tc.command, tc.fixed)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("no error; target %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(target{})); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
			if len(rest) == 0 && len(tc.wantRest) == 0 {
				return
			}
			if diff := cmp.Diff(tc.wantRest, rest); diff != "" {
				t.Errorf("rest (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	tests := []struct {
		in   []time.Duration
		p    int
		want time.Duration
	}{
		{nil, 50, 0},
		{d[:1], 99, 1},
		{d, 50, 50},
		{d, 99, 99},
		{d[:10], 99, 10},
		{d[:10], 50, 5},
	}
	for _, tc := range tests {
		if got := percentile(tc.in, tc.p); got != tc.want {
			t.Errorf("percentile(%d items, %d) = %v, want %v", len(tc.in), tc.p, got, tc.want)
		}
	}
}

func TestProgressRendering(t *testing.T) {
	total := 4.0
	tests := []struct {
		pp       protocol.ProgressParams
		wantText string
		wantBar  string
	}{
		{protocol.ProgressParams{Progress: 1, Total: &total, Message: "one\nline"}, "1/4 (25%) one line", "[#######-----------------------]"},
		{protocol.ProgressParams{Progress: 4, Total: &total}, "4/4 (100%)", "[" + strings.Repeat("#", barWidth) + "]"},
		{protocol.ProgressParams{Progress: 8, Total: &total}, "8/4 (100%)", "[" + strings.Repeat("#", barWidth) + "]"},
		{protocol.ProgressParams{Progress: 2.5}, "2.50", "[--#" + strings.Repeat("-", barWidth-3) + "]"},
	}
	for _, tc := range tests {
		if got := progressText(tc.pp); got != tc.wantText {
			t.Errorf("progressText(%+v) = %q, want %q", tc.pp, got, tc.wantText)
		}
		if got := renderBar(tc.pp); got != tc.wantBar {
			t.Errorf("renderBar(%+v) = %q, want %q", tc.pp, got, tc.wantBar)
		}
	}
	var b strings.Builder
	pv := newProgressView(&b, true, nil)
	pv.update(protocol.ProgressParams{Progress: 1, Total: &total})
	pv.clear()
	pv.clear()
	pv.finish()
	pv.update(protocol.ProgressParams{Progress: 2, Total: &total}) // dropped
	if got, want := b.String(), "\r\x1b[K[#######-----------------------] 1/4 (25%)\r\x1b[K"; got != want {
		t.Errorf("terminal output %q, want %q", got, want)
	}
}

// TestProgressBarHugeProgress checks that a progress value past what an
// int holds, without a total, moves the bar's marker instead of indexing
// outside the bar (a panic on the client's dispatcher goroutine).
func TestProgressBarHugeProgress(t *testing.T) {
	for _, p := range []float64{1e19, 1e300, -1e300} {
		bar := renderBar(protocol.ProgressParams{Progress: p})
		if len(bar) != barWidth+2 || strings.Count(bar, "#") != 1 {
			t.Errorf("renderBar(progress %g) = %q, want one marker in %d cells", p, bar, barWidth)
		}
	}
}

// TestElicitForm drives the prompter with scripted answers.
func TestElicitForm(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","title":"Name"},
		"age":{"type":"integer","minimum":0},
		"color":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}],"default":"g"},
		"tags":{"type":"array","items":{"enum":["a","b","c"]}},
		"ok":{"type":"boolean","default":true}},
		"required":["name","age"]}`)
	tests := []struct {
		name  string
		input string
		want  *protocol.ElicitResult
	}{
		{"accept with defaults", "Ada\nabc\n36\n\n1,c\n\n", &protocol.ElicitResult{Action: "accept",
			Content: map[string]any{"name": "Ada", "age": 36.0, "color": "g", "tags": []any{"a", "c"}, "ok": true}}},
		{"choice by title", "Bo\n-1\n3\nred\n\nno\n", nil}, // -1 fails minimum, the form is asked again, then input ends
		{"decline", "Ada\n:decline\n", &protocol.ElicitResult{Action: "decline"}},
		{"cancel", ":cancel\n", &protocol.ElicitResult{Action: "cancel"}},
		{"end of input", "Ada\n", &protocol.ElicitResult{Action: "cancel"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			pr := &prompter{in: newLineReader(strings.NewReader(tc.input)), out: &out}
			got, err := pr.Elicit(context.Background(), &protocol.ElicitParams{Message: "Who?", RequestedSchema: schema})
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == nil {
				want = &protocol.ElicitResult{Action: "cancel"}
				if !strings.Contains(out.String(), "does not fit the form") {
					t.Errorf("no validation message:\n%s", out.String())
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\noutput:\n%s", diff, out.String())
			}
		})
	}
}

func TestElicitURL(t *testing.T) {
	for input, want := range map[string]string{"\n": "accept", ":decline\n": "decline", "": "cancel"} {
		var out strings.Builder
		pr := &prompter{in: newLineReader(strings.NewReader(input)), out: &out}
		got, err := pr.ElicitURL(context.Background(), &protocol.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://example.com/x"})
		if err != nil || got.Action != want {
			t.Errorf("input %q: %+v, %v; want %s", input, got, err, want)
		}
		if !strings.Contains(out.String(), "https://example.com/x") {
			t.Errorf("the URL is not shown:\n%s", out.String())
		}
	}
}

func TestParseSamplingResult(t *testing.T) {
	good := `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`
	if _, err := parseSamplingResult([]byte(good)); err != nil {
		t.Errorf("valid result: %v", err)
	}
	for _, bad := range []string{``, `[]`, `{"role":"robot","content":{"type":"text","text":"x"},"model":"m"}`, `{"role":"assistant","content":{"type":"text","text":"x"}}`, `{"role":"assistant","model":"m"}`} {
		if _, err := parseSamplingResult([]byte(bad)); err == nil {
			t.Errorf("parseSamplingResult(%q) accepted it", bad)
		}
	}
}

// TestDescribeEvent: a resync after an overflow says how many events were
// dropped; one after a re-established stream says so.
func TestDescribeEvent(t *testing.T) {
	tests := []struct {
		ev   client.Event
		want string
	}{
		{client.Event{Resync: true}, "resync: the subscription was re-established; changes may have been missed"},
		{client.Event{Resync: true, Dropped: 12}, "resync: 12 events dropped while this listener fell behind; changes may have been missed"},
		{client.Event{Method: protocol.NotificationResourcesUpdated, URI: "file:///a"}, "resource updated: file:///a"},
		{client.Event{Method: "vendor/x"}, "vendor/x"},
	}
	for _, tt := range tests {
		if got := describeEvent(tt.ev); got != tt.want {
			t.Errorf("describeEvent(%+v) = %q, want %q", tt.ev, got, tt.want)
		}
	}
}
