package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/host"
	"github.com/conduitmcp/conduit/protocol"
)

// configHelp is the help text of --config, shown with the targets.
const configHelp = `Config files (--config FILE):
  Claude Desktop's and Cursor's "mcpServers" JSON, Claude Code's .mcp.json (with
  ${VAR} and ${VAR:-default}) and VS Code's .vscode/mcp.json ("servers", with
  ${input:ID} values asked for on the terminal). tools, prompts, resources,
  templates, probe, call, prompt and read work on all servers at once (names are
  SERVER__NAME), and so does the tour; --server NAME makes one server the
  target of any command.
  Each server gets --timeout (default 30s) to connect, counted from its own
  start (stdio servers start a few at a time); one that fails is reported
  with its error and the others still answer (exit status 3). While they
  start, stderr shows them coming up (a live line on a terminal, else a line
  per server).
  With --json the lists give each entry with its "server" (tools and prompts
  also their "qualifiedName") and add "servers": [{"name", "type", "state",
  "error"}].
`

// configFlags registers --config and --server.
func (inv *invocation) configFlags(fs *flag.FlagSet) {
	fs.StringVar(&inv.configFile, "config", "", "run the servers of the MCP config `FILE` (mcpServers JSON, .mcp.json, .vscode/mcp.json) instead of a target")
	fs.StringVar(&inv.serverName, "server", "", "with --config, make the server `NAME` the target")
}

// checkConfig validates --config and --server against the other flags.
func (inv *invocation) checkConfig() error {
	switch {
	case inv.configFile == "" && inv.serverName != "":
		return usagef("--server needs --config FILE")
	case inv.configFile == "":
		return nil
	case inv.target.kind != targetEmbedded:
		return usagef("--config replaces the target: give no URL and no -- command")
	case inv.authMode != authNone || inv.tokenFile != "":
		return usagef("--auth and --token-file do not work with --config")
	}
	if inv.serverName != "" {
		inv.target = serverTarget(inv.configFile, inv.serverName)
	}
	return nil
}

// runCommand runs the command: on every server of the config file when
// --config is given without --server, else the command itself (whose
// dial then connects the --server server).
func (inv *invocation) runCommand(ctx context.Context) error {
	if inv.configFile == "" || inv.serverName != "" || inv.cmd == helpCommand {
		return inv.cmd.run(ctx, inv)
	}
	switch inv.cmd.name {
	case "tools", "prompts", "resources", "templates":
		return runConfigList(ctx, inv, inv.cmd.name)
	case "probe":
		return runConfigProbe(ctx, inv)
	case "tour":
		return runConfigTour(ctx, inv)
	case "call":
		return runConfigCall(ctx, inv)
	case "prompt":
		return runConfigPrompt(ctx, inv)
	case "read":
		return runConfigRead(ctx, inv)
	}
	return usagef("%s works on one server: add --server NAME", inv.cmd.name)
}

// loadConfig reads --config; ${input:ID} values are asked for on the
// terminal.
func (inv *invocation) loadConfig() (*host.Config, error) {
	cfg, err := host.Load(inv.configFile, &host.LoadOptions{Input: inv.askInput})
	if err != nil {
		return nil, err
	}
	if inv.serverName == "" {
		return cfg, nil
	}
	sc, ok := cfg.Server(inv.serverName)
	if !ok {
		var names []string
		for _, s := range cfg.Servers {
			names = append(names, s.Name)
		}
		return nil, usagef("--server %q: %s has no such server (it has: %s)", inv.serverName, inv.configFile, strings.Join(names, ", "))
	}
	sc.Disabled = false
	return &host.Config{Path: cfg.Path, Format: cfg.Format, Servers: []host.ServerConfig{sc}}, nil
}

// askInput asks for a VS Code input on stderr and reads the answer from
// stdin, which must be a terminal.
func (inv *invocation) askInput(in host.Input) (string, error) {
	if !inv.std.inTTY {
		return "", errors.New("stdin is not a terminal to ask for it")
	}
	desc := in.Description
	if desc == "" {
		desc = in.ID
	}
	if in.Default != "" {
		desc += " [" + in.Default + "]"
	}
	fmt.Fprintf(inv.std.err, "%s: ", desc)
	line, err := readLine(inv.std.in)
	if err != nil {
		return "", err
	}
	if line == "" {
		line = in.Default
	}
	return line, nil
}

// readLine reads one line a byte at a time, so that nothing after it is
// consumed from r.
func readLine(r io.Reader) (string, error) {
	var b []byte
	var one [1]byte
	for len(b) < 64<<10 {
		n, err := r.Read(one[:])
		if n == 1 {
			if one[0] == '\n' {
				return strings.TrimSuffix(string(b), "\r"), nil
			}
			b = append(b, one[0])
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(b) > 0 {
				return string(b), nil
			}
			return "", err
		}
	}
	return "", errors.New("line too long")
}

// hostOptions are the host options of the global flags; h serves every
// server's requests (nil for none).
func (inv *invocation) hostOptions(h any) *host.Options {
	var hdr http.Header
	for _, kv := range inv.headers {
		k, v, _ := strings.Cut(kv, ":")
		if hdr == nil {
			hdr = http.Header{}
		}
		hdr.Add(k, v)
	}
	l := inv.logger()
	return &host.Options{
		Reconnect: host.Reconnect{Disabled: true},
		Logger:    l,
		Server: func(sc host.ServerConfig) host.ServerOptions {
			o := host.ServerOptions{
				Protocol:       inv.protocolOption(),
				Handler:        h,
				Header:         hdr,
				ConnectTimeout: inv.timeout,
				ClientOptions: []client.Option{
					client.WithOlderVersions(true), // the CLI reaches any server
					client.WithClientInfo(protocol.Implementation{Name: "conduit-cli", Title: "Conduit CLI", Version: version}),
				},
			}
			if l != nil {
				o.Stderr = inv.std.err
				o.HTTPClient = &http.Client{Transport: &httpLogger{base: http.DefaultTransport, log: l}}
				o.ClientOptions = append(o.ClientOptions, client.WithWireLog(l, slog.LevelDebug))
			}
			return o
		},
	}
}

// startHost loads the config and connects its servers (the --server one
// only, with it), waiting for every first attempt.
func (inv *invocation) startHost(ctx context.Context, h any) (*host.Host, error) {
	cfg, err := inv.loadConfig()
	if err != nil {
		return nil, err
	}
	hs, err := host.Start(cfg, inv.hostOptions(h))
	if err != nil {
		return nil, err
	}
	wait := hs.Wait
	if inv.serverName == "" {
		// Every server: show them coming up (startup.go).
		wait = func(ctx context.Context) error {
			return watchStart(ctx, hs, inv.std.err, inv.std.errTTY, inv.std.errCols)
		}
	}
	if err := wait(ctx); err != nil {
		hs.Close()
		if errors.Is(err, context.DeadlineExceeded) && inv.serverName != "" {
			// The command's --timeout (also the server's connect timeout,
			// but started first) ended the wait: the server did not answer.
			err = &connectError{target: inv.target, err: fmt.Errorf("no answer within %v: %w", inv.timeout, err)}
		}
		return nil, err
	}
	return hs, nil
}

// dialConfig is dial for --config --server: the server is connected
// through a host, and the conn closes the host.
func (inv *invocation) dialConfig(ctx context.Context, h any) (*conn, error) {
	c := &conn{}
	hs, err := inv.startHost(ctx, h)
	if err != nil {
		return c, err
	}
	c.release = func() { hs.Close() }
	st, _ := hs.Server(inv.serverName)
	cl, err := hs.Client(inv.serverName)
	if err != nil {
		if st.Err != nil {
			err = st.Err
		}
		if ce, ok := errors.AsType[*client.Error](err); ok && ce.Kind == client.KindInvalid && errors.Is(err, client.ErrNoCommonVersion) {
			return c, usagef("--protocol %s: not a version conduit speaks", inv.protocol)
		}
		return c, &connectError{target: serverTarget(inv.configFile, inv.serverName), err: err}
	}
	c.Client = cl
	return c, nil
}

// serverTarget names a config file's server in messages.
func serverTarget(file, name string) target {
	return target{kind: targetURL, url: fmt.Sprintf("server %q of %s", name, file)}
}

// failedServers reports the servers that are not ready on stderr and
// returns a connectError for the first, or nil.
func (inv *invocation) failedServers(hs *host.Host) error {
	var first error
	for _, st := range hs.Servers() {
		if st.State == host.StateReady || st.State == host.StateDisabled {
			continue
		}
		err := st.Err
		if err == nil {
			err = fmt.Errorf("%s", st.State)
		}
		ce := &connectError{target: serverTarget(inv.configFile, st.Name), err: err}
		if first == nil {
			first = ce
		} else {
			fmt.Fprintln(inv.std.err, "conduit: "+oneLine(describeError(ce)))
		}
	}
	return first
}

// serverJSON is one server in --json output.
type serverJSON struct {
	Name  string         `json:"name"`
	Type  string         `json:"type"`
	State string         `json:"state"`
	Error map[string]any `json:"error,omitempty"`
}

func serversJSON(ctx context.Context, hs *host.Host) []serverJSON {
	var out []serverJSON
	for _, st := range hs.Servers() {
		s := serverJSON{Name: st.Name, Type: st.Type, State: st.State.String()}
		if st.Err != nil {
			s.Error = errorJSON(ctx, st.Err)
		}
		out = append(out, s)
	}
	return out
}

// withServer adds "server" and "qualifiedName" to the JSON object of v.
func withServer(v any, server, qualified string) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	raw, _ := json.Marshal(v)
	_ = json.Unmarshal(raw, &m)
	m["server"], _ = json.Marshal(server)
	if qualified != "" {
		m["qualifiedName"], _ = json.Marshal(qualified)
	}
	return m
}
