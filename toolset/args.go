package toolset

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// argFixer cleans a model's arguments for one tool before the call.
type argFixer struct {
	root *obj // the tool's input schema; nil when it does not parse
}

func newArgFixer(schema json.RawMessage) *argFixer {
	v, err := parseJSON(schema)
	if err != nil {
		return &argFixer{}
	}
	o, _ := v.(*obj)
	return &argFixer{root: o}
}

// fix checks args and removes the nulls of optional properties that do
// not admit null. Arguments without such nulls pass byte for byte.
func (f *argFixer) fix(args string) (json.RawMessage, error) {
	t := strings.TrimSpace(args)
	if t == "" || t == "null" {
		return json.RawMessage("{}"), nil
	}
	if !json.Valid([]byte(t)) {
		var v any
		err := json.Unmarshal([]byte(t), &v)
		if strings.Contains(err.Error(), "unexpected end of JSON input") {
			return nil, fmt.Errorf("%w: the JSON text is cut short", ErrInvalidArguments)
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidArguments, err)
	}
	if t[0] != '{' {
		return nil, fmt.Errorf("%w: a JSON %s", ErrInvalidArguments, jsonKind(t[0]))
	}
	if f.root == nil || !strings.Contains(t, "null") {
		return json.RawMessage(t), nil
	}
	v, err := parseJSON([]byte(t))
	if err != nil {
		return nil, errors.Join(ErrInvalidArguments, err)
	}
	c := &cleaning{argFixer: f, resolved: map[*obj]*obj{}, required: map[*obj]map[string]bool{}, nulls: map[nullKey]bool{}}
	if !c.strip(v, f.root, 0) {
		return json.RawMessage(t), nil
	}
	return marshalJSON(v), nil
}

func jsonKind(c byte) string {
	switch c {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}

// deref follows local references of the schema, a bounded number of
// times.
func (f *argFixer) deref(s any) *obj {
	for range 16 {
		o, ok := s.(*obj)
		if !ok {
			return nil
		}
		ref, ok := o.m["$ref"].(string)
		if !ok {
			return o
		}
		if s, ok = pointer(f.root, ref); !ok {
			return nil
		}
	}
	return nil
}

// cleaning is one call's removal of nulls. It reads each schema node
// once, however often the arguments meet it: the elements of a long
// array share the node of their items.
type cleaning struct {
	*argFixer
	resolved map[*obj]*obj            // a node → the node its $refs lead to (nil: none)
	required map[*obj]map[string]bool // an object's schema → its required names
	// nulls holds admitsNull's answers: the alternatives of a schema may
	// point at the same definitions again and again, each of those at
	// the next ones, so that the paths through them are exponentially
	// many while the nodes are few.
	nulls map[nullKey]bool
}

type nullKey struct {
	schema *obj
	depth  int
}

// deref is [argFixer.deref], once per node.
func (c *cleaning) deref(s any) *obj {
	o, ok := s.(*obj)
	if !ok {
		return nil
	}
	r, seen := c.resolved[o]
	if !seen {
		r = c.argFixer.deref(o)
		c.resolved[o] = r
	}
	return r
}

// strip removes, in the instance v, the null members that schema makes
// optional and does not admit null; it reports whether it removed any.
func (c *cleaning) strip(v any, schema any, depth int) bool {
	so := c.deref(schema)
	if so == nil || depth > maxDepth {
		return false
	}
	changed := false
	switch x := v.(type) {
	case *obj:
		props, _ := so.m["properties"].(*obj)
		if props == nil {
			return false
		}
		req, seen := c.required[so]
		if !seen {
			req = stringSet(stringList(so.m["required"]))
			c.required[so] = req
		}
		// The members kept are gathered in place, in one pass: the model
		// may have set thousands of properties to null.
		kept := x.keys[:0]
		for _, k := range x.keys {
			ps, ok := props.m[k]
			if ok && x.m[k] == nil && !req[k] && !c.admitsNull(ps, 0) {
				delete(x.m, k)
				changed = true
				continue
			}
			kept = append(kept, k)
			if ok {
				changed = c.strip(x.m[k], ps, depth+1) || changed
			}
		}
		x.keys = kept
	case []any:
		for _, e := range x {
			changed = c.strip(e, so.m["items"], depth+1) || changed
		}
	}
	return changed
}

// admitsNull reports whether schema may admit null. Its answer for a
// node at a depth is computed once.
func (c *cleaning) admitsNull(schema any, depth int) bool {
	o, ok := schema.(*obj)
	if !ok {
		return c.admitsNullOnce(schema, depth)
	}
	key := nullKey{o, depth}
	if ans, seen := c.nulls[key]; seen {
		return ans
	}
	ans := c.admitsNullOnce(schema, depth)
	c.nulls[key] = ans
	return ans
}

func (c *cleaning) admitsNullOnce(schema any, depth int) bool {
	o := c.deref(schema)
	if o == nil || depth > 16 {
		return true
	}
	if ts, null := typesOf(o); null || len(ts) == 0 && !o.has("enum") && !o.has("const") && !o.has("anyOf") && !o.has("oneOf") {
		return true
	}
	if e, ok := o.m["enum"].([]any); ok && slices.Contains(e, nil) {
		return true
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		alts, _ := o.m[kw].([]any)
		for _, a := range alts {
			if c.admitsNull(a, depth+1) {
				return true
			}
		}
	}
	return false
}
