package toolset

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// conv converts one input schema to one dialect. Errors are recorded
// (the first wins) and the walk stops making nodes; the result is then
// discarded.
type conv struct {
	d      Dialect
	root   *obj
	losses []Loss
	err    error
	nodes  int
	props  int // properties declared (OpenAIStrict's limit)
	size   int // bytes made and walked so far: see spend
	budget int // the bound of size

	// For the dialects that keep $refs: every referenced definition,
	// converted, under a name of ours.
	refNames   map[string]string // original $ref → name in defs
	defNames   map[string]bool   // the names in refNames
	nextDef    map[string]int    // per base name, the suffix to try next
	defs       *obj
	inProgress map[string]bool
	// For Gemini, which inlines references: the ones being inlined.
	stack []string
}

const (
	maxDepth          = 128 // nesting of properties and items
	openAIStrictDepth = 10  // OpenAI's limit of nested objects in strict mode
	openAIStrictProps = 5000
)

// convertSchema converts the inputSchema raw to dialect d. Its bound is
// schemaGrowth times the schema's size or minSchemaBudget, whichever is
// more; what it makes past the first it draws from *pool, which the
// conversions of a Set's tools share, and the second shrinks to what is
// left in *pool.
func convertSchema(raw json.RawMessage, d Dialect, pool *int) (json.RawMessage, []Loss, error) {
	root, err := parseRoot(raw)
	if err != nil {
		return nil, nil, err
	}
	own := schemaGrowth * len(raw)
	c := &conv{d: d, root: root, budget: max(own, min(minSchemaBudget, *pool))}
	out := c.rootSchema()
	if c.err != nil {
		return nil, nil, c.err
	}
	*pool -= max(c.size-own, 0)
	if out == nil {
		return nil, c.losses, nil
	}
	return marshalJSON(out), c.losses, nil
}

// parseRoot parses an input schema; no schema at all is an object
// without properties.
func parseRoot(raw json.RawMessage) (*obj, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" || s == "true" {
		s = `{"type":"object"}`
	}
	v, err := parseJSON([]byte(s))
	if err != nil {
		return nil, &pathError{err: errors.Join(ErrInvalidSchema, err)}
	}
	o, ok := v.(*obj)
	if !ok {
		return nil, &pathError{err: ErrInvalidSchema}
	}
	ts, _ := typesOf(o)
	if len(ts) > 0 && !slices.Contains(ts, "object") {
		return nil, &pathError{err: ErrInvalidSchema}
	}
	return o, nil
}

func (c *conv) fail(path string, err error) {
	if c.err == nil {
		c.err = &pathError{path: path, err: err}
	}
}

// strictFail records that the schema is outside a strict dialect.
func (c *conv) strictFail(path, reason string) {
	if c.d.strict() && c.err == nil {
		c.err = &strictFailure{path: path, reason: reason}
	}
}

func (c *conv) loss(path, keyword, note string) {
	c.spend(path, len(path)+len(keyword)+len(note))
	if c.err == nil {
		c.losses = append(c.losses, Loss{Path: path, Keyword: keyword, Note: note})
	}
}

// The bound of a conversion's size: what it writes (the schema, the
// losses) and the paths it builds, in bytes. [MaxSchemaNodes] alone
// does not bound it: inlining a reference for Gemini copies its target
// again, with the target's long descriptions and enums, and the losses
// of a node nested deep under long names each carry its long path.
// Past schemaGrowth times their schemas, the conversions of a Set to a
// dialect share setSchemaBudget: a server's thousands of small tools,
// each grown to minSchemaBudget, would make gigabytes.
const (
	minSchemaBudget = 4 << 20
	setSchemaBudget = 64 << 20
	schemaGrowth    = 4 // times the input schema's size
)

// spend counts n bytes made or walked at path against the budget.
func (c *conv) spend(path string, n int) {
	c.size += n
	if c.size > c.budget {
		c.fail(path, ErrSchemaTooLarge)
	}
}

// spendValue counts the size of the JSON value v, written at path.
func (c *conv) spendValue(path string, v any) {
	c.spend(path, jsonSize(v, c.budget-c.size+1))
}

// rootSchema converts the root: always an object with properties (but
// for Gemini, where a tool without parameters has none).
func (c *conv) rootSchema() *obj {
	r := c.root
	if c.mergesUnions() {
		r = c.mergeRootUnion(r)
	}
	if !r.has("properties") && !r.has("additionalProperties") {
		r = r.clone()
		r.set("properties", newObj())
	}
	out := c.node(r, "", 0).(*obj)
	if c.d == Gemini {
		if p, _ := out.get("properties"); p == nil || len(p.(*obj).keys) == 0 {
			return nil
		}
	}
	out.set("type", c.typeName("object"))
	if c.defs != nil && len(c.defs.keys) > 0 {
		out.set("$defs", c.defs)
	}
	return out
}

// mergesUnions reports whether the dialect refuses anyOf and oneOf at the
// root.
func (c *conv) mergesUnions() bool { return c.d != Anthropic }

// mergeRootUnion turns a root anyOf/oneOf of objects into one object with
// every alternative's properties, those not required by all of them made
// optional.
func (c *conv) mergeRootUnion(r *obj) *obj {
	for _, kw := range []string{"anyOf", "oneOf"} {
		v, ok := r.get(kw)
		if !ok {
			continue
		}
		branches, _ := v.([]any)
		merged := r.clone()
		merged.del(kw)
		props := newObj()
		if p, ok := merged.m["properties"].(*obj); ok {
			props = p
		}
		var common []string
		for i, b := range branches {
			bo, _ := c.resolve(b, "").(*obj)
			if bo == nil {
				continue
			}
			if bp, ok := bo.m["properties"].(*obj); ok {
				for _, k := range bp.keys {
					if !props.has(k) {
						props.set(k, bp.m[k])
					}
				}
			}
			req := stringList(bo.m["required"])
			if i == 0 {
				common = req
			} else {
				inReq := stringSet(req)
				common = slices.DeleteFunc(common, func(s string) bool { return !inReq[s] })
			}
		}
		merged.set("properties", props)
		merged.set("required", toAnyList(append(stringList(merged.m["required"]), common...)))
		c.loss("", kw, "alternatives at the root merged into one object; properties not required by every alternative became optional")
		r = merged
	}
	return r
}

// resolve follows a local $ref of the original schema (one step).
func (c *conv) resolve(v any, path string) any {
	o, ok := v.(*obj)
	if !ok {
		return v
	}
	ref, ok := o.m["$ref"].(string)
	if !ok {
		return v
	}
	c.spend(path, len(ref))
	if t, ok := pointer(c.root, ref); ok {
		return t
	}
	return v
}

// node converts one schema.
func (c *conv) node(v any, path string, depth int) any {
	if c.err != nil {
		return newObj() // the result is discarded
	}
	c.nodes++
	c.spend(path, len(path))
	if c.nodes > MaxSchemaNodes || depth > maxDepth {
		c.fail(path, ErrSchemaTooLarge)
		return newObj()
	}
	switch x := v.(type) {
	case bool:
		if !x {
			c.loss(path, "false", "a schema that allows nothing, declared as any value")
		}
		c.strictFail(path, "a schema without a type")
		return newObj()
	case *obj:
		if ref, ok := x.m["$ref"].(string); ok {
			return c.ref(x, ref, path, depth)
		}
		return c.object(x, path, depth)
	}
	c.fail(path, ErrInvalidSchema)
	return newObj()
}

// pointer resolves the local reference ref ("#", "#/$defs/a") in root.
func pointer(root *obj, ref string) (any, bool) {
	if ref == "#" {
		return root, true
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, false
	}
	var cur any = root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case *obj:
			v, ok := x.get(tok)
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// ref converts a {"$ref": …} node: inlined for Gemini, else kept and
// pointed at the converted definition in the root's $defs.
func (c *conv) ref(n *obj, ref, path string, depth int) any {
	c.spend(path, len(ref))
	target, ok := pointer(c.root, ref)
	if !ok {
		c.fail(path+"/$ref", ErrUnresolvedRef)
		return newObj()
	}
	for _, k := range n.keys {
		if k != "$ref" && k != "description" && k != "title" && k != "$comment" {
			c.loss(path, k, "ignored beside $ref")
		}
	}
	desc, _ := n.m["description"].(string)
	c.spend(path, len(desc))
	if c.d == Gemini {
		return c.inline(ref, target, desc, path, depth)
	}
	out := newObj()
	out.set("$ref", c.defRef(ref, target, path, depth))
	if desc != "" && c.d != AnthropicStrict {
		out.set("description", desc)
	}
	return out
}

// inline converts the target of ref in place of the reference; a
// reference met again while inlining it is cut.
func (c *conv) inline(ref string, target any, desc, path string, depth int) any {
	if slices.Contains(c.stack, ref) {
		c.loss(path, "$ref", "recursive reference cut: declared as any value")
		out := newObj()
		out.set("description", strings.TrimSpace(desc+" (recursive: the same shape as "+ref+")"))
		return out
	}
	c.stack = append(c.stack, ref)
	res := c.node(target, path, depth+1)
	c.stack = c.stack[:len(c.stack)-1]
	if o, ok := res.(*obj); ok && desc != "" {
		o.set("description", desc) // o is new: node makes a new schema each time
	}
	return res
}

// defRef returns the reference to ref's converted definition, converting
// it on first use.
func (c *conv) defRef(ref string, target any, path string, depth int) string {
	if ref == "#" {
		c.recursion(path)
		return "#"
	}
	name, seen := c.refNames[ref]
	if !seen {
		name = c.defName(ref)
		c.inProgress[name] = true
		conv := c.node(target, refPath(ref), depth+1)
		delete(c.inProgress, name)
		c.defs.set(name, conv)
	} else if c.inProgress[name] {
		c.recursion(path)
	}
	return "#/$defs/" + name
}

func (c *conv) recursion(path string) {
	if c.d == AnthropicStrict {
		c.strictFail(path, "a recursive schema")
	}
}

// defName names the definition ref points at, uniquely.
func (c *conv) defName(ref string) string {
	if c.refNames == nil {
		c.refNames, c.defs, c.inProgress = map[string]string{}, newObj(), map[string]bool{}
		c.defNames, c.nextDef = map[string]bool{}, map[string]int{}
	}
	base := ref[2:]
	for _, p := range []string{"$defs/", "definitions/"} {
		if strings.HasPrefix(base, p) && !strings.Contains(base[len(p):], "/") {
			base = base[len(p):]
		}
	}
	base = strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, base)
	// The suffix to try starts past those tried for base before: many
	// references whose names differ only in the characters replaced
	// would each try every name taken before.
	name := base
	for i := max(2, c.nextDef[base]); c.defNames[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
		c.nextDef[base] = i + 1
	}
	c.refNames[ref] = name
	c.defNames[name] = true
	return name
}

// refPath is the path of a reference's target, for losses.
func refPath(ref string) string { return strings.TrimPrefix(ref, "#") }

func escapeToken(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// stringList returns the strings of the JSON array v, each once, in
// order. A set keeps it linear: a server's required list may be long.
func stringList(v any) []string {
	a, _ := v.([]any)
	out := make([]string, 0, len(a))
	seen := make(map[string]bool, len(a))
	for _, x := range a {
		if s, ok := x.(string); ok && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// toAnyList returns ss as a JSON array, each string once, in order.
func toAnyList(ss []string) []any {
	out := make([]any, 0, len(ss))
	seen := make(map[string]bool, len(ss))
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// stringSet returns the strings of ss as a set.
func stringSet(ss []string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}
