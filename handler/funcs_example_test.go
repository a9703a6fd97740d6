package handler_test

import (
	"context"
	"fmt"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

func ExampleFuncs() {
	h := handler.Funcs{
		CreateMessage: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return protocol.TextMessageResult("my-model", "Paris"), nil
		},
		OnToolsChanged: func(ctx context.Context) {},
	}
	s := handler.Detect(h)
	fmt.Println(s.Sampler != nil, s.ToolsChanged != nil, s.Elicitor != nil)
	// Output: true true false
}

// notes declares its method on the pointer type.
type notes struct{}

func (*notes) OnLog(context.Context, *protocol.LoggingMessageParams) {}

func ExampleCheck() {
	fmt.Println(handler.Check(&notes{}))
	fmt.Println(handler.Check(notes{}) != nil)
	// Output:
	// <nil>
	// true
}
