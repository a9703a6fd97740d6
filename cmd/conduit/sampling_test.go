package main

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/protocol"
)

// TestSamplingCommandCancel: a sampling request whose context ends (the
// server cancelled it, or the call's --timeout elapsed) ends at once,
// though the command left a process holding its stdout: the shell is
// killed, but the processes of its pipeline live on.
func TestSamplingCommandCancel(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the command line is a sh pipeline")
	}
	s := &samplingCommand{cmd: "sleep 20 | cat", stderr: io.Discard, notify: io.Discard}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := s.CreateMessage(ctx, &protocol.CreateMessageParams{})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("CreateMessage = %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("CreateMessage did not end within 10s of the end of its context")
	}
}
