package toolset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// obj is a JSON object that keeps its members in document order, so that
// a converted schema lists properties in the order the server wrote them
// (models fill arguments in that order).
type obj struct {
	keys []string
	m    map[string]any
}

func newObj() *obj { return &obj{m: map[string]any{}} }

func (o *obj) get(k string) (any, bool) {
	v, ok := o.m[k]
	return v, ok
}

func (o *obj) has(k string) bool { _, ok := o.m[k]; return ok }

func (o *obj) set(k string, v any) {
	if _, ok := o.m[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.m[k] = v
}

func (o *obj) del(k string) {
	if _, ok := o.m[k]; !ok {
		return
	}
	delete(o.m, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// clone copies o deeply.
func (o *obj) clone() *obj { return cloneValue(o).(*obj) }

// shallowClone copies o, sharing its members' values.
func (o *obj) shallowClone() *obj {
	c := &obj{keys: slices.Clone(o.keys), m: make(map[string]any, len(o.m))}
	for k, v := range o.m {
		c.m[k] = v
	}
	return c
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case *obj:
		c := &obj{keys: append([]string(nil), v.keys...), m: make(map[string]any, len(v.m))}
		for k, x := range v.m {
			c.m[k] = cloneValue(x)
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, x := range v {
			c[i] = cloneValue(x)
		}
		return c
	}
	return v
}

// maxJSONDepth bounds the nesting a schema may have.
const maxJSONDepth = 256

var errTooDeep = errors.New("nested too deeply")

// parseJSON decodes data into *obj, []any, string, json.Number, bool and
// nil values.
func parseJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, errTooDeep
	}
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := newObj()
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			_, err := d.Token()
			return o, err
		case '[':
			a := []any{}
			for d.More() {
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := d.Token()
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return t, nil
}

// marshalJSON encodes a value made by parseJSON (or built from the same
// types), objects in member order.
func marshalJSON(v any) []byte {
	var b bytes.Buffer
	writeJSON(&b, v, math.MaxInt)
	return b.Bytes()
}

// writeJSON writes v; it stops, leaving the JSON text cut short, once b
// holds more than limit bytes.
func writeJSON(b *bytes.Buffer, v any, limit int) {
	switch v := v.(type) {
	case *obj:
		b.WriteByte('{')
		for i, k := range v.keys {
			if b.Len() > limit {
				return
			}
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			writeJSON(b, v.m[k], limit)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if b.Len() > limit {
				return
			}
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, x, limit)
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, x)
		}
		b.WriteByte(']')
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(string(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	default:
		// Only values of the types above are ever built.
		enc, _ := json.Marshal(v)
		b.Write(enc)
	}
}

func writeString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s)
	b.Write(enc)
}

// compact renders v for a description: JSON, cut to 200 bytes.
func compact(v any) string {
	if s, ok := v.(string); ok {
		return truncateUTF8(s, 200)
	}
	var b bytes.Buffer
	writeJSON(&b, v, 200)
	return truncateUTF8(b.String(), 200)
}

// jsonSize returns the length of v as JSON text, or a number past limit
// when it is longer: it stops counting there.
func jsonSize(v any, limit int) int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case *obj:
			n += 2
			for _, k := range v.keys {
				if n > limit {
					return
				}
				n += len(k) + 4
				walk(v.m[k])
			}
		case []any:
			n += 2
			for _, x := range v {
				if n > limit {
					return
				}
				n++
				walk(x)
			}
		case string:
			n += len(v) + 2
		case json.Number:
			n += len(v)
		default:
			n += 5 // true, false, null
		}
	}
	walk(v)
	return n
}
