package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/protocol"
)

// runTimeout bounds one scenario run; the suite has its own (longer) one.
const runTimeout = 60 * time.Second

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance-client:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return errors.New("usage: MCP_CONFORMANCE_SCENARIO=<scenario> conformance-client <server-url>")
	}
	env := scenarioEnv{
		URL:      os.Args[1],
		Scenario: os.Getenv("MCP_CONFORMANCE_SCENARIO"),
		Version:  os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"),
	}
	if env.Scenario == "" {
		return errors.New("MCP_CONFORMANCE_SCENARIO is not set")
	}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &env.Context); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	return flowFor(env.Scenario)(ctx, env)
}

// scenarioEnv is what the suite hands the client.
type scenarioEnv struct {
	URL      string
	Scenario string
	Version  string
	Context  map[string]json.RawMessage
}

// dial connects to the scenario's server with the protocol the suite asked
// for and a handler that answers elicitation and sampling.
func (e scenarioEnv) dial(ctx context.Context, extra ...client.Option) (*client.Client, error) {
	p := client.Auto
	if e.Version != "" {
		p = client.Pin(e.Version)
	}
	opts := []client.Option{
		client.WithProtocol(p),
		client.WithHandler(conformanceHandler{}),
		// The conformance client exists to reach any server: the suites'
		// mocks may speak 2025-03-26 (0.1.16's sse-retry does).
		client.WithOlderVersions(true),
		client.WithClientInfo(protocol.Implementation{Name: "conduit-conformance-client", Version: "1.0.0"}),
		client.WithCallDefaults(client.WithIdleTimeout(30 * time.Second)),
	}
	if os.Getenv("CONFORMANCE_CLIENT_DEBUG") != "" {
		opts = append(opts, client.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	authOpts, err := e.authOptions()
	if err != nil {
		return nil, err
	}
	opts = append(opts, authOpts...)
	c, err := client.Dial(ctx, e.URL, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", e.URL, err)
	}
	fmt.Fprintf(os.Stderr, "connected: era=%v version=%s\n", c.Negotiated().Era, c.Negotiated().Version)
	return c, nil
}

// conformanceHandler answers the server-initiated requests the scenarios
// send: form elicitation is accepted with the content the scenario asks
// for (the client fills in schema defaults), sampling returns a fixed text.
type conformanceHandler struct{}

// Elicit accepts every form elicitation. Fields it knows from the
// scenarios get values; the rest are left for the client's defaults.
func (conformanceHandler) Elicit(_ context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	content := map[string]any{}
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(p.RequestedSchema, &schema)
	if prop, ok := schema.Properties["confirmed"]; ok && prop.Type == "boolean" {
		content["confirmed"] = true
	}
	if prop, ok := schema.Properties["name"]; ok && prop.Type == "string" && !hasDefault(p.RequestedSchema, "name") {
		content["name"] = "Conduit"
	}
	return &protocol.ElicitResult{Action: "accept", Content: content}, nil
}

// CreateMessage answers every sampling request with a fixed text.
func (conformanceHandler) CreateMessage(_ context.Context, _ *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	return &protocol.CreateMessageResult{
		Role:       "assistant",
		Content:    json.RawMessage(`{"type":"text","text":"Paris"}`),
		Model:      "conduit-conformance",
		StopReason: "endTurn",
	}, nil
}

// ListRoots exposes one root.
func (conformanceHandler) ListRoots(context.Context) ([]protocol.Root, error) {
	return []protocol.Root{{URI: "file:///tmp/conduit-conformance", Name: "conformance"}}, nil
}

func hasDefault(schema json.RawMessage, prop string) bool {
	var s struct {
		Properties map[string]map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return false
	}
	_, ok := s.Properties[prop]["default"]
	return ok
}
