package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/host"
	"github.com/conduitmcp/conduit/protocol"
)

// MaxNameLen is the longest name a [Set] gives a tool: the limit of
// OpenAI's and Anthropic's function names (Gemini allows 128).
const MaxNameLen = 64

// Tool is one tool on offer.
type Tool struct {
	// Name is the name the model sees and calls. Set by [Load]; a
	// [Source] fills it with its own name for the tool (the catalogue
	// name of a host, the tool's name for a client), which Load keeps
	// when it fits every provider's rules and is unique.
	Name string
	// Server is the server that offers the tool ("" for a single client).
	Server string
	// Tool is the tool as the server described it.
	Tool protocol.Tool
}

// Source is where a [Set] finds tools and runs them. [FromClient] and
// [FromHost] make one; any other implementation works too.
type Source interface {
	// ListTools returns the tools on offer. It may block; it may be
	// called concurrently.
	ListTools(ctx context.Context) ([]Tool, error)
	// CallTool runs t (as ListTools returned it) with the arguments
	// object args. It may block; it may be called concurrently. A tool
	// that fails reports it in the result (isError); the error is for
	// everything else.
	CallTool(ctx context.Context, t Tool, args json.RawMessage) (*protocol.CallToolResult, error)
}

// FromClient returns the tools of one connected client as a [Source].
func FromClient(c *client.Client) Source { return clientSource{c} }

// FromHost returns the catalogue of a host (every server's tools, under
// the host's collision-safe names) as a [Source].
func FromHost(h *host.Host) Source { return hostSource{h} }

type clientSource struct{ c *client.Client }

func (s clientSource) ListTools(ctx context.Context) ([]Tool, error) {
	var out []Tool
	for t, err := range s.c.Tools(ctx) {
		if err != nil {
			return nil, err
		}
		out = append(out, Tool{Name: t.Name, Tool: t})
	}
	return out, nil
}

func (s clientSource) CallTool(ctx context.Context, t Tool, args json.RawMessage) (*protocol.CallToolResult, error) {
	return s.c.CallTool(ctx, t.Tool.Name, args)
}

type hostSource struct{ h *host.Host }

func (s hostSource) ListTools(context.Context) ([]Tool, error) {
	var out []Tool
	for _, t := range s.h.Tools() {
		out = append(out, Tool{Name: t.Name, Server: t.Server, Tool: t.Tool})
	}
	return out, nil
}

func (s hostSource) CallTool(ctx context.Context, t Tool, args json.RawMessage) (*protocol.CallToolResult, error) {
	return s.h.CallTool(ctx, t.Name, args)
}

// Options configure a [Set]. The zero value is ready to use.
type Options struct {
	// MaxTextBytes bounds the text of one tool result given back to the
	// model; longer text is cut (at a UTF-8 boundary) and ends with a
	// note saying how much was left out. The notes that describe content
	// not given to the model as it is (audio, resource links, images past
	// MaxImageBytes) have a bound of their own, as large but at least 4
	// KiB, and quote the server's strings cut to 200 bytes; notes past it
	// are counted in a last note. 0 means [DefaultMaxTextBytes]; a
	// negative value means no limit.
	MaxTextBytes int
	// MaxImageBytes bounds the decoded size of the images of one tool
	// result; an image past the bound is replaced by a text note. 0
	// means [DefaultMaxImageBytes]; a negative value means no limit.
	MaxImageBytes int
	// Name, when set, names each tool from its server and its own name
	// instead of the source's name; the result is then made to fit the
	// providers' rules and made unique as any name is.
	Name func(server, tool string) string
}

// Defaults of [Options].
const (
	DefaultMaxTextBytes  = 64 << 10
	DefaultMaxImageBytes = 5 << 20
)

// Set is the tools of a [Source] at one moment, named for models. It
// converts their schemas for a provider ([Set.Declarations]) and runs
// the calls a model makes ([Set.Call]). Load a new Set when the tools
// change (a host's Changed channel, a client's tools list_changed).
//
// A Set is safe for concurrent use.
type Set struct {
	src    Source
	opts   Options
	tools  []Tool
	listed []Tool // per tool, as the source listed it (for its CallTool)
	index  map[string]int
	args   []*argFixer // per tool: how to clean the model's arguments

	mu    sync.Mutex
	decls map[Dialect][]Declaration // guarded by mu; computed once per dialect
	errs  map[Dialect]error         // guarded by mu
}

// Load lists src's tools and names each for models: names fit
// ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ (every provider accepts that), are unique,
// and stay the same while the listed tools stay the same. opts may be nil.
func Load(ctx context.Context, src Source, opts *Options) (*Set, error) {
	tools, err := src.ListTools(ctx)
	if err != nil {
		return nil, &Error{Op: "list tools", Err: err}
	}
	s := &Set{src: src, index: make(map[string]int, len(tools))}
	if opts != nil {
		s.opts = *opts
	}
	nm := newNamer()
	for _, t := range tools {
		base := t.Name
		if s.opts.Name != nil {
			base = s.opts.Name(t.Server, t.Tool.Name)
		}
		s.listed = append(s.listed, t)
		t.Name = nm.name(base, t.Server+"\x00"+t.Tool.Name)
		s.index[t.Name] = len(s.tools)
		s.tools = append(s.tools, t)
		s.args = append(s.args, newArgFixer(t.Tool.InputSchema))
	}
	return s, nil
}

// Tools returns the tools of s, in the order of the source, with the
// names models see.
func (s *Set) Tools() []Tool { return append([]Tool(nil), s.tools...) }

// Tool returns the tool a model calls name.
func (s *Set) Tool(name string) (Tool, bool) {
	i, ok := s.index[name]
	if !ok {
		return Tool{}, false
	}
	return s.tools[i], true
}

// SanitizeName turns s into a name every provider accepts: characters
// other than ASCII letters, digits, "_" and "-" become "_" (so the dots
// MCP names may hold do too), a name that is empty or starts with a
// digit or "-" gets a leading "_", and a name longer than [MaxNameLen] is
// cut and ends with a hash of the whole name.
func SanitizeName(s string) string {
	b := make([]byte, 0, len(s)+1)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			c = '_'
		}
		b = append(b, c)
	}
	if len(b) == 0 || b[0] == '-' || b[0] >= '0' && b[0] <= '9' {
		b = append([]byte{'_'}, b...)
	}
	if len(b) > MaxNameLen {
		suffix := "_" + hash8(s)
		b = append(b[:MaxNameLen-len(suffix)], suffix...)
	}
	return string(b)
}

func hash8(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s))
	return fmt.Sprintf("%08x", h.Sum32())
}

// namer gives names that are unique among those it gave.
type namer struct {
	used map[string]bool
	// next holds, per first suffixed candidate, the counter to try
	// next: a name listed many times tries each suffix once, not every
	// suffix taken before it.
	next map[string]int
}

func newNamer() *namer { return &namer{used: map[string]bool{}, next: map[string]int{}} }

// name returns the sanitized base, or when taken the sanitized base with
// a suffix from key (the server and tool), not taken.
func (nm *namer) name(base, key string) string {
	n := SanitizeName(base)
	if !nm.used[n] {
		nm.used[n] = true
		return n
	}
	tag := "_" + hash8(key)
	first := n[:min(len(n), MaxNameLen-len(tag))] + tag
	for i := nm.next[first]; ; i++ {
		c := first
		if i > 0 {
			suffix := tag + "_" + strconv.Itoa(i)
			c = n[:min(len(n), MaxNameLen-len(suffix))] + suffix
		}
		if !nm.used[c] {
			nm.used[c] = true
			nm.next[first] = i + 1
			return c
		}
	}
}
