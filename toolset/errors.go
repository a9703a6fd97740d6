package toolset

import (
	"errors"
	"fmt"
)

// Errors matched with errors.Is.
var (
	// ErrUnknownTool: the model called a name that is not in the set.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrInvalidArguments: the model's arguments are not a JSON object
	// (not JSON, cut short, or another JSON value).
	ErrInvalidArguments = errors.New("arguments are not a JSON object")
	// ErrInvalidSchema: the input schema is not JSON, or its root is not
	// an object schema.
	ErrInvalidSchema = errors.New("input schema is not an object schema")
	// ErrUnresolvedRef: the input schema has a $ref that does not point into
	// the schema itself (a remote reference) or points at nothing.
	ErrUnresolvedRef = errors.New("$ref that does not resolve inside the schema")
	// ErrSchemaTooLarge: the schema has more nodes than a conversion
	// makes ([MaxSchemaNodes]), counting inlined references, or its
	// conversion (the declaration, its losses and the paths walked)
	// would be larger than four times the schema or 4 MiB, whichever is
	// more; the conversions of the tools of a [Set] to a dialect
	// ([Set.Declarations]) together grow past four times their schemas
	// by 64 MiB at most.
	ErrSchemaTooLarge = errors.New("schema too large")
)

// MaxSchemaNodes bounds the schema nodes one conversion makes (inlining
// $refs for [Gemini] multiplies them).
const MaxSchemaNodes = 10000

// Error is a failure of an operation of a [Set] on its source.
type Error struct {
	Op  string // "list tools"
	Err error
}

func (e *Error) Error() string { return "toolset: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// SchemaError reports a tool whose input schema cannot be converted to a
// dialect.
type SchemaError struct {
	Tool    string  // the tool's name for the model
	Dialect Dialect // the dialect asked for
	Path    string  // JSON pointer of the offending node; "" for the root
	Err     error   // ErrInvalidSchema, ErrUnresolvedRef, ErrSchemaTooLarge, …
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("toolset: tool %q for %v: %s: %v", e.Tool, e.Dialect, pathOrRoot(e.Path), e.Err)
}

// Unwrap returns e.Err.
func (e *SchemaError) Unwrap() error { return e.Err }

// CallError reports a model's tool call that did not run to an answer of
// the tool: an unknown name, arguments that are not a JSON object, or a
// failure of the protocol or the transport. The [Result] that goes with
// it tells the model what went wrong.
type CallError struct {
	Name string // the name the model called
	Err  error  // ErrUnknownTool, ErrInvalidArguments (wrapped), or the source's error
}

func (e *CallError) Error() string { return fmt.Sprintf("toolset: call %q: %v", e.Name, e.Err) }

// Unwrap returns e.Err.
func (e *CallError) Unwrap() error { return e.Err }

// strictFailure is the reason a schema is outside a strict dialect; the
// conversion then falls back to the loose dialect.
type strictFailure struct {
	path, reason string
}

func (e *strictFailure) Error() string { return pathOrRoot(e.path) + ": " + e.reason }

func isStrictFailure(err error) bool {
	var sf *strictFailure
	return errors.As(err, &sf)
}

// pathError places a conversion error at a node.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return pathOrRoot(e.path) + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }
