package toolsettest

import (
	"testing"

	"github.com/conduitmcp/conduit/protocol"
)

// CollidingTools are two sampling tools whose names differ only in a
// character the providers refuse: a sampler that declared both under the
// name it makes fit ("get_weather") would be refused by the API, and a
// call of that name would go back to one of them.
func CollidingTools() []protocol.Tool {
	return []protocol.Tool{{Name: "get.weather"}, {Name: "get_weather"}}
}

// CheckSamplingNames fails t unless a sampler given [CollidingTools]
// declared them to the model under distinct names (declared, in the
// tools' order) and answered (res, err) with one tool_use block per
// declared name, in that order, each under the server's name of its tool.
func CheckSamplingNames(t testing.TB, declared []string, res *protocol.CreateMessageResult, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if len(declared) != 2 || declared[0] == declared[1] {
		t.Fatalf("declared %q, want two names", declared)
	}
	blocks, _ := res.Blocks()
	if len(blocks) != 2 {
		t.Fatalf("%d blocks: %s", len(blocks), res.Content)
	}
	for i, b := range blocks {
		if want := CollidingTools()[i].Name; b.Name != want {
			t.Errorf("the model's call of %q came back as %q, want %q", declared[i], b.Name, want)
		}
	}
}
