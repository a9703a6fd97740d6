package negotiation_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/google/go-cmp/cmp"
)

// TestParseDiscoverResult holds one case per rule of seed 004
// (ConduitMCP Client.DiscoverResult.from_wire).
func TestParseDiscoverResult(t *testing.T) {
	type parsed struct {
		SupportedVersions []string
		Capabilities      protocol.ServerCapabilities
		Instructions      string
		TTLMs             int64
		CacheScope        string
		ServerInfo        *protocol.Implementation
		MetaKeys          []string
	}
	base := func(mod func(p *parsed)) parsed {
		p := parsed{SupportedVersions: []string{v2026}, CacheScope: "private", MetaKeys: []string{}}
		if mod != nil {
			mod(&p)
		}
		return p
	}
	tests := []struct {
		name string
		raw  string
		want parsed
	}{
		{"minimal: supportedVersions and capabilities", `{"supportedVersions":["2026-07-28"],"capabilities":{}}`, base(nil)},
		{"resultType complete", `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{}}`, base(nil)},
		{"resultType complete, escaped", `{"resultType":"compl\u0065te","supportedVersions":["2026-07-28"],"capabilities":{}}`, base(nil)},
		{"resultType null reads as absent", `{"resultType":null,"supportedVersions":["2026-07-28"],"capabilities":{}}`, base(nil)},
		{"supportedVersions kept in the server's order", `{"supportedVersions":["2025-06-18","2026-07-28"],"capabilities":{}}`,
			base(func(p *parsed) { p.SupportedVersions = []string{v0618, v2026} })},
		{"capabilities decoded", `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true},"extensions":{"x":{}}}}`,
			base(func(p *parsed) {
				p.Capabilities = protocol.ServerCapabilities{
					Tools:      &protocol.ToolsCapability{ListChanged: true},
					Resources:  &protocol.ResourcesCapability{Subscribe: true},
					Extensions: map[string]json.RawMessage{"x": json.RawMessage(`{}`)},
				}
			})},
		{"capability member with a wrong shape is dropped", `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":"yes","prompts":{"listChanged":true},"logging":{},"completions":{},"experimental":{"e":1},"tasks":{"list":{}},"extensions":{"y":{}},"resources":{}}}`,
			base(func(p *parsed) {
				p.Capabilities = protocol.ServerCapabilities{
					Prompts:      &protocol.PromptsCapability{ListChanged: true},
					Logging:      &protocol.Empty{},
					Completions:  &protocol.Empty{},
					Experimental: map[string]json.RawMessage{"e": json.RawMessage(`1`)},
					Tasks:        json.RawMessage(`{"list":{}}`),
					Extensions:   map[string]json.RawMessage{"y": json.RawMessage(`{}`)},
					Resources:    &protocol.ResourcesCapability{},
				}
			})},
		{"instructions", `{"supportedVersions":["2026-07-28"],"capabilities":{},"instructions":"use get_weather"}`,
			base(func(p *parsed) { p.Instructions = "use get_weather" })},
		{"instructions not a string reads as empty", `{"supportedVersions":["2026-07-28"],"capabilities":{},"instructions":7}`, base(nil)},
		{"instructions null reads as empty", `{"supportedVersions":["2026-07-28"],"capabilities":{},"instructions":null}`, base(nil)},
		{"instructions escaped", `{"supportedVersions":["2026-07-28"],"capabilities":{},"instructions":"use\u0020\"it\"\n"}`,
			base(func(p *parsed) { p.Instructions = "use \"it\"\n" })},
		{"instructions of invalid UTF-8", "{\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{},\"instructions\":\"a\xffb\"}",
			base(func(p *parsed) { p.Instructions = "a\uFFFDb" })},
		{"ttlMs integer", `{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":60000}`,
			base(func(p *parsed) { p.TTLMs = 60000 })},
		{"ttlMs zero", `{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0}`, base(nil)},
		{"ttlMs absent reads as 0", `{"supportedVersions":["2026-07-28"],"capabilities":{}}`, base(nil)},
		{"ttlMs negative reads as 0", `{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":-5}`, base(nil)},
		{"ttlMs non-integer fraction reads as 0", `{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":1.5}`, base(nil)},
		{"ttlMs non-integer exponent reads as 0", `{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":1e3}`, base(nil)},
		{"ttlMs string reads as 0", `{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":"60000"}`, base(nil)},
		{"ttlMs null reads as 0", `{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":null}`, base(nil)},
		{"ttlMs huge reads as MaxInt64", `{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":99999999999999999999999}`,
			base(func(p *parsed) { p.TTLMs = math.MaxInt64 })},
		{"ttlMs hugely negative reads as 0", `{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":-99999999999999999999999}`, base(nil)},
		{"cacheScope public", `{"supportedVersions":["2026-07-28"],"capabilities":{},"cacheScope":"public"}`,
			base(func(p *parsed) { p.CacheScope = "public" })},
		{"cacheScope public, escaped", `{"supportedVersions":["2026-07-28"],"capabilities":{},"cacheScope":"pu\u0062lic"}`,
			base(func(p *parsed) { p.CacheScope = protocol.CacheScopePublic })},
		{"cacheScope private", `{"supportedVersions":["2026-07-28"],"capabilities":{},"cacheScope":"private"}`, base(nil)},
		{"cacheScope anything else reads as private", `{"supportedVersions":["2026-07-28"],"capabilities":{},"cacheScope":"PUBLIC"}`, base(nil)},
		{"cacheScope non-string reads as private", `{"supportedVersions":["2026-07-28"],"capabilities":{},"cacheScope":true}`, base(nil)},
		{"serverInfo from _meta", `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"S","version":"1","title":"T"},"k":1}}`,
			base(func(p *parsed) {
				p.ServerInfo = &protocol.Implementation{Name: "S", Version: "1", Title: "T"}
				p.MetaKeys = []string{"io.modelcontextprotocol/serverInfo", "k"}
			})},
		{"serverInfo absent is nil, _meta kept", `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"k":1}}`,
			base(func(p *parsed) { p.MetaKeys = []string{"k"} })},
		{"serverInfo not an object is nil", `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":"S"}}`,
			base(func(p *parsed) { p.MetaKeys = []string{"io.modelcontextprotocol/serverInfo"} })},
		{"serverInfo without version is nil", `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"S"}}}`,
			base(func(p *parsed) { p.MetaKeys = []string{"io.modelcontextprotocol/serverInfo"} })},
		{"serverInfo with non-string name is nil", `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":1,"version":"1"}}}`,
			base(func(p *parsed) { p.MetaKeys = []string{"io.modelcontextprotocol/serverInfo"} })},
		{"serverInfo with malformed icons is nil", `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"S","version":"1","icons":"x"}}}`,
			base(func(p *parsed) { p.MetaKeys = []string{"io.modelcontextprotocol/serverInfo"} })},
		{"serverInfo with escapes decoded", `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"S\u0031","version":"1","title":"caf\u00e9"}}}`,
			base(func(p *parsed) {
				p.ServerInfo = &protocol.Implementation{Name: "S1", Version: "1", Title: "café"}
				p.MetaKeys = []string{"io.modelcontextprotocol/serverInfo"}
			})},
		{"serverInfo keys matched as a decode folds them", `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"NAME":"S","Version":"1"}}}`,
			base(func(p *parsed) {
				p.ServerInfo = &protocol.Implementation{Name: "S", Version: "1"}
				p.MetaKeys = []string{"io.modelcontextprotocol/serverInfo"}
			})},
		{"serverInfo duplicate: the last wins", `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"A","version":"1","name":"B"}}}`,
			base(func(p *parsed) {
				p.ServerInfo = &protocol.Implementation{Name: "B", Version: "1"}
				p.MetaKeys = []string{"io.modelcontextprotocol/serverInfo"}
			})},
		{"serverInfo with more members decoded whole", `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"S","version":"1","websiteUrl":"https://x.example"}}}`,
			base(func(p *parsed) {
				p.ServerInfo = &protocol.Implementation{Name: "S", Version: "1", WebsiteURL: "https://x.example"}
				p.MetaKeys = []string{"io.modelcontextprotocol/serverInfo"}
			})},
		{"ttlMs huge with a fraction reads as 0", `{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":99999999999999999999.5}`, base(nil)},
		{"ttlMs MaxInt64 exactly", `{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":9223372036854775807}`,
			base(func(p *parsed) { p.TTLMs = math.MaxInt64 })},
		{"ttlMs MaxInt64+1 reads as MaxInt64", `{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":9223372036854775808}`,
			base(func(p *parsed) { p.TTLMs = math.MaxInt64 })},
		{"_meta not an object reads as empty", `{"supportedVersions":["2026-07-28"],"capabilities":{},"_meta":[1]}`, base(nil)},
		{"empty supportedVersions", `{"supportedVersions":[],"capabilities":{}}`,
			base(func(p *parsed) { p.SupportedVersions = []string{} })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := negotiation.ParseDiscoverResult(json.RawMessage(tc.raw))
			if err != nil {
				t.Fatalf("ParseDiscoverResult(%s) error: %v", tc.raw, err)
			}
			got := parsed{
				SupportedVersions: d.SupportedVersions,
				Capabilities:      d.Capabilities,
				Instructions:      d.Instructions,
				TTLMs:             d.TTLMs,
				CacheScope:        d.CacheScope,
				ServerInfo:        d.ServerInfo,
				MetaKeys:          []string{},
			}
			for k := range d.Meta {
				got.MetaKeys = append(got.MetaKeys, k)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Transformer("sort", sortedStrings)); diff != "" {
				t.Errorf("ParseDiscoverResult(%s) mismatch (-want +got):\n%s", tc.raw, diff)
			}
			if d.Meta == nil {
				t.Errorf("ParseDiscoverResult(%s).Meta = nil, want non-nil", tc.raw)
			}
			if string(d.Raw) != tc.raw {
				t.Errorf("ParseDiscoverResult(%s).Raw = %s", tc.raw, d.Raw)
			}
		})
	}
}

func sortedStrings(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestParseDiscoverResultInvalid: supportedVersions must be a list of
// strings, capabilities an object, resultType absent or "complete".
func TestParseDiscoverResultInvalid(t *testing.T) {
	tests := []struct{ name, raw string }{
		{"not an object", `["2026-07-28"]`},
		{"not JSON", `{`},
		{"empty", ``},
		{"null", `null`},
		{"supportedVersions missing", `{"capabilities":{}}`},
		{"supportedVersions a string", `{"supportedVersions":"2026-07-28","capabilities":{}}`},
		{"supportedVersions null", `{"supportedVersions":null,"capabilities":{}}`},
		{"supportedVersions with a number", `{"supportedVersions":["2026-07-28",1],"capabilities":{}}`},
		{"capabilities missing", `{"supportedVersions":["2026-07-28"]}`},
		{"capabilities an array", `{"supportedVersions":["2026-07-28"],"capabilities":[]}`},
		{"capabilities null", `{"supportedVersions":["2026-07-28"],"capabilities":null}`},
		{"resultType input_required", `{"resultType":"input_required","supportedVersions":["2026-07-28"],"capabilities":{}}`},
		{"resultType complete with a trailing escape", `{"resultType":"complete\n","supportedVersions":["2026-07-28"],"capabilities":{}}`},
		{"resultType not a string", `{"resultType":1,"supportedVersions":["2026-07-28"],"capabilities":{}}`},
		{"text after the object", `{"supportedVersions":["2026-07-28"],"capabilities":{}} x`},
		{"two objects", `{"supportedVersions":["2026-07-28"],"capabilities":{}}{}`},
		{"a trailing comma", `{"supportedVersions":["2026-07-28"],"capabilities":{},}`},
		{"a bad value after the members read", `{"supportedVersions":["2026-07-28"],"capabilities":{},"x":[1,]}`},
		{"nested too deep", `{"supportedVersions":["2026-07-28"],"capabilities":{},"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := negotiation.ParseDiscoverResult(json.RawMessage(tc.raw))
			var ne *negotiation.Error
			if !errors.As(err, &ne) || ne.Kind != negotiation.KindProtocol || ne.Reason != negotiation.ReasonInvalidDiscoverResult {
				t.Fatalf("ParseDiscoverResult(%s) = %v, %v; want *Error{KindProtocol, %q}", tc.raw, d, err, negotiation.ReasonInvalidDiscoverResult)
			}
			if d != nil {
				t.Errorf("ParseDiscoverResult(%s) returned a result with its error", tc.raw)
			}
		})
	}
}

// TestParseDiscoverResultDepth: a member nested as deep as encoding/json
// accepts is read, one level deeper fails, as json.Valid says.
func TestParseDiscoverResultDepth(t *testing.T) {
	for _, n := range []int{9999, 10000} {
		raw := `{"supportedVersions":["2026-07-28"],"capabilities":{},"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
		_, err := negotiation.ParseDiscoverResult(json.RawMessage(raw))
		if valid := json.Valid([]byte(raw)); (err == nil) != valid {
			t.Errorf("%d nested arrays in a member: ParseDiscoverResult = %v, json.Valid = %v", n, err, valid)
		}
	}
}

// TestParseDiscoverResultSpecExample reads the spec's own example
// (2026-07-28 examples/DiscoverResult/server-capabilities-discovery.json,
// copied into testdata so that the test needs nothing outside the module).
func TestParseDiscoverResultSpecExample(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "server-capabilities-discovery.json"))
	if err != nil {
		t.Fatalf("reading the spec example: %v", err)
	}
	d, err := negotiation.ParseDiscoverResult(raw)
	if err != nil {
		t.Fatalf("ParseDiscoverResult(example) error: %v", err)
	}
	want := &protocol.Implementation{Name: "ExampleServer", Version: "1.0.0"}
	if diff := cmp.Diff(want, d.ServerInfo); diff != "" {
		t.Errorf("ServerInfo mismatch (-want +got):\n%s", diff)
	}
	if d.TTLMs != 3600000 || d.CacheScope != "public" || d.Capabilities.Tools == nil || d.Instructions == "" {
		t.Errorf("ParseDiscoverResult(example) = %+v", d)
	}
}

// TestParseDiscoverResultOwnsItsValues checks that the result does not
// alias the caller's bytes (Meta's values point into the result's own
// copy), and that keys match as in a decoded map: exactly, after
// unescaping, the last duplicate winning.
func TestParseDiscoverResultOwnsItsValues(t *testing.T) {
	raw := []byte(`{"supportedVersions":["x"],"supportedVersions":["2026-07-28"],"capabilities":{},` +
		`"cacheScope":"private","cache\u0053cope":"public","TTLMS":5,` +
		`"_meta":{"k":"v","io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`)
	d, err := negotiation.ParseDiscoverResult(raw)
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		raw[i] = ' '
	}
	if got := string(d.Meta["k"]); got != `"v"` {
		t.Errorf(`Meta["k"] = %s after the input changed, want "v"`, got)
	}
	if d.ServerInfo == nil || d.ServerInfo.Name != "s" {
		t.Errorf("ServerInfo = %+v", d.ServerInfo)
	}
	if len(d.SupportedVersions) != 1 || d.SupportedVersions[0] != "2026-07-28" {
		t.Errorf("SupportedVersions = %q, want the last duplicate", d.SupportedVersions)
	}
	if d.CacheScope != protocol.CacheScopePublic {
		t.Errorf("CacheScope = %q, want the escaped key's public", d.CacheScope)
	}
	if d.TTLMs != 0 {
		t.Errorf("TTLMs = %d, want 0: TTLMS is another key", d.TTLMs)
	}
}

// TestParseDiscoverResultAllocs: a discover result of the common shape
// (string members without escapes, capabilities of tools, prompts,
// resources, logging and completions, a serverInfo of name and version,
// an integer ttlMs) is read with no more allocations than measured once
// those stopped going through encoding/json (26 before; 13 before
// supportedVersions of plain strings skipped the decoder, 11 before the
// capabilities were read in place).
func TestParseDiscoverResultAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	raw := json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},"logging":{}},` +
		`"ttlMs":60000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"S","version":"1.0.0"}}}`)
	n := testing.AllocsPerRun(100, func() {
		if _, err := negotiation.ParseDiscoverResult(raw); err != nil {
			t.Fatal(err)
		}
	})
	if n > 10 {
		t.Errorf("ParseDiscoverResult allocates %v times, want at most 10", n)
	}
}

// TestParseDiscoverResultVersionsAsDecoded: supportedVersions reads as
// encoding/json decodes it into a []string, whether the fast path for
// plain strings takes it or the decoder does (escapes, invalid UTF-8,
// spaces, an empty list), and a list that holds anything but strings is
// refused.
func TestParseDiscoverResultVersionsAsDecoded(t *testing.T) {
	for _, sv := range []string{
		`["2026-07-28"]`, `[ "2025-06-18" , "2026-07-28" ]`, "[\n\t\"a\"\r\n]", `[]`, `[ ]`, `[""]`,
		`["2026-07-2\u0038"]`, `["a\"b","c"]`, "[\"caf\xc3\xa9\"]", "[\"bad\xff\"]", `["a",1]`, `[null]`, `["a",["b"]]`, `[{}]`,
	} {
		raw := json.RawMessage(`{"supportedVersions":` + sv + `,"capabilities":{}}`)
		d, err := negotiation.ParseDiscoverResult(raw)
		var want []string
		if json.Unmarshal([]byte(sv), &want) != nil {
			if err == nil {
				t.Errorf("%s: parsed as %q, want an error", sv, d.SupportedVersions)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", sv, err)
			continue
		}
		if want == nil {
			want = []string{}
		}
		if !reflect.DeepEqual(d.SupportedVersions, want) || d.SupportedVersions == nil {
			t.Errorf("%s: SupportedVersions = %q, want %q", sv, d.SupportedVersions, want)
		}
	}
}

// TestParseDiscoverResultContradictoryCapabilities: capabilities holding a
// member of the wrong shape read as the whole object decoded without that
// member, every time, whatever the other members say. Members that name
// one capability twice (a duplicate, or a key differing in case) used to
// be merged in map order once some member had the wrong shape: the
// outcome changed from one parse to the next, and could differ from what
// the same members said without the bad one.
func TestParseDiscoverResultContradictoryCapabilities(t *testing.T) {
	tests := []struct{ caps, without string }{
		{`{"tools":{"listChanged":true},"Tools":{"listChanged":false},"logging":5}`, `{"tools":{"listChanged":true},"Tools":{"listChanged":false}}`},
		{`{"Tools":{"listChanged":false},"tools":{"listChanged":true},"prompts":[]}`, `{"Tools":{"listChanged":false},"tools":{"listChanged":true}}`},
		{`{"tools":{"listChanged":true},"tools":{},"logging":5}`, `{"tools":{"listChanged":true},"tools":{}}`},
		{`{"resources":{"subscribe":true},"RESOURCES":{"listChanged":true},"tools":"x","Resources":{"listChanged":"yes"}}`, `{"resources":{"subscribe":true},"RESOURCES":{"listChanged":true}}`},
		{`{"experimental":{"a":1},"Experimental":{"b":2},"tools":1,"experimental":{"a":3}}`, `{"experimental":{"a":1},"Experimental":{"b":2},"experimental":{"a":3}}`},
	}
	for _, tc := range tests {
		var want protocol.ServerCapabilities
		if err := json.Unmarshal([]byte(tc.without), &want); err != nil {
			t.Fatal(err)
		}
		for range 50 {
			d, err := negotiation.ParseDiscoverResult(json.RawMessage(`{"supportedVersions":["2026-07-28"],"capabilities":` + tc.caps + `}`))
			if err != nil {
				t.Fatalf("ParseDiscoverResult with capabilities %s: %v", tc.caps, err)
			}
			if diff := cmp.Diff(want, d.Capabilities); diff != "" {
				t.Errorf("ParseDiscoverResult with capabilities %s: Capabilities mismatch (-want +got):\n%s", tc.caps, diff)
				break
			}
		}
	}
}

// TestParseDiscoverResultManyMembers: a result whose capabilities or
// supportedVersions hold hundreds of thousands of members of the wrong
// shape costs memory in proportion to its size. Each capability member
// used to be decoded on its own once one did not fit, and a list of
// numbers was decoded into strings before it was refused, an error value
// apiece: a 16 MiB answer took seconds and gigabytes.
func TestParseDiscoverResultManyMembers(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var caps strings.Builder
	caps.WriteString(`{`)
	for i := range 1 << 15 {
		fmt.Fprintf(&caps, `"x%d":{},"tools":{"listChanged":"yes"},`, i)
	}
	caps.WriteString(`"tools":{"listChanged":true},"logging":5}`)
	tests := []struct {
		name, raw string
		wantErr   bool
	}{
		{"capabilities", `{"supportedVersions":["2026-07-28"],"capabilities":` + caps.String() + `}`, false},
		{"supportedVersions", `{"supportedVersions":[` + strings.Repeat("0,", 1<<19) + `"2026-07-28"],"capabilities":{}}`, true},
	}
	for _, tc := range tests {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d, err := negotiation.ParseDiscoverResult(json.RawMessage(tc.raw))
		runtime.ReadMemStats(&after)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: ParseDiscoverResult error %v, want error %v", tc.name, err, tc.wantErr)
		}
		if err == nil && (d.Capabilities.Tools == nil || !d.Capabilities.Tools.ListChanged || d.Capabilities.Logging != nil) {
			t.Errorf("%s: Capabilities = %+v, want tools.listChanged alone", tc.name, d.Capabilities)
		}
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(4*len(tc.raw)+1<<20); got > limit {
			t.Errorf("%s: ParseDiscoverResult of %d bytes allocated %d bytes, want at most %d", tc.name, len(tc.raw), got, limit)
		}
	}
}

// BenchmarkClassifyProbe: a probe answered with a typical DiscoverResult,
// classified (which checks its shape and parses it).
func BenchmarkClassifyProbe(b *testing.B) {
	raw := json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},"logging":{},` +
		`"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}},"instructions":"Use the tools.",` +
		`"ttlMs":60000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"S","version":"1.0.0"}}}`)
	pc := negotiation.ProbeContext{ClientVersions: []string{"2026-07-28", "2025-11-25"}, RequestedVersion: "2026-07-28", FallbackAvailable: true, Transport: negotiation.TransportHTTP}
	o := negotiation.Outcome{Kind: negotiation.OutcomeResult, Result: raw, Status: 200}
	b.ReportAllocs()
	for b.Loop() {
		if v := negotiation.ClassifyProbe(pc, o); v.Kind != negotiation.VerdictModern {
			b.Fatalf("verdict %v", v)
		}
	}
}

// FuzzParseDiscoverResult: no input panics, and only valid JSON (as
// json.Valid has it) is ever read as a result.
func FuzzParseDiscoverResult(f *testing.F) {
	for _, seed := range []string{
		`{"supportedVersions":["2026-07-28"],"capabilities":{}}`,
		`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`,
		`{"supportedVersions":["2026-07-28"],"capabilities":{}} x`,
		`{"supportedVersions":["2026-07-28"],"capabilities":{},"x":[1,]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := negotiation.ParseDiscoverResult(raw)
		if err == nil && !json.Valid(raw) {
			t.Fatalf("ParseDiscoverResult(%q) read invalid JSON as %+v", raw, d)
		}
	})
}
