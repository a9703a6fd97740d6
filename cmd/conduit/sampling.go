package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

// maxSamplingOutput bounds what a sampling command may print.
const maxSamplingOutput = 16 << 20

// samplingWaitDelay bounds the wait for a sampling command's output once
// it was killed (its request cancelled) or exited: the processes of a
// pipeline outlive the shell and may hold its stdout and stderr open.
const samplingWaitDelay = time.Second

// samplingCommand answers sampling/createMessage by running a program:
// the request's CreateMessageParams JSON goes to its stdin, and it prints
// a CreateMessageResult JSON on stdout. It implements [handler.Sampler].
// The command line is run by the shell (sh -c; cmd /C on Windows), so it
// may carry arguments and pipes.
type samplingCommand struct {
	cmd    string
	stderr io.Writer // the program's stderr goes here
	notify io.Writer // one line per request, for the user
}

var _ handler.Sampler = (*samplingCommand)(nil)

// CreateMessage runs the command once per request; ctx cancellation kills
// it (the shell; what it started is left, its output cut off after
// samplingWaitDelay).
func (s *samplingCommand) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	in, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding the sampling request: %w", err)
	}
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		cmd = exec.CommandContext(ctx, "cmd", "/C", s.cmd)
	} else {
		cmd = exec.CommandContext(ctx, "sh", "-c", s.cmd)
	}
	cmd.Stdin = bytes.NewReader(in)
	out := &limitedBuffer{max: maxSamplingOutput}
	cmd.Stdout = out
	cmd.Stderr = s.stderr
	cmd.WaitDelay = samplingWaitDelay
	fmt.Fprintf(s.notify, "sampling: the server asked for a completion; running %s\n", s.cmd)
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("sampling command %q: %w", s.cmd, err)
	}
	if out.overflow {
		return nil, fmt.Errorf("sampling command %q printed more than %s", s.cmd, humanSize(maxSamplingOutput))
	}
	return parseSamplingResult(out.Bytes())
}

// parseSamplingResult decodes and checks a CreateMessageResult.
func parseSamplingResult(b []byte) (*protocol.CreateMessageResult, error) {
	var res protocol.CreateMessageResult
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("sampling command output is not a CreateMessageResult JSON: %w", err)
	}
	var problems []string
	if res.Role != protocol.RoleAssistant && res.Role != protocol.RoleUser {
		problems = append(problems, `role must be "assistant" or "user"`)
	}
	if strings.TrimSpace(res.Model) == "" {
		problems = append(problems, "model is missing")
	}
	if _, err := res.Blocks(); err != nil || len(res.Content) == 0 {
		problems = append(problems, "content must be a content block or an array of them")
	}
	if len(problems) > 0 {
		return nil, errors.New("sampling command output: " + strings.Join(problems, "; "))
	}
	return &res, nil
}

// limitedBuffer keeps at most max bytes and notes an overflow.
type limitedBuffer struct {
	bytes.Buffer
	max      int
	overflow bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.Len(); len(p) > room {
		l.overflow = true
		l.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return l.Buffer.Write(p)
}
