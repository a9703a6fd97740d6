package host_test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/host"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestParseFormats reads one file of each format and checks the typed
// config it gives.
func TestParseFormats(t *testing.T) {
	vars := env(map[string]string{"HOME_DIR": "/home/u", "TOKEN": "s3cret", "EMPTY": ""})
	tests := []struct {
		name   string
		file   string
		data   string
		opts   host.LoadOptions
		format host.Format
		want   []host.ServerConfig
	}{{
		name:   "claude desktop",
		file:   "claude_desktop_config.json",
		format: host.FormatMCPServers,
		data: `{"mcpServers": {
			"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"DEBUG": "1"}, "cwd": "/srv"},
			"off": {"command": "x", "disabled": true}}}`,
		want: []host.ServerConfig{
			{Name: "fs", Type: host.TypeStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}, Env: map[string]string{"DEBUG": "1"}, Dir: "/srv"},
			{Name: "off", Type: host.TypeStdio, Command: "x", Disabled: true},
		},
	}, {
		name:   "cursor remote",
		file:   ".cursor/mcp.json",
		format: host.FormatMCPServers,
		data: `{"mcpServers": {
			"remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}},
			"legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
			"socket": {"url": "wss://example.com/ws"}}}`,
		want: []host.ServerConfig{
			{Name: "legacy", Type: host.TypeSSE, URL: "http://127.0.0.1:9/sse"},
			{Name: "remote", Type: host.TypeHTTP, URL: "https://example.com/mcp", Header: http.Header{"Authorization": {"Bearer s3cret"}}},
			{Name: "socket", Type: host.TypeWebSocket, URL: "wss://example.com/ws"},
		},
	}, {
		name:   "claude code expansion",
		file:   ".mcp.json",
		format: host.FormatMCPServers,
		data: `{"mcpServers": {
			"api": {"type": "http", "url": "${API_URL:-https://api.example.com}/mcp", "headers": {"X-Key": "${TOKEN}"}},
			"tool": {"type": "stdio", "command": "${HOME_DIR}/bin/tool", "args": ["--level=${LEVEL:-info}", "--n=${EMPTY:-${TOKEN}}", "$PLAIN"],
			         "env": {"K": "${TOKEN}", "E": "${EMPTY}"}}}}`,
		want: []host.ServerConfig{
			{Name: "api", Type: host.TypeHTTP, URL: "https://api.example.com/mcp", Header: http.Header{"X-Key": {"s3cret"}}},
			{Name: "tool", Type: host.TypeStdio, Command: "/home/u/bin/tool", Args: []string{"--level=info", "--n=s3cret", "$PLAIN"}, Env: map[string]string{"K": "s3cret", "E": ""}},
		},
	}, {
		name:   "vscode",
		file:   ".vscode/mcp.json",
		format: host.FormatVSCode,
		opts: host.LoadOptions{Input: func(in host.Input) (string, error) {
			if in.ID == "api-key" && in.Password && in.Description == "API key" {
				return "k-123", nil
			}
			return "", errors.New("unexpected input " + in.ID)
		}},
		data: `{"inputs": [{"type": "promptString", "id": "api-key", "description": "API key", "password": true}],
			"servers": {
			"memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory", "${workspaceFolder}/mem.json"], "env": {"API_KEY": "${input:api-key}"}},
			"gh": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${input:api-key}"}}}}`,
		want: []host.ServerConfig{
			{Name: "gh", Type: host.TypeHTTP, URL: "https://api.githubcopilot.com/mcp/", Header: http.Header{"Authorization": {"Bearer k-123"}}},
			{Name: "memory", Type: host.TypeStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory", "WORKSPACE/mem.json"}, Env: map[string]string{"API_KEY": "k-123"}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, tt.file)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			opts := tt.opts
			opts.LookupEnv = vars
			cfg, err := host.Load(p, &opts)
			if err != nil {
				t.Fatalf("Load(%s) = %v", tt.file, err)
			}
			if cfg.Format != tt.format {
				t.Errorf("Format = %v, want %v", cfg.Format, tt.format)
			}
			for i := range tt.want {
				for j, a := range tt.want[i].Args {
					tt.want[i].Args[j] = strings.ReplaceAll(a, "WORKSPACE", dir)
				}
			}
			if diff := cmp.Diff(tt.want, cfg.Servers); diff != "" {
				t.Errorf("Load(%s) servers (-want +got):\n%s", tt.file, diff)
			}
		})
	}
}

// TestParseErrors checks that bad input gives a *ConfigError naming the
// file, the server and the field.
func TestParseErrors(t *testing.T) {
	vars := env(map[string]string{"SET": "v"})
	tests := []struct {
		name, data    string
		server, field string
		is            error
		wantInMessage string
		input         func(host.Input) (string, error)
	}{
		{name: "unknown type", data: `{"mcpServers": {"a": {"type": "grpc", "url": "http://x/"}}}`, server: "a", field: "type", wantInMessage: `unknown transport type "grpc"`},
		{name: "neither", data: `{"mcpServers": {"a": {"env": {"X": "1"}}}}`, server: "a", wantInMessage: "neither command nor url"},
		{name: "both", data: `{"mcpServers": {"a": {"command": "x", "url": "http://h/"}}}`, server: "a", wantInMessage: "both command and url"},
		{name: "malformed url", data: `{"mcpServers": {"a": {"url": "http://[::1"}}}`, server: "a", field: "url", wantInMessage: "malformed URL"},
		{name: "url without host", data: `{"mcpServers": {"a": {"type": "http", "url": "/mcp"}}}`, server: "a", field: "url", wantInMessage: "no host"},
		{name: "wrong scheme", data: `{"mcpServers": {"a": {"type": "http", "url": "ftp://h/x"}}}`, server: "a", field: "url", wantInMessage: "scheme"},
		{name: "http without url", data: `{"mcpServers": {"a": {"type": "http", "command": "x"}}}`, server: "a", field: "url", wantInMessage: "needs a url"},
		{name: "unset variable", data: `{"mcpServers": {"a": {"command": "x", "args": ["ok", "${NOPE}"]}}}`, server: "a", field: "args[1]", is: host.ErrUnsetVariable},
		{name: "unset in env", data: `{"mcpServers": {"a": {"command": "x", "env": {"K": "${NOPE}"}}}}`, server: "a", field: "env.K", is: host.ErrUnsetVariable},
		{name: "unset in header", data: `{"mcpServers": {"a": {"url": "http://h/", "headers": {"Authorization": "Bearer ${NOPE}"}}}}`, server: "a", field: "headers.Authorization", is: host.ErrUnsetVariable},
		{name: "unterminated", data: `{"mcpServers": {"a": {"command": "${SET"}}}`, server: "a", field: "command", wantInMessage: "unterminated"},
		{name: "duplicate", data: `{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}, "a": {"command": "z"}}}`, server: "a", wantInMessage: "duplicate server name"},
		{name: "unresolved input", data: `{"inputs": [{"id": "k", "type": "promptString"}], "servers": {"v": {"command": "x", "env": {"K": "${input:k}"}}}}`, server: "v", field: "env.K", is: host.ErrUnresolvedInput},
		{name: "input refused", data: `{"servers": {"v": {"url": "http://h/", "headers": {"A": "${input:k}"}}}}`, server: "v", field: "headers.A", is: host.ErrUnresolvedInput,
			input: func(host.Input) (string, error) { return "", errors.New("user cancelled") }},
		{name: "unsupported variable", data: `{"servers": {"v": {"command": "${command:pick}"}}}`, server: "v", field: "command", wantInMessage: "unsupported variable"},
		{name: "env object", data: `{"mcpServers": {"a": {"command": "x", "env": {"K": {"v": 1}}}}}`, server: "a", field: "env.K", wantInMessage: "want a string"},
		{name: "no servers", data: `{"other": {}}`, wantInMessage: `no "mcpServers" or "servers"`},
		{name: "not json", data: `{"mcpServers": `, wantInMessage: "not a JSON configuration"},
		{name: "servers not object", data: `{"mcpServers": []}`, field: "mcpServers", wantInMessage: "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := host.Parse("conf.json", []byte(tt.data), &host.LoadOptions{LookupEnv: vars, Input: tt.input})
			var ce *host.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Parse() = %v, want a *ConfigError", err)
			}
			if ce.File != "conf.json" || ce.Server != tt.server || ce.Field != tt.field {
				t.Errorf("Parse() error at (%q, %q, %q), want (conf.json, %q, %q): %v", ce.File, ce.Server, ce.Field, tt.server, tt.field, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Parse() = %v, want errors.Is %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.wantInMessage) || !strings.HasPrefix(err.Error(), "host: conf.json: ") {
				t.Errorf("Parse() = %q, want the file name and %q", err, tt.wantInMessage)
			}
		})
	}
}

// TestInputAskedOnce checks that an input referenced twice is resolved
// with one call, and NoExpand keeps references.
func TestInputAskedOnce(t *testing.T) {
	calls := 0
	data := `{"servers": {"a": {"command": "x", "args": ["${input:k}", "${input:k}"]}}}`
	cfg, err := host.Parse("", []byte(data), &host.LoadOptions{Input: func(in host.Input) (string, error) { calls++; return "v", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers[0].Args; calls != 1 || !cmp.Equal(got, []string{"v", "v"}) {
		t.Errorf("args = %q after %d calls, want [v v] after 1", got, calls)
	}
	cfg, err = host.Parse("", []byte(data), &host.LoadOptions{NoExpand: true})
	if err != nil || cfg.Servers[0].Args[0] != "${input:k}" {
		t.Errorf("NoExpand: Parse() = %+v, %v; want the reference kept", cfg, err)
	}
}

// TestEnvFile reads a VS Code envFile; env entries win over it.
func TestEnvFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	os.MkdirAll(filepath.Join(dir, ".vscode"), 0o755)
	os.WriteFile(filepath.Join(dir, ".env"), []byte("# comment\nexport A=1\nB=\"two words\"\n\nC=3\n"), 0o644)
	p := filepath.Join(dir, ".vscode", "mcp.json")
	os.WriteFile(p, []byte(`{"servers": {"s": {"type": "stdio", "command": "x", "envFile": "${workspaceFolder}/.env", "env": {"C": "env wins"}}}}`), 0o644)
	cfg, err := host.Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "1", "B": "two words", "C": "env wins"}
	if diff := cmp.Diff(want, cfg.Servers[0].Env); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}
	os.WriteFile(filepath.Join(dir, ".env"), []byte("not a pair\n"), 0o644)
	_, err = host.Load(p, nil)
	var ce *host.ConfigError
	if !errors.As(err, &ce) || ce.Field != "envFile" {
		t.Errorf("Load() with a bad envFile = %v, want a *ConfigError on envFile", err)
	}
}

func TestSanitize(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct{ in, want string }{
		{"github__create_issue", "github__create_issue"},
		{"my server__do.it", "my_server__do_it"},
		{"1password__get", "_1password__get"},
		{"-x", "_-x"},
		{"", "_"},
		{"ünï__côde", "_n___c_de"},
	}
	for _, tt := range tests {
		if got := host.Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	a, b := host.Sanitize(long+"a"), host.Sanitize(long+"b")
	if len(a) != host.MaxNameLen || len(b) != host.MaxNameLen || a == b {
		t.Errorf("Sanitize of long names = %q, %q; want distinct names of %d bytes", a, b, host.MaxNameLen)
	}
}

// TestJSONC reads a VS Code file with comments and trailing commas, and
// VS Code's settings.json "mcp" object.
func TestJSONC(t *testing.T) {
	data := `{
	// A comment, "with a quote"
	"inputs": [
		{"type": "promptString", "id": "k", "password": true,}, /* block
		comment */
	],
	"servers": {
		"a": {"type": "stdio", "command": "x", "args": ["http://not/a // comment", "a,}"],},
	},
}`
	cfg, err := host.Parse("mcp.json", []byte(data), &host.LoadOptions{Input: func(host.Input) (string, error) { return "v", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers[0].Args; !cmp.Equal(got, []string{"http://not/a // comment", "a,}"}) {
		t.Errorf("args = %q, want the strings kept", got)
	}
	cfg, err = host.Parse("settings.json", []byte(`{"editor.fontSize": 12, "mcp": {"servers": {"b": {"url": "https://h/mcp"}}}}`), nil)
	if err != nil || cfg.Format != host.FormatVSCode || len(cfg.Servers) != 1 || cfg.Servers[0].Name != "b" {
		t.Errorf("settings.json: %+v, %v", cfg, err)
	}
}

// TestEnvValues: numbers and booleans are taken as written, null unsets.
func TestEnvValues(t *testing.T) {
	cfg, err := host.Parse("", []byte(`{"mcpServers": {"a": {"command": "x", "env": {"PORT": 8080, "DEBUG": true, "R": 1.5e3, "GONE": null, "S": "s"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"PORT": "8080", "DEBUG": "true", "R": "1.5e3", "S": "s"}
	if diff := cmp.Diff(want, cfg.Servers[0].Env); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}
}

// FuzzParse: no input makes Parse panic; every failure is a *ConfigError.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{"mcpServers": {"a": {"command": "x", "args": ["${A:-${B}}"]}}}`,
		`{"servers": {"a": {"url": "http://h/", "headers": {"k": "${input:x}"}}}, "inputs": [{"id": "x"}]} // c`,
		`{"mcpServers": {"a": {"command": "${", "env": {"K": 1}}}} /* open`,
		`{"mcp": {"servers": {"b": {"type": "sse", "url": "https://h/sse",}}}}`,
		`"\\"`, `{"mcpServers": {"a": {"url": "ws://[::1]:9/x"}}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		_, err := host.Parse("f.json", []byte(data), &host.LoadOptions{
			LookupEnv: func(string) (string, bool) { return "v", true },
			Input:     func(host.Input) (string, error) { return "i", nil },
		})
		if err != nil && !errors.As(err, new(*host.ConfigError)) {
			t.Errorf("Parse(%q) = %v, want a *ConfigError", data, err)
		}
	})
}

// TestLoadReportsEveryBadServer: a file with several bad servers is
// reported whole, in the file's order, on one line, each error still
// reachable with errors.Is and errors.As; a file with one bad server
// gives its *ConfigError alone.
func TestLoadReportsEveryBadServer(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mcp.json")
	data := `{"mcpServers": {
		"ok":    {"command": "x"},
		"grpc":  {"type": "grpc", "url": "http://h/"},
		"empty": {},
		"token": {"command": "x", "env": {"T": "${NO_SUCH_VAR_FOR_HOST_TEST}"}},
		"ok":    {"command": "y"}
	}}`
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := host.Load(p, &host.LoadOptions{LookupEnv: env(nil)})
	errs, ok := errors.AsType[host.ConfigErrors](err)
	if !ok {
		t.Fatalf("Load = %v, want ConfigErrors", err)
	}
	var got []string
	for _, ce := range errs {
		got = append(got, ce.Server+":"+ce.Field)
	}
	if want := []string{"grpc:type", "empty:", "token:env.T", "ok:"}; !slices.Equal(got, want) {
		t.Errorf("bad servers = %v, want %v", got, want)
	}
	if !errors.Is(err, host.ErrUnsetVariable) {
		t.Errorf("errors.Is(%v, ErrUnsetVariable) = false", err)
	}
	if ce, ok := errors.AsType[*host.ConfigError](err); !ok || ce.Server != "grpc" {
		t.Errorf("errors.As(*ConfigError) = %+v, want the first bad server", ce)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || strings.Count(msg, p) != 1 || !strings.HasPrefix(msg, "host: "+p+`: server "grpc": type: `) ||
		!strings.Contains(msg, `; server "empty": neither command nor url is set; server "token": env.T: `) {
		t.Errorf("Error() = %q, want one line naming the file once and every bad server", msg)
	}

	_, err = host.Parse("one.json", []byte(`{"mcpServers": {"a": {"command": "x"}, "b": {}}}`), nil)
	if ce, ok := err.(*host.ConfigError); !ok || ce.Server != "b" {
		t.Errorf("Parse with one bad server = %#v, want its *ConfigError alone", err)
	}

	_, err = host.Start(&host.Config{Servers: []host.ServerConfig{
		{Name: "a", Type: "stdio"}, {Name: "b", Command: "x"}, {Name: "c", Type: "http"},
	}}, nil)
	if errs, ok := errors.AsType[host.ConfigErrors](err); !ok || len(errs) != 2 || errs[0].Server != "a" || errs[1].Server != "c" {
		t.Errorf("Start with two bad servers = %v, want ConfigErrors for a and c", err)
	}
}

// TestNestedDefaultsBounded checks that a file nesting ${VAR:-…} defaults
// hundreds of thousands deep is refused in linear time instead of being
// expanded in time quadratic in its size.
func TestNestedDefaultsBounded(t *testing.T) {
	const depth = 200000
	v := strings.Repeat("${A:-", depth) + "x" + strings.Repeat("}", depth)
	data := []byte(`{"mcpServers":{"s":{"command":"` + v + `"}}}`)
	unset := func(string) (string, bool) { return "", false }
	done := make(chan error, 1)
	go func() {
		_, err := host.Parse("mcp.json", data, &host.LoadOptions{LookupEnv: unset})
		done <- err
	}()
	select {
	case err := <-done:
		var ce *host.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "nested") {
			t.Errorf("Parse: %v, want a *host.ConfigError about nesting", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Parse did not return within 10 s")
	}
	// Nesting as deep as configurations use (and deeper) still expands.
	v = strings.Repeat("${A:-", 16) + "x" + strings.Repeat("}", 16)
	cfg, err := host.Parse("mcp.json", []byte(`{"mcpServers":{"s":{"command":"`+v+`"}}}`), &host.LoadOptions{LookupEnv: unset})
	if err != nil || cfg.Servers[0].Command != "x" {
		t.Errorf("Parse of %d nested defaults: %v, %+v", 16, err, cfg)
	}
}

// TestManyServersParsed checks that a file of 100,000 servers is parsed
// in time linear in its size: each name was compared with every name
// before it to find duplicates (about a minute for these), and a
// duplicate among them is still reported.
func TestManyServersParsed(t *testing.T) {
	const n = 100000
	var b strings.Builder
	b.WriteString(`{"mcpServers":{`)
	for i := range n {
		fmt.Fprintf(&b, `"server-%08d":{"command":"x"},`, i)
	}
	b.WriteString(`"server-00000007":{"command":"y"}}}`)
	done := make(chan error, 1)
	go func() {
		_, err := host.Parse("mcp.json", []byte(b.String()), nil)
		done <- err
	}()
	select {
	case err := <-done:
		var ce *host.ConfigError
		if !errors.As(err, &ce) || ce.Server != "server-00000007" || !strings.Contains(err.Error(), "duplicate") {
			t.Errorf("Parse: %v, want a *host.ConfigError for the duplicate server-00000007", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Parse of 100,000 servers did not return within 10 s")
	}
}
