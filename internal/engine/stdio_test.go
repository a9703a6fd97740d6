package engine

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

const (
	stdioServerEnv = "SESSION_TEST_STDIO_SERVER"
	stdioStateEnv  = "SESSION_TEST_STDIO_STATE"
)

// runStdioServer is a legacy stdio MCP server that behaves like the rmcp
// servers of go-sdk #1177: it exits when the first message is not
// initialize. The tool "crash" makes it exit once (a state file remembers
// it crashed), as a server process dying mid-call.
func runStdioServer(mode string) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	send := func(m jsonrpc.Message) {
		b, _ := jsonrpc.EncodeMessage(m)
		out.Write(append(b, '\n'))
		out.Flush()
	}
	initialized := false
	for in.Scan() {
		m, err := jsonrpc.DecodeMessage(in.Bytes())
		if err != nil {
			continue
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.IsNotification() {
			continue
		}
		switch req.Method {
		case protocol.MethodInitialize:
			initialized = true
			var ip protocol.InitializeParams
			json.Unmarshal(req.Params, &ip)
			resp, _ := jsonrpc.NewResponse(req.ID, initResult(ip.ProtocolVersion))
			send(resp)
		case protocol.MethodToolsCall:
			state := os.Getenv(stdioStateEnv)
			if _, err := os.Stat(state); err != nil {
				os.WriteFile(state, []byte("crashed"), 0o600)
				return 3
			}
			resp, _ := jsonrpc.NewResponse(req.ID, echoResult(req.Params, false))
			send(resp)
		default:
			if !initialized {
				os.Stderr.WriteString("ExpectedInitializeRequest\n")
				return 1
			}
			resp, _ := jsonrpc.NewResponse(req.ID, echoResult(req.Params, false))
			send(resp)
		}
	}
	return 0
}

func stdioServer(t *testing.T) *transport.Stdio {
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no test executable:", err)
	}
	return &transport.Stdio{
		Path:           exe,
		Env:            []string{stdioServerEnv + "=legacy", stdioStateEnv + "=" + filepath.Join(t.TempDir(), "state")},
		TerminateDelay: 100 * time.Millisecond,
		KillDelay:      100 * time.Millisecond,
	}
}

// TestStdioServerExitsOnProbe: a real legacy server process that exits on
// server/discover is respawned and initialized (go-sdk #1177).
func TestStdioServerExitsOnProbe(t *testing.T) {
	s, err := Connect(t.Context(), stdioServer(t), Config{})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer s.Close()
	if s.Era() != negotiation.EraLegacy || s.TransportKind() != transport.KindStdio {
		t.Errorf("era, kind = %v, %q", s.Era(), s.TransportKind())
	}
	var steps []string
	for _, st := range s.Trace() {
		steps = append(steps, st.Step+":"+st.Verdict)
	}
	want := []string{"probe:reconnect (process-exited)", "reconnect:", "initialize:legacy"}
	if len(steps) != len(want) || steps[0] != want[0] || steps[2] != want[2] {
		t.Errorf("trace = %v, want %v", steps, want)
	}
	if _, err := s.Call(t.Context(), "tools/list", nil, nil); err != nil {
		t.Errorf("Call: %v", err)
	}
}

// TestStdioProcessCrashReplays: the server process dies during a call; the
// session respawns it, initializes again and replays the call.
func TestStdioProcessCrashReplays(t *testing.T) {
	s, err := Connect(t.Context(), stdioServer(t), Config{Mode: ModeLegacy, Replay: ReplayAll})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer s.Close()
	res, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]string{"name": "crash"}, nil)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if string(res) != `{"echo":{"name":"crash"}}` {
		t.Errorf("result = %s", res)
	}
	if s.State() != StateLegacy {
		t.Errorf("state = %v", s.State())
	}
	// A crash with ReplayNone fails the call with the process's exit.
	s2 := connected(t, stdioServer(t), Config{Mode: ModeLegacy})
	_, err = s2.Call(t.Context(), protocol.MethodToolsCall, map[string]string{"name": "crash"}, &CallOptions{Replay: ReplayNone})
	var exit *transport.ExitError
	if !errors.Is(err, ErrConnectionLost) || !errors.As(err, &exit) || exit.Code != 3 {
		t.Errorf("ReplayNone Call error = %v, want the process exit (code 3)", err)
	}
}
