package handler

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// ErrNoInterface is matched by the error of [Check] for a handler that
// implements none of the interfaces of this package.
var ErrNoInterface = errors.New("handler: implements none of the handler interfaces")

// interfaces are the recognized interfaces, for Check's message.
var interfaces = []struct {
	name   string
	method string
	typ    reflect.Type
}{
	{"Sampler", "CreateMessage", reflect.TypeFor[Sampler]()},
	{"Elicitor", "Elicit", reflect.TypeFor[Elicitor]()},
	{"URLElicitor", "ElicitURL", reflect.TypeFor[URLElicitor]()},
	{"RootsLister", "ListRoots", reflect.TypeFor[RootsLister]()},
	{"LogListener", "OnLog", reflect.TypeFor[LogListener]()},
	{"ToolsChangedListener", "OnToolsChanged", reflect.TypeFor[ToolsChangedListener]()},
	{"PromptsChangedListener", "OnPromptsChanged", reflect.TypeFor[PromptsChangedListener]()},
	{"ResourcesChangedListener", "OnResourcesChanged", reflect.TypeFor[ResourcesChangedListener]()},
	{"ResourceUpdatedListener", "OnResourceUpdated", reflect.TypeFor[ResourceUpdatedListener]()},
	{"ElicitationCompleteListener", "OnElicitationComplete", reflect.TypeFor[ElicitationCompleteListener]()},
	{"TaskStatusListener", "OnTaskStatus", reflect.TypeFor[TaskStatusListener]()},
}

// Check reports a handler that serves nothing: a non-nil h that, with its
// Unwrap() any chain, implements none of the interfaces of this package
// (and is not a [Funcs] with a field set). Such a value is almost always a
// mistake: methods declared on the pointer type while a value was passed,
// or a misspelt method name. The error matches [ErrNoInterface], names the
// interfaces looked for and, when *T would implement some of them, says
// to pass a pointer. A nil h is no handler and no error.
func Check(h any) error {
	if h == nil {
		return nil
	}
	if s := Detect(h); !s.empty() {
		return nil
	}
	if f, ok := h.(*Funcs); ok && f == nil {
		return fmt.Errorf("%w: a nil *handler.Funcs", ErrNoInterface)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%T has none of the methods", h)
	for i, in := range interfaces {
		sep := ", "
		if i == 0 {
			sep = " "
		}
		fmt.Fprintf(&b, "%s%s (%s)", sep, in.method, in.name)
	}
	for v, i := h, 0; v != nil && i < maxUnwrap; i++ {
		pointerHint(&b, reflect.TypeOf(v))
		u, ok := v.(interface{ Unwrap() any })
		if !ok {
			break
		}
		v = u.Unwrap()
	}
	b.WriteString("; check the method names and signatures (methods with pointer receivers need a pointer), or use handler.Funcs")
	return fmt.Errorf("%w: %s", ErrNoInterface, b.String())
}

// pointerHint tells when *t, but not t, implements handler interfaces.
func pointerHint(b *strings.Builder, t reflect.Type) {
	if t.Kind() == reflect.Pointer {
		return
	}
	var viaPtr []string
	for _, in := range interfaces {
		if reflect.PointerTo(t).Implements(in.typ) {
			viaPtr = append(viaPtr, in.name)
		}
	}
	if len(viaPtr) > 0 {
		fmt.Fprintf(b, "; *%s implements %s: its methods have pointer receivers, so pass a pointer (&v), not the value",
			t, strings.Join(viaPtr, ", "))
	}
}
