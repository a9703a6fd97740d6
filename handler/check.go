package handler

import (
	"errors"
	"reflect"
	"strings"
)

// ErrNoInterface is matched by the error of [Check] for a handler that
// implements none of the interfaces of this package.
var ErrNoInterface = errors.New("handler: implements none of the handler interfaces")

// ErrMethodMismatch is matched by the error of [Check] for a handler with
// a method meant for one of the interfaces of this package that does not
// implement it: the right name with a wrong signature, or a name that
// looks like a misspelling of an interface's method.
var ErrMethodMismatch = errors.New("handler: a method does not implement the handler interface it is named for")

// interfaces are the recognized interfaces, for Check.
var interfaces = []struct {
	name   string
	method string
	typ    reflect.Type
	has    func(Set) bool
}{
	{"Sampler", "CreateMessage", reflect.TypeFor[Sampler](), func(s Set) bool { return s.Sampler != nil }},
	{"Elicitor", "Elicit", reflect.TypeFor[Elicitor](), func(s Set) bool { return s.Elicitor != nil }},
	{"URLElicitor", "ElicitURL", reflect.TypeFor[URLElicitor](), func(s Set) bool { return s.URLElicitor != nil }},
	{"RootsLister", "ListRoots", reflect.TypeFor[RootsLister](), func(s Set) bool { return s.RootsLister != nil }},
	{"LogListener", "OnLog", reflect.TypeFor[LogListener](), func(s Set) bool { return s.LogListener != nil }},
	{"ToolsChangedListener", "OnToolsChanged", reflect.TypeFor[ToolsChangedListener](), func(s Set) bool { return s.ToolsChanged != nil }},
	{"PromptsChangedListener", "OnPromptsChanged", reflect.TypeFor[PromptsChangedListener](), func(s Set) bool { return s.PromptsChanged != nil }},
	{"ResourcesChangedListener", "OnResourcesChanged", reflect.TypeFor[ResourcesChangedListener](), func(s Set) bool { return s.ResourcesChanged != nil }},
	{"ResourceUpdatedListener", "OnResourceUpdated", reflect.TypeFor[ResourceUpdatedListener](), func(s Set) bool { return s.ResourceUpdated != nil }},
	{"ElicitationCompleteListener", "OnElicitationComplete", reflect.TypeFor[ElicitationCompleteListener](), func(s Set) bool { return s.ElicitationDone != nil }},
	{"TaskStatusListener", "OnTaskStatus", reflect.TypeFor[TaskStatusListener](), func(s Set) bool { return s.TaskStatus != nil }},
}

// CheckError is the error of [Check]: what is wrong with a handler of
// type Type. It matches [ErrNoInterface] when the handler implements
// none of the interfaces, and [ErrMethodMismatch] when Problems name a
// method that does not implement the interface it is named for.
type CheckError struct {
	// Type is the handler's type, as %T prints it.
	Type string
	// None is set when the handler implements none of the interfaces.
	None bool
	// Mismatch is set when a method has an interface's name and a wrong
	// signature, or a name that looks like a misspelling of one.
	Mismatch bool
	// Problems are the findings, one short sentence each, e.g.
	// "ListRoot looks like a misspelling of ListRoots (RootsLister)".
	Problems []string
}

// Error returns one line: "handler: TYPE …: problem; problem".
func (e *CheckError) Error() string {
	var b strings.Builder
	b.WriteString("handler: ")
	b.WriteString(e.Type)
	if e.None {
		b.WriteString(" implements none of the handler interfaces")
	}
	for i, p := range e.Problems {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(p)
	}
	return b.String()
}

// Is matches [ErrNoInterface] and [ErrMethodMismatch] as the fields say.
func (e *CheckError) Is(target error) bool {
	return target == ErrNoInterface && e.None || target == ErrMethodMismatch && e.Mismatch
}

// Check reports a handler that is not what it looks meant to be, as a
// [*CheckError]:
//
//   - a non-nil h that, with its Unwrap() any chain, implements none of the
//     interfaces of this package (or a [Funcs] with no field set): the
//     error matches [ErrNoInterface];
//   - a method with an interface method's name and another signature, or
//     a name within a typo of one (ListRoot for ListRoots, Onlog for
//     OnLog) whose interface the handler does not implement, even beside
//     methods that are right: the error matches [ErrMethodMismatch] and
//     names the method it looks meant for and that method's signature.
//
// When *T would implement an interface that the value T does not (methods
// with pointer receivers), the error says to pass a pointer. A nil h is no
// handler and no error.
func Check(h any) error {
	_, err := Inspect(h)
	return err
}

// Inspect is [Detect] and [Check] in one walk of h's Unwrap chain: the
// interfaces found, and the error Check returns. A client looks at its
// handler this way, once per connection.
func Inspect(h any) (Set, error) {
	if h == nil {
		return Set{}, nil
	}
	if f, ok := h.(*Funcs); ok && f == nil {
		return Set{}, &CheckError{Type: "*handler.Funcs", None: true, Problems: []string{"it is nil"}}
	}
	vs := chain(h)
	set := detectChain(vs)
	e := &CheckError{Type: reflect.TypeOf(h).String(), None: set.empty()}
	for _, v := range vs {
		e.inspect(v, set)
	}
	if !e.None && !e.Mismatch {
		return set, nil
	}
	if e.None && len(e.Problems) == 0 {
		e.Problems = append(e.Problems, "it has none of the methods "+methodList()+"; use handler.Funcs, which the compiler checks")
	}
	return set, e
}

// noField is the problem of a Funcs with no field set.
const noField = "no field of the handler.Funcs is set (set CreateMessage, Elicit, ListRoots, OnLog, … for what the client serves)"

// inspect adds the problems of one value of the Unwrap chain.
func (e *CheckError) inspect(v any, set Set) {
	switch f := v.(type) {
	case Funcs:
		if s := f.set(); s.empty() {
			e.Problems = append(e.Problems, noField)
		}
		return
	case *Funcs:
		if f == nil {
			// Detect finds nothing on it, as on a nil handler.
			e.Problems = append(e.Problems, "its Unwrap chain holds a nil *handler.Funcs")
		} else if s := f.set(); s.empty() {
			e.Problems = append(e.Problems, noField)
		}
		return
	}
	t := reflect.TypeOf(v)
	mt := t
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		mt = reflect.PointerTo(t) // the pointer's method set holds the value's
	}
	for m := range mt.Methods() {
		for _, in := range interfaces {
			if in.has(set) {
				continue
			}
			if m.Name == in.method {
				e.Problems = append(e.Problems, e.signature(t, m, in.name, in.typ))
				continue
			}
			if misspelt(m.Name, in.method) {
				e.Mismatch = true
				e.Problems = append(e.Problems, m.Name+" looks like a misspelling of "+in.method+" ("+in.name+")")
			}
		}
	}
}

// signature describes method m of t, named for interface name (typ): a
// pointer receiver on a value, or a wrong signature.
func (e *CheckError) signature(t reflect.Type, m reflect.Method, name string, typ reflect.Type) string {
	e.Mismatch = true
	if reflect.PointerTo(t).Implements(typ) && !t.Implements(typ) {
		return "*" + t.String() + " implements " + name + " (its " + m.Name + " has a pointer receiver): pass a pointer (&v), not the value"
	}
	want := typ.Method(0)
	return m.Name + " has the wrong signature for " + name + ": " + funcSig(m.Type, true) + ", want " + funcSig(want.Type, false)
}

// funcSig formats a method type as func(…) (…), without the receiver
// when recv is set.
func funcSig(ft reflect.Type, recv bool) string {
	var b strings.Builder
	b.WriteString("func(")
	first := 0
	if recv {
		first = 1
	}
	for i := first; i < ft.NumIn(); i++ {
		if i > first {
			b.WriteString(", ")
		}
		if ft.IsVariadic() && i == ft.NumIn()-1 {
			b.WriteString("..." + ft.In(i).Elem().String())
			continue
		}
		b.WriteString(ft.In(i).String())
	}
	b.WriteString(")")
	switch ft.NumOut() {
	case 0:
	case 1:
		b.WriteString(" " + ft.Out(0).String())
	default:
		b.WriteString(" (")
		for i := range ft.NumOut() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(ft.Out(i).String())
		}
		b.WriteString(")")
	}
	return b.String()
}

// methodList names the interfaces' methods, for the message of a handler
// that has none of them.
func methodList() string {
	names := make([]string, len(interfaces))
	for i, in := range interfaces {
		names[i] = in.method
	}
	return strings.Join(names, ", ")
}

// misspelt reports whether name looks like a misspelling of method: the
// same letters in another case, or within one edit (two for names of ten
// letters or more), ignoring case.
func misspelt(name, method string) bool {
	if name == method {
		return false
	}
	a, b := strings.ToLower(name), strings.ToLower(method)
	limit := 1
	if len(method) >= 10 {
		limit = 2
	}
	return editDistance(a, b, limit) <= limit
}

// editDistance is the Levenshtein distance of a and b, or limit+1 once it
// is known to exceed limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
