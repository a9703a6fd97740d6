package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
)

// TestGolden runs the text form of every command against a single-era
// test server (so --protocol auto has to find the era) over stdio, HTTP
// and WebSocket, and compares the outputs with testdata/NAME.golden: one
// file per case, one section per era and transport.
func TestGolden(t *testing.T) {
	cases := []struct {
		name  string
		cmd   []string // command and flags
		rest  []string // arguments after the target
		stdin string
		code  int
		// dropProgress removes "progress:" lines from stderr.
		dropProgress bool
	}{
		{name: "probe", cmd: []string{"probe"}},
		{name: "tools", cmd: []string{"tools"}},
		{name: "prompts", cmd: []string{"prompts"}},
		{name: "resources", cmd: []string{"resources"}},
		{name: "templates", cmd: []string{"templates"}},
		{name: "call_add", cmd: []string{"call"}, rest: []string{"add", "a=2", "b=3.5"}},
		{name: "call_json_args", cmd: []string{"call"}, rest: []string{"echo", `{"text":"hello, world"}`}},
		{name: "call_structured", cmd: []string{"call"}, rest: []string{"structured", "city=Paris"}},
		// Progress lines are checked by TestProgress: the client may run
		// the last progress callbacks after the call returned.
		{name: "call_progress", cmd: []string{"call"}, rest: []string{"slow", "steps=3"}, dropProgress: true},
		{name: "call_is_error", cmd: []string{"call"}, rest: []string{"fail", "message=boom"}, code: exitToolError},
		{name: "call_rpc_error", cmd: []string{"call"}, rest: []string{"rpc_error", "code=-32602"}, code: exitError},
		{name: "call_elicitation", cmd: []string{"call"}, rest: []string{"ask_user"}, stdin: "\nAda\n"},
		{name: "call_elicitation_decline", cmd: []string{"call"}, rest: []string{"ask_user"}, stdin: ":decline\n"},
		{name: "call_url_elicitation", cmd: []string{"call"}, rest: []string{"ask_url"}, stdin: "\n"},
		{name: "call_sampling_refused", cmd: []string{"call"}, rest: []string{"sample"}, code: exitError},
		{name: "read", cmd: []string{"read"}, rest: []string{"file:///hello.txt"}},
		{name: "read_blob", cmd: []string{"read"}, rest: []string{"file:///logo.png"}},
		{name: "prompt", cmd: []string{"prompt"}, rest: []string{"greet", "name=Ada"}},
		{name: "complete", cmd: []string{"complete", "--prompt", "greet"}, rest: []string{"name", "al"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			for _, era := range eras {
				for _, tr := range transports {
					s := startServer(t, tr, era, testserver.Options{})
					args := s.args(tc.cmd, tc.rest...)
					r := runConduit(t, tc.stdin, args...)
					if r.code != tc.code {
						t.Errorf("%s/%s: conduit %v: exit status %d, want %d; stderr:\n%s", era, tr, args, r.code, tc.code, r.stderr)
					}
					fmt.Fprintf(&b, "### %s server over %s: conduit %s\n", era, tr, normalize(strings.Join(args, " ")))
					stderr := r.stderr
					if tc.dropProgress {
						stderr = dropLines(stderr, "progress: ")
					}
					fmt.Fprintf(&b, "--- exit %d\n--- stdout\n%s--- stderr\n%s\n", r.code, normalize(r.stdout), normalize(stderr))
				}
			}
			checkGolden(t, tc.name, b.String())
		})
	}
}

// TestTourGolden runs the default command: the embedded server, both
// eras.
func TestTourGolden(t *testing.T) {
	var b strings.Builder
	for _, args := range [][]string{nil, {"--protocol", "legacy"}} {
		r := runConduit(t, "", args...)
		if r.code != 0 {
			t.Errorf("conduit %v: exit status %d; stderr:\n%s", args, r.code, r.stderr)
		}
		fmt.Fprintf(&b, "### conduit %s\n--- stdout\n%s--- stderr\n%s\n", strings.Join(args, " "), normalize(r.stdout), normalize(r.stderr))
	}
	checkGolden(t, "tour", b.String())
}

// dropLines removes the lines that start with prefix.
func dropLines(s, prefix string) string {
	var kept []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, prefix) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}

func TestTourJSON(t *testing.T) {
	r := runConduit(t, "", "--json")
	if r.code != 0 {
		t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
	}
	var got struct {
		Probe struct {
			Era string `json:"era"`
		} `json:"probe"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Call struct {
			Tool   string `json:"tool"`
			Result struct {
				StructuredContent struct{ Sum float64 } `json:"structuredContent"`
			} `json:"result"`
		} `json:"call"`
	}
	decodeJSON(t, r, &got)
	if got.Probe.Era != "modern" || len(got.Tools) == 0 || got.Call.Tool != "add" || got.Call.Result.StructuredContent.Sum != 5 {
		t.Errorf("tour JSON = %+v", got)
	}
}

// TestTourTarget runs the tour against a stdio server: it lists the tools
// and calls none, since none of the server's tools that need no arguments
// says it only reads (its slow, big and roots would run).
func TestTourTarget(t *testing.T) {
	r := runConduit(t, "", "--json", "--", testserverBin, "-era", "legacy")
	if r.code != 0 {
		t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
	}
	var got struct {
		Probe struct{ Era string } `json:"probe"`
		Tools []protocol.Tool      `json:"tools"`
		Call  json.RawMessage      `json:"call"`
	}
	decodeJSON(t, r, &got)
	if got.Probe.Era != "legacy" || len(got.Tools) == 0 || string(got.Call) != "null" {
		t.Errorf("tour JSON: era %q, %d tools, call %s; want legacy, the tools, and no call", got.Probe.Era, len(got.Tools), got.Call)
	}
	r = runConduit(t, "", "--", testserverBin, "-era", "legacy")
	if r.code != 0 || !strings.Contains(r.stdout, "the tour calls none") {
		t.Errorf("exit status %d; stdout:\n%s", r.code, r.stdout)
	}
}

// TestPickDemoTool: on a server other than the embedded one, the tour
// calls only a tool that says it only reads and needs no arguments.
func TestPickDemoTool(t *testing.T) {
	yes, no := protocol.Bool(true), protocol.Bool(false)
	obj := json.RawMessage(`{"type":"object"}`)
	needs := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)
	tools := []protocol.Tool{
		{Name: "wipe", InputSchema: obj},
		{Name: "wipe_marked", InputSchema: obj, Annotations: &protocol.ToolAnnotations{DestructiveHint: yes}},
		{Name: "writes", InputSchema: obj, Annotations: &protocol.ToolAnnotations{ReadOnlyHint: no}},
		{Name: "contradicts", InputSchema: obj, Annotations: &protocol.ToolAnnotations{ReadOnlyHint: yes, DestructiveHint: yes}},
		{Name: "reads_with_args", InputSchema: needs, Annotations: &protocol.ToolAnnotations{ReadOnlyHint: yes}},
		{Name: "reads", InputSchema: obj, Annotations: &protocol.ToolAnnotations{ReadOnlyHint: yes}},
	}
	if name, _ := pickDemoTool(tools, false); name != "reads" {
		t.Errorf("pickDemoTool = %q, want reads", name)
	}
	if name, _ := pickDemoTool(tools[:5], false); name != "" {
		t.Errorf("pickDemoTool without a read-only tool = %q, want none", name)
	}
}

// TestRepeatGolden shows call --repeat healing a stdio server that exits
// during the run, in text form.
func TestRepeatGolden(t *testing.T) {
	var b strings.Builder
	for _, era := range eras {
		marker := filepath.Join(t.TempDir(), "exited")
		args := []string{"call", "--repeat", "4", "--replay", "all", "echo", "text=hi", "--", testserverBin, "-era", era, "-fault", "exit:method=tools/call,skip=1", "-exit-marker", marker}
		r := runConduit(t, "", args...)
		if r.code != 0 {
			t.Errorf("%s: exit status %d; stderr:\n%s", era, r.code, r.stderr)
		}
		fmt.Fprintf(&b, "### conduit call --repeat 4 --replay all echo text=hi -- TESTSERVER -era %s (exits once, at the second call)\n--- stdout\n%s--- stderr\n%s\n", era, normalize(r.stdout), normalize(r.stderr))
	}
	checkGolden(t, "call_repeat_healing", b.String())
}
