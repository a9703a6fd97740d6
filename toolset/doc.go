// Package toolset offers the tools of MCP servers to a model: it names
// them for function calling, converts their input schemas to the subset
// of JSON Schema each provider takes, runs the calls the model makes and
// turns the results into what the model reads. It is the neutral core of
// the adapters for the model SDKs (modules of their own under adapters/),
// and has no dependency of its own.
//
//	set, err := toolset.Load(ctx, toolset.FromHost(h), nil)   // or FromClient(c)
//	decls, err := set.Declarations(toolset.OpenAIStrict)      // name, description, parameters, strict
//	// … send decls to the model; it answers a call (name, arguments text) …
//	res, err := set.Call(ctx, call.Name, call.Arguments)      // res.Parts, res.IsError, res.Text()
//
// # Names
//
// A model calls a tool by a name that fits every provider:
// ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ (OpenAI and Anthropic allow 64
// characters of that set, Gemini also dots and colons and 128). MCP names
// may be 128 characters long and hold dots; [SanitizeName] replaces what
// does not fit and cuts long names, ending them with a hash of the whole
// name. Names are unique within a [Set] (the host's catalogue names, which
// carry the server's name, or the client's tool names; a name already
// taken gets a suffix from a hash of the server and the tool) and map
// back to the server and its tool ([Set.Tool]).
//
// # Dialects
//
// [Set.Declarations] converts each input schema to a [Dialect]: OpenAI
// function calling without and with strict mode, Anthropic's input_schema
// without and with strict mode, Gemini's Schema type and Gemini's
// parametersJsonSchema. The rules of each are on its constant. Every
// dialect gets an object schema at the root (a root anyOf/oneOf of objects
// is merged into one object); $refs are kept and their targets gathered
// under the root's $defs, or inlined for Gemini's Schema type, where a
// recursive reference is cut; keywords a dialect does not take move into
// the description ("(format: uri; minLength: 3)"), so the model still
// reads them. Each such change is a [Loss] in [Declaration.Losses]. A tool
// that a strict dialect cannot express (a free-form object, an array
// without items, objects nested too deep, recursion for Anthropic) is
// declared without strict mode, with the reason as the first loss. A
// schema no dialect can take (not JSON, a root that is not an object, a
// $ref outside the schema) is a [*SchemaError] and the tool is left out.
//
// # Calls and results
//
// [Set.Call] takes the name and the arguments text as the model wrote
// them. Arguments that are not a JSON object (cut short when the model ran
// out of tokens, for instance) are not sent to the server: the [Result]
// tells the model, so that it can try again. The nulls a model writes for
// optional properties (the strict dialects make them nullable) are
// removed when the tool's schema does not admit null there.
//
// A [Result] holds the tool's content as text and image parts: text as it
// is, images of a type providers take as images, everything else
// (audio, resource links, embedded resources) described in text; the
// structured content, which is also the text when the tool gave no text;
// and IsError for a tool error, which the adapters send as each API's
// error result. Text past [Options.MaxTextBytes] (64 KiB unless set) is
// cut and a last part says how much was left out; images past
// [Options.MaxImageBytes] (5 MiB unless set) become notes. The notes are
// bounded as the text is.
//
// # Concurrency
//
// A [Set] is immutable once loaded and safe for concurrent use; Call may
// run calls in parallel. Load a new Set when the tools change.
//
// # Errors
//
// [Load] fails with an [*Error] when the source cannot list its tools.
// Declarations joins a [*SchemaError] per tool left out. Call returns a
// [*CallError] matching [ErrUnknownTool], [ErrInvalidArguments] or the
// source's error, always together with a Result for the model.
package toolset
