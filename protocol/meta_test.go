package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/protocol"
)

func TestRequestMeta(t *testing.T) {
	m, err := protocol.RequestMeta{
		ProtocolVersion:    protocol.Version20260728,
		ClientCapabilities: protocol.ClientCapabilities{Elicitation: &protocol.ElicitationCapability{}},
		ClientInfo:         &protocol.Implementation{Name: "c", Version: "1"},
		LogLevel:           protocol.LevelInfo,
		ProgressToken:      protocol.StringProgressToken("p1"),
		Extra: protocol.Meta{
			"traceparent":                json.RawMessage(`"00-1-2-01"`),
			protocol.MetaProtocolVersion: json.RawMessage(`"overridden?"`),
		},
	}.Meta()
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info","io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"p1","traceparent":"00-1-2-01"}`
	if string(got) != want {
		t.Errorf("RequestMeta.Meta() = %s\nwant %s", got, want)
	}

	// The accessors read the keys back.
	if v := m.ProtocolVersion(); v != protocol.Version20260728 {
		t.Errorf("ProtocolVersion() = %q", v)
	}
	if c := m.ClientCapabilities(); c == nil || c.Elicitation == nil {
		t.Errorf("ClientCapabilities() = %+v, want elicitation", c)
	}
	if ci := m.ClientInfo(); ci == nil || ci.Name != "c" {
		t.Errorf("ClientInfo() = %+v", ci)
	}
	if l := m.LogLevel(); l != protocol.LevelInfo {
		t.Errorf("LogLevel() = %q", l)
	}
	if tok := m.ProgressToken(); tok != protocol.StringProgressToken("p1") {
		t.Errorf("ProgressToken() = %v", tok)
	}
}

func TestRequestMetaMinimal(t *testing.T) {
	m, err := protocol.RequestMeta{ProtocolVersion: protocol.Version20260728}.Meta()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(m)
	want := `{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	if string(got) != want {
		t.Errorf("Meta() = %s, want %s", got, want)
	}
}

func TestMetaAccessorsLenient(t *testing.T) {
	var m protocol.Meta
	if err := json.Unmarshal([]byte(`{
		"io.modelcontextprotocol/serverInfo": "not an object",
		"io.modelcontextprotocol/subscriptionId": 17,
		"io.modelcontextprotocol/related-task": {"taskId": "t-9"},
		"progressToken": 1.5
	}`), &m); err != nil {
		t.Fatal(err)
	}
	if si := m.ServerInfo(); si != nil {
		t.Errorf("ServerInfo() = %+v, want nil for a malformed value", si)
	}
	if id := m.SubscriptionID(); id != protocol.IntRequestID(17) {
		t.Errorf("SubscriptionID() = %v, want 17", id)
	}
	if rt := m.RelatedTask(); rt != "t-9" {
		t.Errorf("RelatedTask() = %q, want t-9", rt)
	}
	if tok := m.ProgressToken(); tok.IsValid() {
		t.Errorf("ProgressToken() = %v, want absent for 1.5", tok)
	}
	var nilMeta protocol.Meta
	if nilMeta.ProtocolVersion() != "" || nilMeta.ClientCapabilities() != nil || nilMeta.SubscriptionID().IsValid() {
		t.Error("accessors on a nil Meta returned values")
	}
}

func TestMetaSetAndClone(t *testing.T) {
	var m protocol.Meta
	if err := m.Set(protocol.MetaServerInfo, protocol.Implementation{Name: "s", Version: "2"}); err != nil {
		t.Fatal(err)
	}
	c := m.Clone()
	c[protocol.MetaServerInfo][2] = 'X' // must not affect m
	if d := cmp.Diff(&protocol.Implementation{Name: "s", Version: "2"}, m.ServerInfo()); d != "" {
		t.Errorf("ServerInfo() after Set (-want +got):\n%s", d)
	}
	if err := m.Set("bad", make(chan int)); err == nil {
		t.Error("Set of an unencodable value succeeded")
	}
	if protocol.Meta(nil).Clone() != nil {
		t.Error("Clone of nil is not nil")
	}
}
