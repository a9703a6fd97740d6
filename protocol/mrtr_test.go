package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/protocol"
)

func TestInputRequestDecoders(t *testing.T) {
	var res protocol.InputRequiredResult
	in := `{"resultType":"input_required","inputRequests":{
		"e":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}},
		"s":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}},
		"r":{"method":"roots/list"},
		"bad":{"method":"sampling/createMessage"}
	},"requestState":"st"}`
	if err := json.Unmarshal([]byte(in), &res); err != nil {
		t.Fatal(err)
	}
	if res.RequestState == nil || *res.RequestState != "st" {
		t.Errorf("RequestState = %v, want st", res.RequestState)
	}
	if p, err := res.InputRequests["e"].ElicitParams(); err != nil || p.Message != "name?" {
		t.Errorf("ElicitParams() = %+v, %v", p, err)
	}
	if p, err := res.InputRequests["s"].CreateMessageParams(); err != nil || p.MaxTokens != 5 {
		t.Errorf("CreateMessageParams() = %+v, %v", p, err)
	}
	if _, err := res.InputRequests["r"].ListRootsParams(); err != nil {
		t.Errorf("ListRootsParams() without params: %v", err)
	}
	if _, err := res.InputRequests["bad"].CreateMessageParams(); err == nil {
		t.Error("CreateMessageParams() without params succeeded")
	}
	if _, err := res.InputRequests["e"].CreateMessageParams(); err == nil {
		t.Error("CreateMessageParams() of an elicitation succeeded")
	}
}

func TestInputRequestRejectsBadMethod(t *testing.T) {
	for _, in := range []string{`{"method":5}`, `[]`, `"x"`} {
		var r protocol.InputRequest
		if err := json.Unmarshal([]byte(in), &r); err == nil {
			t.Errorf("Unmarshal(%s) succeeded", in)
		}
	}
}

func TestInputResponsesSet(t *testing.T) {
	var r protocol.InputResponses
	if err := r.Set("a", protocol.ElicitResult{Action: protocol.ElicitCancel}); err != nil {
		t.Fatal(err)
	}
	p := protocol.CallToolParams{Name: "t", InputResponses: r, RequestState: strp("s")}
	got, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"t","inputResponses":{"a":{"action":"cancel"}},"requestState":"s"}`
	if string(got) != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
	if err := r.Set("b", func() {}); err == nil {
		t.Error("Set of an unencodable value succeeded")
	}
}

func TestNewInputRequest(t *testing.T) {
	r, err := protocol.NewInputRequest(protocol.MethodRootsList, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(r)
	if string(got) != `{"method":"roots/list"}` {
		t.Errorf("Marshal = %s", got)
	}
	if _, err := protocol.NewInputRequest("x", make(chan int)); err == nil {
		t.Error("NewInputRequest with unencodable params succeeded")
	}
}

func TestDetailedTask(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   protocol.ErrorObject
		wantOK bool
	}{
		{"no error", `{"taskId":"t","status":"completed","createdAt":"a","lastUpdatedAt":"b","ttlMs":null,"result":{"content":[]}}`, protocol.ErrorObject{}, false},
		{"error object", `{"taskId":"t","status":"failed","createdAt":"a","lastUpdatedAt":"b","ttlMs":1,"error":{"code":-32603,"message":"boom","data":{"x":1}}}`,
			protocol.ErrorObject{Code: -32603, Message: "boom", Data: json.RawMessage(`{"x":1}`)}, true},
		{"lenient error", `{"taskId":"t","status":"failed","createdAt":"a","lastUpdatedAt":"b","ttlMs":1,"error":"broken"}`,
			protocol.ErrorObject{Message: "malformed task error", Data: json.RawMessage(`"broken"`)}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d protocol.DetailedTask
			if err := json.Unmarshal([]byte(tc.in), &d); err != nil {
				t.Fatal(err)
			}
			got, ok := d.TaskError()
			if ok != tc.wantOK {
				t.Fatalf("TaskError() ok = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("TaskError() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDetailedTaskFlatFields(t *testing.T) {
	in := `{"resultType":"complete","taskId":"t1","status":"input_required","createdAt":"a","lastUpdatedAt":"b","ttlMs":60000,"pollIntervalMs":250,"inputRequests":{"k":{"method":"roots/list"}}}`
	var d protocol.DetailedTask
	if err := json.Unmarshal([]byte(in), &d); err != nil {
		t.Fatal(err)
	}
	if d.TaskID != "t1" || d.Status != protocol.TaskInputRequired || d.TTLMs == nil || *d.TTLMs != 60000 || *d.PollIntervalMs != 250 {
		t.Errorf("decoded %+v", d)
	}
	if d.Status.Terminal() {
		t.Error("input_required is terminal")
	}
	for _, s := range []protocol.TaskStatus{protocol.TaskCompleted, protocol.TaskFailed, protocol.TaskCancelled} {
		if !s.Terminal() {
			t.Errorf("%s.Terminal() = false", s)
		}
	}
}

func TestSubscriptionFilterMissing(t *testing.T) {
	want := protocol.SubscriptionFilter{
		ToolsListChanged: true, PromptsListChanged: true,
		ResourceSubscriptions: []string{"a", "b"}, TaskIDs: []string{"t"},
	}
	ack := protocol.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"b"}}
	got := ack.Missing(want)
	wantMissing := protocol.SubscriptionFilter{PromptsListChanged: true, ResourceSubscriptions: []string{"a"}, TaskIDs: []string{"t"}}
	if d := cmp.Diff(wantMissing, got); d != "" {
		t.Errorf("Missing (-want +got):\n%s", d)
	}
	if !want.Missing(want).IsEmpty() {
		t.Error("a full acknowledgement misses something")
	}
	if (protocol.SubscriptionFilter{}).IsEmpty() != true {
		t.Error("zero filter is not empty")
	}
}

func TestServerTasksCapability(t *testing.T) {
	tests := []struct {
		in       string
		wantNil  bool
		wantCall bool
		wantErr  bool
	}{
		{`{}`, true, false, false},
		{`{"tasks":{"list":{},"cancel":{}}}`, false, false, false},
		{`{"tasks":{"requests":{"tools":{"call":{}}}}}`, false, true, false},
		{`{"tasks":[]}`, true, false, true},
	}
	for _, tc := range tests {
		var c protocol.ServerCapabilities
		if err := json.Unmarshal([]byte(tc.in), &c); err != nil {
			t.Fatal(err)
		}
		got, err := c.TasksCapability()
		if (err != nil) != tc.wantErr || (got == nil) != tc.wantNil || got.ToolCalls() != tc.wantCall {
			t.Errorf("TasksCapability() of %s = %+v, %v; want nil %v, call %v, err %v", tc.in, got, err, tc.wantNil, tc.wantCall, tc.wantErr)
		}
	}
}
