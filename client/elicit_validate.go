package client

import (
	"context"
	"fmt"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

// validatingElicitor wraps the user's form-mode Elicitor: an "accept"
// answer has its missing fields filled from the schema's defaults and is
// then checked against the requested schema (the MCP elicitation subset:
// a flat object of primitive properties). See wrapHandler for how it
// keeps the advertised capabilities unchanged.
type validatingElicitor struct {
	inner handler.Elicitor
	next  any
}

func (v *validatingElicitor) Unwrap() any { return v.next }

func (v *validatingElicitor) Elicit(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	res, err := v.inner.Elicit(ctx, p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, &handler.ValidationError{Subject: "elicitation answer", Problems: []string{"nil result"}}
	}
	if res.Action != protocol.ElicitAccept {
		if res.Action != protocol.ElicitDecline && res.Action != protocol.ElicitCancel {
			return nil, &handler.ValidationError{Subject: "elicitation answer", Problems: []string{fmt.Sprintf("unknown action %q", res.Action)}}
		}
		out := *res
		out.Content = nil
		return &out, nil
	}
	content, err := handler.ValidateElicitation(p.RequestedSchema, res.Content)
	if err != nil {
		return nil, err
	}
	out := *res
	out.Content = content
	return &out, nil
}
