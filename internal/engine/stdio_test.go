package engine

import (
	"errors"
	"testing"

	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// TestStdioServerExitsOnProbe: a real legacy server process that exits on
// server/discover is respawned and initialized (go-sdk #1177).
func TestStdioServerExitsOnProbe(t *testing.T) {
	s := connected(t, stdioServer(t), Config{})
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
	s := connected(t, stdioServer(t), Config{Mode: ModeLegacy, Replay: ReplayAll})
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
