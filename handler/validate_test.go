package handler_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/handler"
)

// TestValidateElicitationMessages: the problems name JSON types, not Go
// ones, with the right article ("an integer").
func TestValidateElicitationMessages(t *testing.T) {
	const schema = `{"type":"object","properties":{
		"n":{"type":"integer"}, "x":{"type":"number"}, "s":{"type":"string"},
		"b":{"type":"boolean"}, "a":{"type":"array","items":{"type":"string"}}}}`
	for _, tc := range []struct {
		content map[string]any
		want    string
	}{
		{map[string]any{"n": "3"}, `invalid elicitation answer: n: want an integer, got a string ("3")`},
		{map[string]any{"n": 2.5}, "invalid elicitation answer: n: want an integer, got a number (2.5)"},
		{map[string]any{"x": true}, "invalid elicitation answer: x: want a number, got a boolean (true)"},
		{map[string]any{"s": 7}, "invalid elicitation answer: s: want a string, got an integer (7)"},
		{map[string]any{"b": map[string]any{}}, "invalid elicitation answer: b: want a boolean, got an object"},
		{map[string]any{"a": "x"}, `invalid elicitation answer: a: want an array, got a string ("x")`},
		{map[string]any{"a": []any{1.5, nil}}, "invalid elicitation answer: a: item 0: want a string, got a number (1.5); a: item 1: want a string, got null"},
	} {
		_, err := handler.ValidateElicitation(json.RawMessage(schema), tc.content)
		if _, ok := errors.AsType[*handler.ValidationError](err); !ok || err.Error() != tc.want {
			t.Errorf("ValidateElicitation(%v) = %v, want %q", tc.content, err, tc.want)
		}
	}
}

// TestValidateElicitationManyRequired: a requested schema of 200,000
// required properties (4.6 MB, within a message's limit) with none
// answered is checked in linear time: each missing property was looked up
// in the whole required list, minutes of CPU.
func TestValidateElicitationManyRequired(t *testing.T) {
	const n = 200000
	var props, req strings.Builder
	for i := range n {
		if i > 0 {
			props.WriteByte(',')
			req.WriteByte(',')
		}
		fmt.Fprintf(&props, `"p%d":{"type":"string"}`, i)
		fmt.Fprintf(&req, `"p%d"`, i)
	}
	schema := json.RawMessage(`{"type":"object","properties":{` + props.String() + `},"required":[` + req.String() + `]}`)
	done := make(chan error, 1)
	go func() {
		_, err := handler.ValidateElicitation(schema, nil)
		done <- err
	}()
	select {
	case err := <-done:
		ve, ok := errors.AsType[*handler.ValidationError](err)
		if !ok || len(ve.Problems) != n {
			t.Errorf("ValidateElicitation = %T with %d problems, want a *handler.ValidationError with %d", err, problems(ve), n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ValidateElicitation of 200,000 missing required properties still runs after 30 s")
	}
}

func problems(ve *handler.ValidationError) int {
	if ve == nil {
		return 0
	}
	return len(ve.Problems)
}

// TestValidateElicitationManyOptions: a multi-select of a requested
// schema with 100,000 options (2 MB, within a message's limit), answered
// with every option (a form's "select all"), is checked in linear time:
// each item was looked up in the whole list of options, and for a list
// of consts that list was copied for each item, hours of CPU and hundreds
// of gigabytes allocated.
func TestValidateElicitationManyOptions(t *testing.T) {
	const n = 100000
	var consts, enum strings.Builder
	all := make([]any, n)
	for i := range n {
		if i > 0 {
			consts.WriteByte(',')
			enum.WriteByte(',')
		}
		fmt.Fprintf(&consts, `{"const":"o%d"}`, i)
		fmt.Fprintf(&enum, `"o%d"`, i)
		all[i] = fmt.Sprintf("o%d", i)
	}
	schema := json.RawMessage(`{"type":"object","properties":{` +
		`"a":{"type":"array","items":{"anyOf":[` + consts.String() + `]}},` +
		`"b":{"type":"array","items":{"type":"string","enum":[` + enum.String() + `]}}}}`)
	type result struct {
		norm map[string]any
		err  error
	}
	done := make(chan result, 1)
	go func() {
		norm, err := handler.ValidateElicitation(schema, map[string]any{"a": all, "b": append(all[1:n:n], "nope")})
		done <- result{norm, err}
	}()
	select {
	case r := <-done:
		ve, ok := errors.AsType[*handler.ValidationError](r.err)
		if want := `invalid elicitation answer: b: item 99999: "nope" is not one of the allowed values`; !ok || r.err.Error() != want {
			t.Errorf("ValidateElicitation = %v, want %q", r.err, want)
		} else if len(ve.Problems) != 1 {
			t.Errorf("ValidateElicitation problems %q, want 1", ve.Problems)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ValidateElicitation of a 100,000-item answer to 100,000 options still runs after 30 s")
	}
}
