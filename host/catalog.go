package host

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/conduitmcp/conduit/protocol"
)

// MaxNameLen is the longest catalogue name: what the common LLM
// function-calling APIs accept.
const MaxNameLen = 64

// Tool is a tool in the catalogue.
type Tool struct {
	// Name is the catalogue name ([Host.CallTool] takes it).
	Name string
	// Server is the name of the server that offers it.
	Server string
	// Tool is the tool as the server described it (Tool.Name is the
	// server's own name for it).
	Tool protocol.Tool
}

// Prompt is a prompt in the catalogue.
type Prompt struct {
	Name   string // catalogue name ([Host.GetPrompt] takes it)
	Server string
	Prompt protocol.Prompt
}

// Resource is a resource in the catalogue.
type Resource struct {
	Name     string // catalogue name, from the resource's name
	Server   string
	Resource protocol.Resource
}

// FunctionDeclaration is a tool as LLM function-calling APIs declare
// functions: a name, a description and the JSON Schema of the
// parameters.
type FunctionDeclaration struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptyObjectSchema is the parameters of a tool without an input schema.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// FunctionDeclaration returns t as a function declaration: its catalogue
// name, its description (or title) and its input schema (an empty object
// schema when it has none).
func (t Tool) FunctionDeclaration() FunctionDeclaration {
	d := FunctionDeclaration{Name: t.Name, Description: t.Tool.Description, Parameters: t.Tool.InputSchema}
	if d.Description == "" {
		d.Description = t.Tool.Title
		if d.Description == "" && t.Tool.Annotations != nil {
			d.Description = t.Tool.Annotations.Title
		}
	}
	if s := strings.TrimSpace(string(d.Parameters)); s == "" || s == "null" || s == "{}" {
		d.Parameters = emptyObjectSchema
	}
	return d
}

// catalogue is the merged view; rebuilt whole on every change, guarded by
// Host.mu.
type catalogue struct {
	tools     []Tool
	prompts   []Prompt
	resources []Resource
	toolIdx   map[string]int
	promptIdx map[string]int
	// gone maps the catalogue names of the tools and prompts of servers
	// whose connection ended to their server, so that a call of one is
	// told the server is down, not that the name is unknown.
	goneTools, gonePrompts map[string]*server
}

// publish replaces s's entries and rebuilds the catalogue.
func (h *Host) publish(s *server, tools []protocol.Tool, prompts []protocol.Prompt, resources []protocol.Resource) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.tools, s.prompts, s.resources = tools, prompts, resources
	s.goneTools, s.gonePrompts, s.claims = nil, nil, nil
	h.rebuildLocked()
	h.notifyLocked()
}

// drop removes s's entries (its connection ended), remembering their
// catalogue names, and what they claim (see rebuildLocked), until it
// lists again.
func (h *Host) drop(s *server) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var tools, prompts []string
	for _, t := range h.cat.tools {
		if t.Server == s.cfg.Name {
			tools = append(tools, t.Name)
		}
	}
	for _, p := range h.cat.prompts {
		if p.Server == s.cfg.Name {
			prompts = append(prompts, p.Name)
		}
	}
	if s.tools != nil || s.prompts != nil || s.resources != nil {
		s.claims = claimsOf(s)
	}
	s.tools, s.prompts, s.resources = nil, nil, nil
	s.goneTools, s.gonePrompts = tools, prompts
	h.rebuildLocked()
	h.notifyLocked()
}

// claims are the names a server's entries were listed under (a
// resource's name, or its URI when it has none), which a server that is
// down keeps claiming (rebuildLocked).
type claims struct {
	tools, prompts, resources []string
}

func claimsOf(s *server) *claims {
	c := &claims{}
	for _, t := range s.tools {
		c.tools = append(c.tools, t.Name)
	}
	for _, p := range s.prompts {
		c.prompts = append(c.prompts, p.Name)
	}
	for _, r := range s.resources {
		c.resources = append(c.resources, resourceBase(r))
	}
	return c
}

func resourceBase(r protocol.Resource) string {
	if r.Name == "" {
		return r.URI
	}
	return r.Name
}

// rebuildLocked assigns every entry its catalogue name. Servers are taken
// in name order and each server's entries in name order, so the names
// depend only on what is listed and what servers that are down listed. A
// name that two entries claim (their servers' or their own names differ
// only where Sanitize makes them alike), counting the entries of servers
// that are down, is given to neither: each gets a suffix derived from its
// server and its own name. So a name never passes from one entry to
// another as servers come up and go down: a caller that kept one reaches
// its entry, or is told it is not there.
func (h *Host) rebuildLocked() {
	var cat catalogue
	cat.toolIdx, cat.promptIdx = map[string]int{}, map[string]int{}
	usedRes := map[string]int{}
	// The counts uniqueName tries next, per kind as the names it takes.
	toolTried, promptTried, resTried := map[string]int{}, map[string]int{}, map[string]int{}
	toolClaims, promptClaims, resClaims := h.claimCounts()
	for _, s := range h.servers {
		server := s.cfg.Name
		for _, t := range sortedBy(s.tools, func(t protocol.Tool) string { return t.Name }) {
			n := h.uniqueName(cat.toolIdx, toolTried, toolClaims, server, t.Name)
			cat.toolIdx[n] = len(cat.tools)
			cat.tools = append(cat.tools, Tool{Name: n, Server: server, Tool: t})
		}
		for _, p := range sortedBy(s.prompts, func(p protocol.Prompt) string { return p.Name }) {
			n := h.uniqueName(cat.promptIdx, promptTried, promptClaims, server, p.Name)
			cat.promptIdx[n] = len(cat.prompts)
			cat.prompts = append(cat.prompts, Prompt{Name: n, Server: server, Prompt: p})
		}
		for _, r := range sortedBy(s.resources, func(r protocol.Resource) string { return r.Name + "\x00" + r.URI }) {
			n := h.uniqueName(usedRes, resTried, resClaims, server, resourceBase(r))
			usedRes[n] = len(cat.resources)
			cat.resources = append(cat.resources, Resource{Name: n, Server: server, Resource: r})
		}
	}
	cat.goneTools, cat.gonePrompts = map[string]*server{}, map[string]*server{}
	for _, s := range h.servers {
		for _, n := range s.goneTools {
			if _, live := cat.toolIdx[n]; !live {
				cat.goneTools[n] = s
			}
		}
		for _, n := range s.gonePrompts {
			if _, live := cat.promptIdx[n]; !live {
				cat.gonePrompts[n] = s
			}
		}
	}
	h.cat = cat
}

// absent is the error of a call of name, a tool or prompt (kind) that is
// not in the catalogue: a [*ServerError] matching [ErrNotReady] when the
// name is one of a server that is not ready (one it listed before its
// connection ended or, with the default names, SERVER__… for a server
// that never connected), else [ErrNotFound].
func (h *Host) absent(kind, name string) error {
	h.mu.Lock()
	gone := h.cat.goneTools
	if kind == "prompt" {
		gone = h.cat.gonePrompts
	}
	s := gone[name]
	h.mu.Unlock()
	if s == nil {
		s = h.neverConnected(name)
	}
	if s != nil {
		if _, err := s.readyClient(); err != nil {
			return err
		}
	}
	return fmt.Errorf("%s %q: %w", kind, name, ErrNotFound)
}

// neverConnected returns the server that never connected whose default
// catalogue names begin name (the longest such prefix), or nil. With
// Options.Name set the names of a server that never listed are unknown.
func (h *Host) neverConnected(name string) *server {
	if h.opts.Name != nil {
		return nil
	}
	var best *server
	bestLen := 0
	for _, s := range h.servers {
		prefix := Sanitize(s.cfg.Name + "__")
		if len(prefix) <= bestLen || !strings.HasPrefix(name, prefix) || len(name) == len(prefix) {
			continue
		}
		if st := s.snapshot(); st.Connects == 0 {
			best, bestLen = s, len(prefix)
		}
	}
	return best
}

func sortedBy[T any](items []T, key func(T) string) []T {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	return out
}

// claimCounts counts, per kind, the entries that claim each sanitized
// name: the listed ones and those of servers that are down.
func (h *Host) claimCounts() (tools, prompts, resources map[string]int) {
	tools, prompts, resources = map[string]int{}, map[string]int{}, map[string]int{}
	for _, s := range h.servers {
		server := s.cfg.Name
		for _, t := range s.tools {
			tools[h.plainName(server, t.Name)]++
		}
		for _, p := range s.prompts {
			prompts[h.plainName(server, p.Name)]++
		}
		for _, r := range s.resources {
			resources[h.plainName(server, resourceBase(r))]++
		}
		if c := s.claims; c != nil && s.tools == nil && s.prompts == nil && s.resources == nil {
			for _, n := range c.tools {
				tools[h.plainName(server, n)]++
			}
			for _, n := range c.prompts {
				prompts[h.plainName(server, n)]++
			}
			for _, n := range c.resources {
				resources[h.plainName(server, n)]++
			}
		}
	}
	return tools, prompts, resources
}

// plainName is the sanitized name of server's item, before uniqueName
// makes it unique.
func (h *Host) plainName(server, item string) string {
	raw := server + "__" + item
	if h.opts.Name != nil {
		raw = h.opts.Name(server, item)
	}
	return Sanitize(raw)
}

// uniqueName returns the sanitized name of server's item, not yet in used:
// the plain name when it is free and no other entry claims it (claims),
// else the plain name with a suffix of a hash of server and item, then a
// count. tried (one per used) remembers, per name and hash, the count to
// try next, so that a server listing one name many times is named in
// linear time with the names a search from 0 would give (every count
// below it is taken: used only grows during a rebuild).
func (h *Host) uniqueName(used, tried, claims map[string]int, server, item string) string {
	n := h.plainName(server, item)
	if _, taken := used[n]; !taken && claims[n] <= 1 {
		return n
	}
	sum := fnv.New32a()
	sum.Write([]byte(server + "\x00" + item))
	tag := fmt.Sprintf("%08x", sum.Sum32())
	key := n + "\x00" + tag
	for i := tried[key]; ; i++ {
		suffix := "_" + tag
		if i > 0 {
			suffix += "_" + strconv.Itoa(i)
		}
		c := truncate(n, MaxNameLen-len(suffix)) + suffix
		if _, taken := used[c]; !taken {
			tried[key] = i + 1
			return c
		}
	}
}

// Sanitize turns s into a name LLM function-calling APIs accept: every
// character other than ASCII letters, digits, "_" and "-" becomes "_", a name
// that is empty or starts with a digit or "-" gets a leading "_", and a
// name longer than [MaxNameLen] is cut and ends with a hash of the whole
// name (so that long names stay distinct).
func Sanitize(s string) string {
	b := make([]byte, 0, len(s))
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			c = '_'
		}
		b = append(b, byte(c))
	}
	n := string(b)
	if n == "" || n[0] == '-' || n[0] >= '0' && n[0] <= '9' {
		n = "_" + n
	}
	if len(n) > MaxNameLen {
		sum := fnv.New32a()
		sum.Write([]byte(s))
		suffix := fmt.Sprintf("_%08x", sum.Sum32())
		n = n[:MaxNameLen-len(suffix)] + suffix
	}
	return n
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Tools returns the catalogue's tools: servers in name order, each
// server's tools in name order. Names are unique; they stay the same
// while the set of listed entries stays the same, and a name never passes
// from one server's tool to another's (see the package doc, Names).
func (h *Host) Tools() []Tool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.cat.tools)
}

// Tool returns the tool with catalogue name name.
func (h *Host) Tool(name string) (Tool, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i, ok := h.cat.toolIdx[name]
	if !ok {
		return Tool{}, false
	}
	return h.cat.tools[i], true
}

// Prompts returns the catalogue's prompts, ordered as [Host.Tools].
func (h *Host) Prompts() []Prompt {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.cat.prompts)
}

// Prompt returns the prompt with catalogue name name.
func (h *Host) Prompt(name string) (Prompt, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i, ok := h.cat.promptIdx[name]
	if !ok {
		return Prompt{}, false
	}
	return h.cat.prompts[i], true
}

// Resources returns the catalogue's resources, ordered as [Host.Tools].
func (h *Host) Resources() []Resource {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.cat.resources)
}

// FunctionDeclarations returns every tool of the catalogue as a
// [FunctionDeclaration], ready for an LLM function-calling API.
func (h *Host) FunctionDeclarations() []FunctionDeclaration {
	tools := h.Tools()
	out := make([]FunctionDeclaration, len(tools))
	for i, t := range tools {
		out[i] = t.FunctionDeclaration()
	}
	return out
}
