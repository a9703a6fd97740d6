package toolset

import (
	"slices"
	"strings"
)

func (c *conv) typeName(t string) string {
	if c.d == Gemini {
		return strings.ToUpper(t)
	}
	return t
}

// finishTypes writes the node's type in the dialect's form.
func (c *conv) finishTypes(out *obj, ts []string, path string) {
	if len(ts) == 0 {
		if c.d == Gemini && out.has("enum") {
			out.set("type", "STRING")
			return
		}
		if !out.has("anyOf") && !out.has("enum") && !out.has("const") && !out.has("allOf") {
			c.strictFail(path, "a schema without a type")
		}
		return
	}
	if c.d != Gemini {
		if len(ts) == 1 {
			out.set("type", ts[0])
		} else {
			out.set("type", toAnyList(ts))
		}
		return
	}
	var nonNull []string
	for _, t := range ts {
		if t == "null" {
			out.set("nullable", true)
		} else {
			nonNull = append(nonNull, t)
		}
	}
	switch {
	case len(nonNull) == 0:
		out.set("type", "NULL")
	case len(nonNull) == 1:
		out.set("type", c.typeName(nonNull[0]))
	case !out.has("anyOf"):
		alts := make([]any, len(nonNull))
		for i, t := range nonNull {
			a := newObj()
			a.set("type", c.typeName(t))
			alts[i] = a
		}
		out.set("anyOf", alts)
	}
}

func typeIs(out *obj, c *conv, t string) bool {
	switch x := out.m["type"].(type) {
	case string:
		return x == c.typeName(t)
	case []any:
		return slices.Contains(x, any(t))
	}
	return false
}

// finishObject applies each dialect's rules for objects: properties,
// required and additionalProperties.
func (c *conv) finishObject(out, n *obj, path string, depth int) {
	if !typeIs(out, c, "object") {
		return
	}
	props, _ := out.m["properties"].(*obj)
	addl, hasAddl := n.m["additionalProperties"]
	addlFalse := hasAddl && addl == false
	req := stringList(n.m["required"])
	if props != nil && !c.loose() {
		req = slices.DeleteFunc(req, func(k string) bool {
			if !props.has(k) {
				c.loss(path+"/required", "required", "dropped "+k+": not among the properties")
				return true
			}
			return false
		})
	}
	switch c.d {
	case OpenAI:
		if props == nil {
			out.set("properties", newObj())
		}
	case OpenAIStrict, AnthropicStrict:
		if !c.strictObject(out, props, addl, hasAddl, path, depth) {
			return
		}
		if c.d == OpenAIStrict {
			req = c.requireAll(out, req)
		}
	case Gemini:
		c.geminiObject(out, props, addlFalse, hasAddl, path)
	}
	if len(req) > 0 {
		out.set("required", toAnyList(req))
	} else {
		out.del("required")
	}
}

// strictObject applies the strict dialects' object rules; false when the
// object is a map (AnthropicStrict keeps those).
func (c *conv) strictObject(out, props *obj, addl any, hasAddl bool, path string, depth int) bool {
	addlFalse := hasAddl && addl == false
	if props == nil {
		if _, isMap := addl.(*obj); isMap && c.d == AnthropicStrict {
			return false
		}
		if !addlFalse {
			c.strictFail(path, "an object without properties (its keys are free)")
		}
		out.set("properties", newObj())
	} else if hasAddl && !addlFalse {
		c.loss(path+"/additionalProperties", "additionalProperties", "set to false (strict mode)")
	}
	out.set("additionalProperties", false)
	if c.d == OpenAIStrict && depth > openAIStrictDepth {
		c.strictFail(path, "objects nested more than 10 deep")
	}
	if c.d == OpenAIStrict && c.props > openAIStrictProps {
		c.strictFail(path, "more than 5000 properties")
	}
	return true
}

// requireAll lists every property in required, making the optional ones
// nullable (Set.Call removes the nulls again).
func (c *conv) requireAll(out *obj, req []string) []string {
	props, _ := out.m["properties"].(*obj)
	if props == nil {
		return req
	}
	inReq := stringSet(req)
	for _, k := range props.keys {
		if !inReq[k] {
			props.m[k] = nullable(props.m[k])
		}
	}
	return append([]string(nil), props.keys...)
}

// nullable returns s admitting null too.
func nullable(s any) any {
	o, ok := s.(*obj)
	if !ok {
		return s
	}
	nullType := newObj()
	nullType.set("type", "null")
	if o.has("$ref") || o.has("const") || !o.has("type") {
		if alts, ok := o.m["anyOf"].([]any); ok && !o.has("$ref") {
			if !slices.ContainsFunc(alts, isNullType) {
				o.set("anyOf", append(alts, nullType))
			}
			return o
		}
		w := newObj()
		w.set("anyOf", []any{o, nullType})
		return w
	}
	switch t := o.m["type"].(type) {
	case string:
		if t != "null" {
			o.set("type", []any{t, "null"})
		}
	case []any:
		if !slices.Contains(t, any("null")) {
			o.set("type", append(t, "null"))
		}
	}
	if e, ok := o.m["enum"].([]any); ok && !slices.Contains(e, nil) {
		o.set("enum", append(e, nil))
	}
	return o
}

// geminiObject applies the Schema type's rules: no additionalProperties,
// no object without properties, properties in the server's order.
func (c *conv) geminiObject(out, props *obj, addlFalse, hasAddl bool, path string) {
	if hasAddl {
		out.del("additionalProperties")
		if !addlFalse {
			c.loss(path+"/additionalProperties", "additionalProperties", "dropped: the Schema type has no such field")
		}
	}
	if props == nil || len(props.keys) == 0 {
		if path == "" {
			return
		}
		out.del("type")
		out.del("properties")
		c.loss(path, "properties", "an object without properties: declared as any value")
		d, _ := out.m["description"].(string)
		out.set("description", strings.TrimSpace(d+" (a JSON object)"))
		return
	}
	if len(props.keys) > 1 && !out.has("propertyOrdering") {
		out.set("propertyOrdering", toAnyList(props.keys))
	}
}

// finishArray applies the rules for arrays without items.
func (c *conv) finishArray(out *obj, path string, moved *[]string) {
	if !typeIs(out, c, "array") || out.has("items") {
		return
	}
	switch c.d {
	case OpenAI:
		out.set("items", newObj())
	case OpenAIStrict:
		c.strictFail(path, "an array without items")
	case Gemini:
		out.del("type")
		c.loss(path, "items", "an array without items: declared as any value")
		*moved = append(*moved, "a JSON array")
	}
}

// flattenAllOf merges an allOf of objects into the node; it returns n
// unchanged when a branch is not a plain object schema.
func (c *conv) flattenAllOf(n *obj, path string) *obj {
	branches, _ := n.m["allOf"].([]any)
	// Copies of the two objects changed, not of the whole tree: a node
	// inlined again and again for Gemini is merged each time.
	merged := n.shallowClone()
	merged.del("allOf")
	props := newObj()
	if p, ok := merged.m["properties"].(*obj); ok {
		props = p.shallowClone()
	}
	req := stringList(merged.m["required"])
	for _, b := range branches {
		bo, ok := c.resolve(b, path).(*obj)
		if !ok || bo.has("$ref") || bo.has("anyOf") || bo.has("oneOf") || bo.has("allOf") {
			return n
		}
		c.spend(path, len(bo.keys))
		if bp, ok := bo.m["properties"].(*obj); ok {
			c.spend(path, len(bp.keys))
		}
		if rl, ok := bo.m["required"].([]any); ok {
			c.spend(path, len(rl))
		}
		if ts, _ := typesOf(bo); len(ts) > 0 && !slices.Equal(ts, []string{"object"}) {
			return n
		}
		if bp, ok := bo.m["properties"].(*obj); ok {
			for _, k := range bp.keys {
				if !props.has(k) {
					props.set(k, bp.m[k])
				}
			}
		}
		req = append(req, stringList(bo.m["required"])...)
		for _, k := range bo.keys {
			if k != "properties" && k != "required" && !merged.has(k) {
				merged.set(k, bo.m[k])
			}
		}
	}
	merged.set("type", "object")
	merged.set("properties", props)
	if len(req) > 0 {
		merged.set("required", toAnyList(req))
	}
	return merged
}

func isNullType(v any) bool {
	o, ok := v.(*obj)
	return ok && o.m["type"] == "null"
}
