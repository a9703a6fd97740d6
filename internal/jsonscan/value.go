package jsonscan

// bitStack records, for each open container, whether it is an object. The
// first 256 levels live in the array; deeper input (rare, and bounded by
// MaxDepth) spills to the slice.
type bitStack struct {
	n     int
	small [4]uint64
	big   []uint64
}

func (s *bitStack) push(obj bool) {
	w, b := s.n/64, uint(s.n%64)
	s.n++
	var word *uint64
	if w < len(s.small) {
		word = &s.small[w]
	} else {
		w -= len(s.small)
		if w == len(s.big) {
			s.big = append(s.big, 0)
		}
		word = &s.big[w]
	}
	if obj {
		*word |= 1 << b
	} else {
		*word &^= 1 << b
	}
}

func (s *bitStack) top() bool {
	w, b := (s.n-1)/64, uint((s.n-1)%64)
	if w < len(s.small) {
		return s.small[w]&(1<<b) != 0
	}
	return s.big[w-len(s.small)]&(1<<b) != 0
}

func (s *bitStack) pop() { s.n-- }

// States of ScanValue's walk through nested containers.
const (
	afterOpen  = iota // just after { or [: a close, or the first member/element
	wantKey           // after a comma in an object
	wantValue         // after a colon, or after a comma in an array
	afterValue        // after a member or element: a comma or a close
)

// ScanValue scans the JSON value starting at data[i] (white space already
// skipped); depth is the nesting level a container there would have. It
// walks nested containers iteratively, so hostile nesting costs no stack.
func ScanValue(data []byte, i, depth int) (Span, error) {
	if i >= len(data) {
		return Span{}, ErrAt(data, i, "")
	}
	c := data[i]
	if c != '{' && c != '[' {
		return scanScalar(data, i)
	}
	start := i
	var st bitStack
	state := wantValue
	for {
		i = SkipSpace(data, i)
		if i >= len(data) {
			return Span{}, ErrAt(data, i, "")
		}
		c = data[i]
		switch state {
		case afterOpen:
			if c == '}' && st.top() || c == ']' && !st.top() {
				i++
				st.pop()
				depth--
				state = afterValue
				break
			}
			state = elementState(st.top())
			continue
		case wantKey:
			key, next, err := scanKey(data, i)
			if err != nil {
				return key, err
			}
			i, state = next, wantValue
		case wantValue:
			if c == '{' || c == '[' {
				if st.n > 0 {
					depth++
				}
				if depth > MaxDepth {
					return Span{}, &syntaxError{msg: msgDepth, off: i}
				}
				st.push(c == '{')
				i++
				state = afterOpen
				continue
			}
			s, err := scanScalar(data, i)
			if err != nil {
				return Span{}, err
			}
			i, state = s.End, afterValue
		case afterValue:
			obj := st.top()
			switch {
			case c == ',':
				i++
				state = elementState(obj)
			case obj && c == '}' || !obj && c == ']':
				i++
				st.pop()
				depth--
			default:
				return Span{}, afterElementError(data, i, obj)
			}
		}
		if st.n == 0 {
			return containerSpan(data, start, i), nil
		}
	}
}

// elementState is the state before the next member (in an object) or
// element (in an array).
func elementState(obj bool) int {
	if obj {
		return wantKey
	}
	return wantValue
}

// scanKey scans an object key at data[i] and the colon after it; next is
// the index past the colon.
func scanKey(data []byte, i int) (key Span, next int, err error) {
	if i >= len(data) || data[i] != '"' {
		return Span{}, 0, ErrAt(data, i, "looking for beginning of object key string")
	}
	key = Span{Start: i, Kind: KindString}
	key.End, key.Flags, err = scanString(data, i)
	if err != nil {
		return Span{}, 0, err
	}
	i = SkipSpace(data, key.End)
	if i >= len(data) || data[i] != ':' {
		return Span{}, 0, ErrAt(data, i, "after object key")
	}
	return key, i + 1, nil
}

// afterElementError is the error for data[i] where a comma or a close
// was due.
func afterElementError(data []byte, i int, obj bool) error {
	if obj {
		return ErrAt(data, i, "after object key:value pair")
	}
	return ErrAt(data, i, "after array element")
}

// containerSpan is the span of the object or array data[start:end].
func containerSpan(data []byte, start, end int) Span {
	kind := KindArray
	if data[start] == '{' {
		kind = KindObject
	}
	return Span{Start: start, End: end, Kind: kind}
}

// ObjectReader walks the members of one object, validating as it goes.
type ObjectReader struct {
	Data    []byte
	I       int // next byte to read: the '{' before the first Next
	Depth   int // nesting level of the object itself
	started bool
}

// next returns the next member's key and value; ok is false after the
// closing brace, with r.I just past it.
func (r *ObjectReader) Next() (key, val Span, ok bool, err error) {
	data := r.Data
	i := SkipSpace(data, r.I)
	if !r.started {
		// The caller has checked data[i] == '{'.
		r.started = true
		i = SkipSpace(data, i+1)
		if i < len(data) && data[i] == '}' {
			r.I = i + 1
			return Span{}, Span{}, false, nil
		}
	} else {
		switch {
		case i < len(data) && data[i] == '}':
			r.I = i + 1
			return Span{}, Span{}, false, nil
		case i < len(data) && data[i] == ',':
			i = SkipSpace(data, i+1)
		default:
			return Span{}, Span{}, false, ErrAt(data, i, "after object key:value pair")
		}
	}
	key, i, err = scanKey(data, i)
	if err != nil {
		return Span{}, Span{}, false, err
	}
	val, err = ScanValue(data, SkipSpace(data, i), r.Depth+1)
	if err != nil {
		return Span{}, Span{}, false, err
	}
	r.I = val.End
	return key, val, true, nil
}

// Validate reports whether data is exactly one JSON value (no surrounding
// white space to skip: DecodeMessage has trimmed it).
func Validate(data []byte) error {
	v, err := ScanValue(data, 0, 1)
	if err != nil {
		return err
	}
	if v.End != len(data) {
		return ErrAt(data, v.End, "after top-level value")
	}
	return nil
}

// ScanKey scans an object key at data[i] and the colon after it; next is
// the index past the colon.
func ScanKey(data []byte, i int) (key Span, next int, err error) { return scanKey(data, i) }

// SkipNested scans the value at data[i] like [ScanValue], except that
// containers are skipped by counting brackets (strings inside are still
// scanned), without checking their grammar or a depth limit. It is for
// recovering the top level of input too deeply nested to scan; its cost
// is linear in the bytes skipped.
func SkipNested(data []byte, i int) (Span, error) {
	if i >= len(data) {
		return Span{}, ErrAt(data, i, "")
	}
	if c := data[i]; c != '{' && c != '[' {
		return scanScalar(data, i)
	}
	start, depth := i, 0
	for i < len(data) {
		switch data[i] {
		case '"':
			end, _, err := scanString(data, i)
			if err != nil {
				return Span{}, err
			}
			i = end
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return containerSpan(data, start, i+1), nil
			}
		}
		i++
	}
	return Span{}, ErrAt(data, i, "")
}

// IsDepthError reports whether err is the scanner's error for input nested
// deeper than [MaxDepth].
func IsDepthError(err error) bool {
	se, ok := err.(*syntaxError)
	return ok && se.msg == msgDepth
}

// msgDepth is the message of the depth error.
const msgDepth = "exceeded max depth"
