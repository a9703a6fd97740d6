package engine

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/protocol"
)

// oldPrefix is buildPrefix as it was, all through json.Marshal.
func oldPrefix(version string, caps protocol.ClientCapabilities, info protocol.Implementation) []byte {
	v, _ := json.Marshal(version)
	c, _ := json.Marshal(caps)
	i, _ := json.Marshal(info)
	b := []byte(`"` + protocol.MetaProtocolVersion + `":`)
	b = append(b, v...)
	b = append(b, `,"`+protocol.MetaClientCapabilities+`":`...)
	b = append(b, c...)
	b = append(b, `,"`+protocol.MetaClientInfo+`":`...)
	return append(b, i...)
}

// TestAppendPrefixMatchesMarshal: the prefix, and initialize's params
// (initParams), are byte for byte what
// json.Marshal writes, for the shapes appended directly and for those
// that fall back.
func TestAppendPrefixMatchesMarshal(t *testing.T) {
	e := &protocol.Empty{}
	capsCases := []protocol.ClientCapabilities{
		{},
		{Roots: &protocol.RootsCapability{}},
		{Roots: &protocol.RootsCapability{ListChanged: true}},
		{Sampling: &protocol.SamplingCapability{}},
		{Sampling: &protocol.SamplingCapability{Context: e}},
		{Sampling: &protocol.SamplingCapability{Tools: e}},
		{Sampling: &protocol.SamplingCapability{Context: e, Tools: e}},
		{Elicitation: &protocol.ElicitationCapability{}},
		{Elicitation: &protocol.ElicitationCapability{URL: e}},
		{Elicitation: &protocol.ElicitationCapability{Form: e, URL: e}},
		{Roots: &protocol.RootsCapability{}, Elicitation: &protocol.ElicitationCapability{Form: e}},
		{Sampling: &protocol.SamplingCapability{}, Elicitation: &protocol.ElicitationCapability{Form: e}},
		{Roots: &protocol.RootsCapability{ListChanged: true}, Sampling: &protocol.SamplingCapability{Tools: e}, Elicitation: &protocol.ElicitationCapability{}},
		{Experimental: map[string]json.RawMessage{}},
		{Experimental: map[string]json.RawMessage{"x": json.RawMessage(`{}`)}, Roots: &protocol.RootsCapability{}},
		{Tasks: &protocol.ClientTasksCapability{List: e}},
		{Extensions: map[string]json.RawMessage{"io.x/y": json.RawMessage(`{"a":1}`)}},
	}
	infoCases := []protocol.Implementation{
		{},
		{Name: "conduit", Version: Version},
		{Name: "my client", Version: "1.2.3-rc.1+build"},
		{Name: `quote"d`, Version: "1"},
		{Name: "a<b>&c", Version: "1"},
		{Name: "ünï", Version: "1"},
		{Name: "tab\t", Version: "1"},
		{Name: "n", Version: "1", Title: "T"},
		{Name: "n", Version: "1", Description: "d", WebsiteURL: "https://example.com"},
		{Name: "n", Version: "1", Icons: []protocol.Icon{{Src: "https://example.com/i.png"}}},
	}
	for _, version := range []string{protocol.LatestVersion, "2026-07-28", `odd"version`} {
		for _, caps := range capsCases {
			for _, info := range infoCases {
				got, err := buildPrefix(version, caps, info)
				if err != nil {
					t.Fatalf("buildPrefix: %v", err)
				}
				if want := oldPrefix(version, caps, info); string(got) != string(want) {
					t.Errorf("buildPrefix(%q, %+v, %+v)\n got %s\nwant %s", version, caps, info, got, want)
				}
				got, err = initParams(version, &caps, &info)
				if err != nil {
					t.Fatalf("initParams: %v", err)
				}
				want, _ := json.Marshal(protocol.InitializeParams{ProtocolVersion: version, Capabilities: caps, ClientInfo: info})
				if string(got) != string(want) {
					t.Errorf("initParams(%q, %+v, %+v)\n got %s\nwant %s", version, caps, info, got, want)
				}
			}
		}
	}
}

// TestAppendPrefixKnowsEveryField fails when a field is added to a type
// the prefix encodes by hand: appendCaps and appendInfo must then learn
// it (or fall back for it).
func TestAppendPrefixKnowsEveryField(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want int
	}{
		{protocol.ClientCapabilities{}, 6},
		{protocol.RootsCapability{}, 1},
		{protocol.SamplingCapability{}, 2},
		{protocol.ElicitationCapability{}, 2},
		{protocol.Empty{}, 0},
		{protocol.Implementation{}, 6},
	} {
		if n := reflect.TypeOf(tc.v).NumField(); n != tc.want {
			t.Errorf("%T has %d fields; prefix.go knows %d", tc.v, n, tc.want)
		}
	}
}

// TestBuildPrefixAllocs: the common shape costs one allocation.
func TestBuildPrefixAllocs(t *testing.T) {
	caps := protocol.ClientCapabilities{Roots: &protocol.RootsCapability{ListChanged: true}}
	info := protocol.Implementation{Name: "conduit", Version: Version}
	n := testing.AllocsPerRun(100, func() {
		if _, err := buildPrefix(protocol.LatestVersion, caps, info); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Errorf("buildPrefix allocates %v times, want 1", n)
	}
}

// TestStepLogsOnlyAtDebug: a negotiation step costs no allocation when
// the logger is not at Debug, and is still logged when it is.
func TestStepLogsOnlyAtDebug(t *testing.T) {
	st := TraceStep{Step: "probe", Sent: "server/discover", Outcome: "result", Verdict: "modern"}
	d := &driver{s: &Session{log: slog.New(slog.DiscardHandler)}, ctx: t.Context()}
	d.step(st)
	if n := testing.AllocsPerRun(100, func() {
		d.trace = d.trace[:0]
		d.step(st)
	}); n != 0 {
		t.Errorf("step allocates %v times with logging off, want 0", n)
	}
	var buf bytes.Buffer
	d = &driver{s: &Session{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}, ctx: t.Context()}
	d.step(st)
	if got := buf.String(); !strings.Contains(got, "negotiation step") || !strings.Contains(got, "sent=server/discover") {
		t.Errorf("debug log = %q", got)
	}
	if len(d.trace) != 1 || d.trace[0] != st {
		t.Errorf("trace = %+v", d.trace)
	}
}
