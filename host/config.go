package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Format is a configuration file format.
type Format int

// The formats [Load] and [Parse] read.
const (
	// FormatAuto detects the format: a top-level "servers" object is
	// [FormatVSCode], a top-level "mcpServers" object is
	// [FormatMCPServers].
	FormatAuto Format = iota
	// FormatMCPServers is the "mcpServers" object of Claude Desktop
	// (claude_desktop_config.json), Cursor (.cursor/mcp.json) and Claude
	// Code (.mcp.json): each entry has command, args and env, or url,
	// headers and type. The cwd field, which several hosts accept, sets
	// the working directory; "disabled": true skips an entry.
	FormatMCPServers
	// FormatVSCode is VS Code's .vscode/mcp.json: a "servers" object
	// (type, command, args, env and envFile, or url and headers) and an
	// "inputs" array of values to prompt for; or the same under "mcp" in
	// its settings.json.
	FormatVSCode
)

// String returns "auto", "mcpServers" or "vscode".
func (f Format) String() string {
	switch f {
	case FormatMCPServers:
		return "mcpServers"
	case FormatVSCode:
		return "vscode"
	}
	return "auto"
}

// Transport types of a [ServerConfig], after normalization.
const (
	TypeStdio     = "stdio"     // a subprocess speaking over stdin and stdout
	TypeHTTP      = "http"      // Streamable HTTP (also "streamable-http", "streamableHttp")
	TypeSSE       = "sse"       // the deprecated HTTP+SSE transport
	TypeWebSocket = "websocket" // WebSocket (also "ws"); inferred from a ws:// or wss:// URL
)

// ServerConfig is one server of a configuration file, with every variable
// expanded.
type ServerConfig struct {
	// Name is the server's key in the file.
	Name string
	// Type is TypeStdio, TypeHTTP, TypeSSE or TypeWebSocket. When the file
	// gives none it is TypeStdio for a command and, for a URL, TypeHTTP
	// (TypeWebSocket for ws:// and wss://).
	Type string
	// Command, Args, Env and Dir start a stdio server. Env holds the
	// file's env entries (and those of a VS Code envFile); they are added
	// to a minimal inherited environment (see transport.Stdio).
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// URL and Header reach an HTTP, SSE or WebSocket server.
	URL    string
	Header http.Header
	// Disabled is set for an entry with "disabled": true; [Start] skips it.
	Disabled bool
}

// Config is a parsed configuration file.
type Config struct {
	// Path is the file it was read from ("" for none).
	Path string
	// Format is the detected (or given) format.
	Format Format
	// Servers are the file's servers, sorted by name.
	Servers []ServerConfig
}

// Server returns the server called name.
func (c *Config) Server(name string) (ServerConfig, bool) {
	for _, s := range c.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return ServerConfig{}, false
}

// Input is a VS Code input variable ("inputs" entry) that a ${input:ID}
// reference asks for.
type Input struct {
	ID          string
	Type        string // "promptString" or "pickString"
	Description string
	Password    bool
	Default     string
	Options     []string // pickString choices
}

// LoadOptions tune [Load] and [Parse]. The zero value (or nil) works.
type LoadOptions struct {
	// Format forces a format; FormatAuto (the zero value) detects it.
	Format Format
	// LookupEnv resolves ${VAR}, ${VAR:-default} and ${env:VAR}; nil
	// means os.LookupEnv.
	LookupEnv func(name string) (string, bool)
	// Input resolves ${input:ID} references of a VS Code file, once per
	// ID. Nil, or an error, makes every such reference an error.
	Input func(in Input) (string, error)
	// WorkspaceFolder is the value of ${workspaceFolder}; "" means the
	// directory above a .vscode or .cursor directory holding the file,
	// else the file's directory.
	WorkspaceFolder string
	// NoExpand leaves every ${…} reference as written.
	NoExpand bool
}

// ErrUnsetVariable is matched by the [*ConfigError] of a ${VAR} reference
// to an unset variable without a default.
var ErrUnsetVariable = errors.New("host: variable is not set and has no default")

// ErrUnresolvedInput is matched by the [*ConfigError] of a ${input:ID}
// reference that could not be resolved.
var ErrUnresolvedInput = errors.New("host: input variable is not resolved")

// ConfigError reports bad input in a configuration file.
type ConfigError struct {
	File   string // the file, or "" when parsed from memory without a name
	Server string // the server's name, or "" for the whole file
	Field  string // the field, e.g. "url", "env.API_KEY", "args[2]"
	Err    error
}

// Error returns "host: FILE: server "NAME": FIELD: what is wrong".
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("host: ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Server != "" {
		fmt.Fprintf(&b, "server %q: ", e.Server)
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns Err.
func (e *ConfigError) Unwrap() error { return e.Err }

// ConfigErrors is every bad server of one file, in the file's order: what
// [Load], [Parse] and [Start] return when more than one server is bad (one
// bad server is a [*ConfigError] alone). errors.As finds the first
// *ConfigError, and errors.Is matches the sentinel of any of them.
type ConfigErrors []*ConfigError

// Error returns every error on one line: "host: FILE: server "A": FIELD:
// what is wrong; server "B": …".
func (e ConfigErrors) Error() string {
	var b strings.Builder
	for i, ce := range e {
		if i == 0 {
			b.WriteString(ce.Error())
			continue
		}
		b.WriteString("; ")
		c := *ce
		c.File = "" // named once, by the first
		b.WriteString(strings.TrimPrefix(c.Error(), "host: "))
	}
	return b.String()
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (e ConfigErrors) Unwrap() []error {
	out := make([]error, len(e))
	for i, ce := range e {
		out[i] = ce
	}
	return out
}

// err returns nil for none, the *ConfigError for one, else e.
func (e ConfigErrors) err() error {
	switch len(e) {
	case 0:
		return nil
	case 1:
		return e[0]
	}
	return e
}

// Load reads the configuration file at path. opts may be nil.
//
// Errors: the *fs.PathError of reading the file, or a [*ConfigError]
// naming the file, the server and the field (a [ConfigErrors] of every
// bad server when there are several) (an unknown transport type,
// neither command nor url, a malformed URL, an unset variable without a
// default ([ErrUnsetVariable]), an unresolved input
// ([ErrUnresolvedInput]), ${VAR:-default} defaults nested more than 32
// deep, a duplicate server name).
func Load(path string, opts *LoadOptions) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, opts)
}

// rawFile is the union of the formats' top levels.
type rawFile struct {
	MCPServers json.RawMessage `json:"mcpServers"`
	Servers    json.RawMessage `json:"servers"`
	Inputs     []rawInput      `json:"inputs"`
	MCP        *struct {
		Servers json.RawMessage `json:"servers"`
		Inputs  []rawInput      `json:"inputs"`
	} `json:"mcp"`
}

type rawInput struct {
	ID          string   `json:"id"`
	Type        string   `json:"type"`
	Description string   `json:"description"`
	Password    bool     `json:"password"`
	Default     string   `json:"default"`
	Options     []string `json:"options"`
}

// rawServer is one entry of either format.
type rawServer struct {
	Type      string                     `json:"type"`
	Transport string                     `json:"transport"`
	Command   string                     `json:"command"`
	Args      []string                   `json:"args"`
	Env       map[string]json.RawMessage `json:"env"`
	EnvFile   string                     `json:"envFile"`
	Cwd       string                     `json:"cwd"`
	URL       string                     `json:"url"`
	ServerURL string                     `json:"serverUrl"`
	Headers   map[string]string          `json:"headers"`
	Disabled  bool                       `json:"disabled"`
}

// Parse parses a configuration file's contents (JSON, with the comments
// and trailing commas VS Code allows); path names it in errors
// and anchors relative paths (it may be ""). opts may be nil. Errors are
// those of [Load].
func Parse(path string, data []byte, opts *LoadOptions) (*Config, error) {
	if opts == nil {
		opts = &LoadOptions{}
	}
	fail := func(server, field string, err error) *ConfigError {
		return &ConfigError{File: path, Server: server, Field: field, Err: err}
	}
	var raw rawFile
	if err := json.Unmarshal(stripJSONC(data), &raw); err != nil {
		return nil, fail("", "", fmt.Errorf("not a JSON configuration: %v", err))
	}
	if raw.MCPServers == nil && raw.Servers == nil && raw.MCP != nil {
		// VS Code's settings.json holds the same under "mcp".
		raw.Servers, raw.Inputs = raw.MCP.Servers, raw.MCP.Inputs
	}
	format := opts.Format
	if format == FormatAuto {
		switch {
		case raw.Servers != nil && raw.MCPServers == nil:
			format = FormatVSCode
		case raw.MCPServers != nil:
			format = FormatMCPServers
		default:
			return nil, fail("", "", errors.New(`no "mcpServers" or "servers" object`))
		}
	}
	key, body := "mcpServers", raw.MCPServers
	if format == FormatVSCode {
		key, body = "servers", raw.Servers
	}
	names, entries, err := decodeServers(body)
	if err != nil {
		return nil, fail("", key, err)
	}
	ex := newExpander(path, opts, raw.Inputs)
	cfg := &Config{Path: path, Format: format}
	var errs ConfigErrors
	seen := make(map[string]bool, len(names))
	for i, name := range names {
		if name == "" {
			errs = append(errs, fail("", key, errors.New("a server has an empty name")))
			continue
		}
		if seen[name] {
			errs = append(errs, fail(name, "", errors.New("duplicate server name")))
			continue
		}
		seen[name] = true
		sc, field, err := ex.server(name, entries[i])
		if err != nil {
			errs = append(errs, fail(name, field, err))
			continue
		}
		cfg.Servers = append(cfg.Servers, sc)
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	slices.SortFunc(cfg.Servers, func(a, b ServerConfig) int { return strings.Compare(a.Name, b.Name) })
	return cfg, nil
}

// decodeServers decodes a servers object keeping every key, so that a
// duplicate name (which encoding/json would merge) is reported.
func decodeServers(body json.RawMessage) ([]string, []rawServer, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not a JSON object")
	}
	var names []string
	var entries []rawServer
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		name, _ := tok.(string)
		var rs rawServer
		if err := dec.Decode(&rs); err != nil {
			return nil, nil, fmt.Errorf("server %q: %v", name, err)
		}
		names = append(names, name)
		entries = append(entries, rs)
	}
	return names, entries, nil
}

// server checks and expands one entry; on error it names the field.
func (ex *expander) server(name string, rs rawServer) (ServerConfig, string, error) {
	sc := ServerConfig{Name: name, Disabled: rs.Disabled}
	var err error
	typ := rs.Type
	if typ == "" {
		typ = rs.Transport
	}
	if sc.Command, err = ex.expand(rs.Command); err != nil {
		return sc, "command", err
	}
	for i, a := range rs.Args {
		v, err := ex.expand(a)
		if err != nil {
			return sc, fmt.Sprintf("args[%d]", i), err
		}
		sc.Args = append(sc.Args, v)
	}
	var field string
	if sc.Env, field, err = ex.envOf(rs); err != nil {
		return sc, field, err
	}
	if sc.Dir, err = ex.expand(rs.Cwd); err != nil {
		return sc, "cwd", err
	}
	if sc.Dir != "" && !filepath.IsAbs(sc.Dir) && ex.dir != "" {
		sc.Dir = filepath.Join(ex.dir, sc.Dir)
	}
	rawURL := rs.URL
	if rawURL == "" {
		rawURL = rs.ServerURL
	}
	if sc.URL, err = ex.expand(rawURL); err != nil {
		return sc, "url", err
	}
	for _, k := range sortedKeys(rs.Headers) {
		v, err := ex.expand(rs.Headers[k])
		if err != nil {
			return sc, "headers." + k, err
		}
		if sc.Header == nil {
			sc.Header = http.Header{}
		}
		sc.Header.Set(k, v)
	}
	field, err = sc.resolveType(typ)
	return sc, field, err
}

// envOf merges a VS Code envFile (first) and env entries.
func (ex *expander) envOf(rs rawServer) (map[string]string, string, error) {
	var env map[string]string
	if rs.EnvFile != "" {
		p, err := ex.expand(rs.EnvFile)
		if err != nil {
			return nil, "envFile", err
		}
		if !filepath.IsAbs(p) && ex.dir != "" {
			p = filepath.Join(ex.dir, p)
		}
		if env, err = readEnvFile(p); err != nil {
			return nil, "envFile", err
		}
	}
	for _, k := range sortedKeys(rs.Env) {
		raw, set, err := envValue(rs.Env[k])
		if err != nil {
			return nil, "env." + k, err
		}
		v, err := ex.expand(raw)
		if err != nil {
			return nil, "env." + k, err
		}
		if env == nil {
			env = map[string]string{}
		}
		if !set {
			delete(env, k) // null: not set, even if the envFile sets it
			continue
		}
		env[k] = v
	}
	return env, "", nil
}

// envValue reads an env value: a string, a number or a boolean (as
// written), or null (set is false).
func envValue(raw json.RawMessage) (v string, set bool, err error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return "", false, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true, nil
	}
	var x any
	if err := json.Unmarshal(raw, &x); err != nil {
		return "", false, err
	}
	switch x.(type) {
	case float64, bool:
		return string(bytes.TrimSpace(raw)), true, nil
	}
	return "", false, fmt.Errorf("want a string, a number or a boolean, not %s", bytes.TrimSpace(raw))
}

// resolveType normalizes typ and checks that the entry has what it needs.
func (sc *ServerConfig) resolveType(typ string) (string, error) {
	switch strings.ToLower(typ) {
	case "":
		switch {
		case sc.Command != "" && sc.URL != "":
			return "", errors.New("both command and url are set; give one (or a type)")
		case sc.Command != "":
			sc.Type = TypeStdio
		case sc.URL != "":
			sc.Type = TypeHTTP
			if s := urlScheme(sc.URL); s == "ws" || s == "wss" {
				sc.Type = TypeWebSocket
			}
		default:
			return "", errors.New("neither command nor url is set")
		}
	case "stdio":
		sc.Type = TypeStdio
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		sc.Type = TypeHTTP
	case "sse":
		sc.Type = TypeSSE
	case "websocket", "ws":
		sc.Type = TypeWebSocket
	default:
		return "type", fmt.Errorf("unknown transport type %q (want stdio, http, sse or websocket)", typ)
	}
	if sc.Type == TypeStdio {
		if sc.Command == "" {
			return "command", errors.New("a stdio server needs a command")
		}
		return "", nil
	}
	if sc.URL == "" {
		return "url", fmt.Errorf("a %s server needs a url", sc.Type)
	}
	return "url", checkURL(sc.URL, sc.Type)
}

func urlScheme(s string) string {
	scheme, _, _ := strings.Cut(s, "://")
	return strings.ToLower(scheme)
}

// checkURL checks that raw is an absolute URL with a host and a scheme
// that fits typ.
func checkURL(raw, typ string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("malformed URL: %v", err)
	}
	if u.Host == "" {
		return fmt.Errorf("malformed URL %q: no host", raw)
	}
	s := strings.ToLower(u.Scheme)
	switch {
	case typ == TypeWebSocket && (s == "ws" || s == "wss" || s == "http" || s == "https"):
	case typ != TypeWebSocket && (s == "http" || s == "https"):
	default:
		return fmt.Errorf("malformed URL %q: scheme %q does not fit type %s", raw, u.Scheme, typ)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
