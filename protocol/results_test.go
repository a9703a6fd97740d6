package protocol_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/protocol"
)

func TestTextMessageResult(t *testing.T) {
	r := protocol.TextMessageResult("m1", "Paris")
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m1","stopReason":"endTurn"}`
	if string(b) != want {
		t.Errorf("TextMessageResult encodes as\n%s\nwant\n%s", b, want)
	}
	blocks, err := r.Blocks()
	if err != nil || len(blocks) != 1 || blocks[0].Text != "Paris" {
		t.Errorf("Blocks() = %+v, %v", blocks, err)
	}
}

func TestElicitationResults(t *testing.T) {
	tests := []struct {
		got  *protocol.ElicitResult
		want string
	}{
		{protocol.AcceptElicitation(map[string]any{"name": "Ada"}), `{"action":"accept","content":{"name":"Ada"}}`},
		{protocol.AcceptElicitation(nil), `{"action":"accept"}`},
		{protocol.DeclineElicitation(), `{"action":"decline"}`},
		{protocol.CancelElicitation(), `{"action":"cancel"}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.got)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, string(b)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
}

func ExampleTextMessageResult() {
	r := protocol.TextMessageResult("my-model", "Paris")
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	// Output: {"role":"assistant","content":{"type":"text","text":"Paris"},"model":"my-model","stopReason":"endTurn"}
}

func ExampleAcceptElicitation() {
	b, _ := json.Marshal(protocol.AcceptElicitation(map[string]any{"name": "Ada"}))
	fmt.Println(string(b))
	// Output: {"action":"accept","content":{"name":"Ada"}}
}
