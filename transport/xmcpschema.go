package transport

import (
	"slices"
	"strings"

	"github.com/conduitmcp/conduit/internal/jsonscan"
)

// The schema a server gives a tool is read for its x-mcp-header
// annotations in one pass over its bytes (schemaParser), which keeps only
// what can yield an annotation or an error: a tree of schemaNodes that
// headerValidator then walks in the order the rules are checked.
// Decoding each subschema on its own would go over every byte once per
// level above it, and decoding the whole schema would build every array
// and string in it, when most of a schema says nothing about headers.

// Slots of a schemaNode's children: where each keyword's subschemas come
// in the walk (properties, then schemaMapKeywords, schemaValueKeywords and
// schemaArrayKeywords, each in its list's order).
var (
	slotMap   = 1
	slotValue = slotMap + len(schemaMapKeywords)
	slotArray = slotValue + len(schemaValueKeywords)
	numSlots  = slotArray + len(schemaArrayKeywords)
)

// schemaNode is what a subschema holds for the walk: an annotation, a
// broken rule, or children that hold one. Subschemas that hold none are
// not kept.
type schemaNode struct {
	hasAnn   bool   // an x-mcp-header member
	annOK    bool   // …whose value is a string or null
	ann      string // …that string ("" for null)
	typeOK   bool   // "type" allows an annotation (see headerType)
	propsBad bool   // "properties" is neither an object nor null
	tooDeep  bool   // nested deeper than maxSchemaDepth: nothing inside was read
	kids     []schemaKid
}

// schemaKid is a child subschema: of slot, under key (properties and
// schemaMapKeywords) or at index (schemaArrayKeywords).
type schemaKid struct {
	slot  int
	key   string
	index int
	node  *schemaNode
}

// empty reports whether n yields nothing.
func (n *schemaNode) empty() bool {
	return !n.hasAnn && !n.propsBad && !n.tooDeep && len(n.kids) == 0
}

// schemaParser reads a schema that json.Valid accepted.
type schemaParser struct {
	data []byte
	buf  []byte // unquoted keys
}

// slotOf returns the slot of keyword name when its value is a subschema
// (an object), a map (an object) or an array, or -1.
func slotOf(list []string, base int, name []byte) int {
	for i, k := range list {
		if string(name) == k {
			return base + i
		}
	}
	return -1
}

// key returns the value of the key at s, valid until the next call.
func (p *schemaParser) key(s jsonscan.Span) []byte {
	if jsonscan.PlainString(p.data, s) {
		return s.Content(p.data)
	}
	p.buf = jsonscan.AppendUnquoted(p.buf[:0], s.Content(p.data))
	return p.buf
}

// skip returns the end of the value at i.
func (p *schemaParser) skip(i int) int {
	s, _ := jsonscan.ScanValue(p.data, i, 1) // valid input: no error
	return s.End
}

// child reads the value at i, a subschema at depth, and returns its node
// (nil when it yields nothing) and its end.
func (p *schemaParser) child(i, depth int) (*schemaNode, int) {
	if depth > maxSchemaDepth {
		return &schemaNode{tooDeep: true}, p.skip(i)
	}
	if p.data[i] != '{' {
		return nil, p.skip(i)
	}
	return p.object(i, depth)
}

// object reads the schema object at i, at depth.
func (p *schemaParser) object(i, depth int) (*schemaNode, int) {
	var (
		n     schemaNode
		slots kidSlots
	)
	data := p.data
	i = jsonscan.SkipSpace(data, i+1)
	for data[i] != '}' {
		ks, next, _ := jsonscan.ScanKey(data, i)
		j := jsonscan.SkipSpace(data, next)
		i = jsonscan.SkipSpace(data, p.member(&n, &slots, p.key(ks), j, depth))
		if data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	for _, s := range slots {
		n.kids = append(n.kids, s...)
	}
	if n.empty() {
		return nil, i + 1
	}
	kept := n // only a node that yields something goes to the heap
	return &kept, i + 1
}

// kidSlots are a schema's children by slot, made for the first child
// that yields something.
type kidSlots [][]schemaKid

func (k *kidSlots) set(slot int, kids []schemaKid) {
	if *k == nil && kids != nil {
		*k = make(kidSlots, numSlots)
	}
	if *k != nil {
		(*k)[slot] = kids
	}
}

// member reads the value at j of the member name of the schema n, at
// depth, and returns its end.
func (p *schemaParser) member(n *schemaNode, slots *kidSlots, name []byte, j, depth int) int {
	data := p.data
	switch string(name) {
	case "x-mcp-header":
		n.hasAnn, n.annOK, n.ann = true, false, ""
		switch data[j] {
		case '"':
			s, _ := jsonscan.ScanValue(data, j, 1)
			var b strings.Builder
			jsonscan.WriteString(&b, data, s)
			n.annOK, n.ann = true, b.String()
			return s.End
		case 'n':
			n.annOK = true
		}
		return p.skip(j)
	case "type":
		ok, end := p.headerType(j)
		n.typeOK = ok
		return end
	case "properties":
		n.propsBad = false
		slots.set(0, nil)
		switch data[j] {
		case '{':
			kids, end := p.schemas(j, depth+1, 0)
			slots.set(0, kids)
			return end
		case 'n':
			return p.skip(j)
		}
		n.propsBad = true
		return p.skip(j)
	}
	return p.keyword(slots, name, j, depth)
}

// keyword reads the value at j of the keyword name, at depth, when it is
// one whose subschemas may yield annotations, and returns its end.
func (p *schemaParser) keyword(slots *kidSlots, name []byte, j, depth int) int {
	data := p.data
	// All three before reading on, which reuses name's buffer.
	ms := slotOf(schemaMapKeywords, slotMap, name)
	vs, as := slotOf(schemaValueKeywords, slotValue, name), slotOf(schemaArrayKeywords, slotArray, name)
	end := -1
	if ms >= 0 {
		slots.set(ms, nil)
		if data[j] == '{' {
			var kids []schemaKid
			kids, end = p.schemas(j, depth+1, ms)
			slots.set(ms, kids)
		}
	}
	// "items" is a subschema or an array of them: either replaces the
	// other.
	if vs >= 0 {
		slots.set(vs, nil)
		if data[j] == '{' {
			var c *schemaNode
			if c, end = p.child(j, depth+1); c != nil {
				slots.set(vs, []schemaKid{{slot: vs, node: c}})
			}
		}
	}
	if as >= 0 {
		slots.set(as, nil)
		if data[j] == '[' {
			var kids []schemaKid
			kids, end = p.array(j, depth+1, as)
			slots.set(as, kids)
		}
	}
	if end < 0 {
		end = p.skip(j)
	}
	return end
}

// schemas reads the object of subschemas at i (the value of properties
// or of a schemaMapKeywords keyword, of slot), each at depth, and returns
// the children that yield something, by key. A key given twice is its
// last value's, as when the object is decoded into a map.
func (p *schemaParser) schemas(i, depth, slot int) ([]schemaKid, int) {
	var (
		kids []schemaKid
		at   map[string]int // kids' index by key
	)
	data := p.data
	i = jsonscan.SkipSpace(data, i+1)
	for data[i] != '}' {
		ks, next, _ := jsonscan.ScanKey(data, i)
		c, end := p.child(jsonscan.SkipSpace(data, next), depth)
		name := p.key(ks)
		k, seen := at[string(name)]
		switch {
		case c != nil && seen:
			kids[k].node = c
		case c != nil:
			if at == nil {
				at = make(map[string]int)
			}
			at[string(name)] = len(kids)
			kids = append(kids, schemaKid{slot: slot, key: string(name), node: c})
		case seen:
			kids[k].node = nil // an earlier value with that key no longer counts
		}
		i = jsonscan.SkipSpace(data, end)
		if data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	kids = slices.DeleteFunc(kids, func(k schemaKid) bool { return k.node == nil })
	slices.SortFunc(kids, func(a, b schemaKid) int { return strings.Compare(a.key, b.key) })
	return kids, i + 1
}

// array reads the array of subschemas at i (of slot), each at depth.
func (p *schemaParser) array(i, depth, slot int) ([]schemaKid, int) {
	var kids []schemaKid
	data := p.data
	i = jsonscan.SkipSpace(data, i+1)
	for index := 0; data[i] != ']'; index++ {
		c, end := p.child(i, depth)
		if c != nil {
			kids = append(kids, schemaKid{slot: slot, index: index, node: c})
		}
		i = jsonscan.SkipSpace(data, end)
		if data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	return kids, i + 1
}

// headerType reads the "type" value at i and reports whether it allows an
// annotation: "string", "integer" or "boolean", or an array whose members
// other than "null" are exactly one of those (a null member counts as "",
// and any member that is not a string makes it false, as when the array
// is decoded into a []string).
func (p *schemaParser) headerType(i int) (bool, int) {
	ok := func(t []byte) bool { return string(t) == "string" || string(t) == "integer" || string(t) == "boolean" }
	data := p.data
	switch data[i] {
	case '"':
		s, _ := jsonscan.ScanValue(data, i, 1)
		return ok(p.key(s)), s.End
	case '[':
	default:
		return false, p.skip(i)
	}
	kinds, allowed, strs := 0, false, true
	i = jsonscan.SkipSpace(data, i+1)
	for data[i] != ']' {
		s, _ := jsonscan.ScanValue(data, i, 1)
		switch s.Kind {
		case jsonscan.KindString:
			if t := p.key(s); string(t) != "null" {
				kinds++
				allowed = ok(t)
			}
		case jsonscan.KindNull:
			kinds++ // "", which is not "null"
			allowed = false
		default:
			strs = false
		}
		i = jsonscan.SkipSpace(data, s.End)
		if data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	return strs && kinds == 1 && allowed, i + 1
}
