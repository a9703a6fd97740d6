package testserver

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// The tasks-extension fixtures of the conformance suite (SEP-2663): they
// finish by the clock, like real long-running tools.

func init() {
	fixtureTools = append(fixtureTools,
		&toolDef{name: "greet", description: "Sync-only: Hello, {name}!", input: `{"type":"object","properties":{"name":{"type":"string"}}}`,
			run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
				return textResult(fmt.Sprintf("Hello, %s!", argString(args, "name", "world"))), nil
			}},
		&toolDef{name: "slow_compute", description: "Task-supporting: sleeps seconds, then answers.", input: `{"type":"object","properties":{"seconds":{"type":"number"}}}`, taskSupport: "optional",
			run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
				secs, _ := args["seconds"].(float64)
				d := time.Duration(min(max(secs, 0), 60) * float64(time.Second))
				final := func(map[string]json.RawMessage) (map[string]any, *jsonrpc.Error) {
					return textResult(fmt.Sprintf("computed after %g seconds", secs)), nil
				}
				if c.hasTasksExtension() {
					return s.startTimedTask(c, d, nil, final), nil
				}
				if !sleepCtx(c, d) {
					return nil, jsonrpc.ErrRequestCancelled
				}
				return final(nil)
			}},
		&toolDef{name: "failing_job", description: "Task required: a tool error after about a second.", input: noArgs, taskSupport: "required",
			run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
				return s.startTimedTask(c, time.Second, nil, func(map[string]json.RawMessage) (map[string]any, *jsonrpc.Error) {
					res := textResult("the job failed")
					res["isError"] = true
					return res, nil
				}), nil
			}},
		&toolDef{name: "protocol_error_job", description: "Task-supporting: fails with a protocol error.", input: noArgs, taskSupport: "optional",
			run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
				fail := func(map[string]json.RawMessage) (map[string]any, *jsonrpc.Error) {
					return nil, jsonrpc.ErrInternal.WithMessage("internal failure (protocol_error_job)")
				}
				if c.hasTasksExtension() {
					return s.startTimedTask(c, 100*time.Millisecond, nil, fail), nil
				}
				return fail(nil)
			}},
		&toolDef{name: "confirm_delete", description: "Task-supporting: asks for confirmation, then deletes.", input: `{"type":"object","properties":{"filename":{"type":"string"}}}`, taskSupport: "optional",
			run: fixtureInputTask("confirm_delete", []string{"confirm"})},
		&toolDef{name: "multi_input", description: "Task-supporting: two elicitations at once.", input: noArgs, taskSupport: "optional",
			run: fixtureInputTask("multi_input", []string{"first", "second"})},
		&toolDef{name: "test_tool_with_task", description: "Task required: MRTR for user_name, then a task.", input: noArgs, taskSupport: "required",
			run: func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
				got, early, err := s.gather(c, "test_tool_with_task", map[string]inputRequest{"user_name": elicitReq("What is your name?", "name", "string")})
				if err != nil || early != nil {
					return early, err
				}
				var er protocol.ElicitResult
				_ = json.Unmarshal(got["user_name"], &er)
				return s.startTimedTask(c, 0, nil, func(map[string]json.RawMessage) (map[string]any, *jsonrpc.Error) {
					return textResult(fmt.Sprintf("Hello, %v! (from a task)", er.Content["name"])), nil
				}), nil
			}},
	)
}

// fixtureInputTask is a task that parks on elicitations keyed keys.
func fixtureInputTask(name string, keys []string) toolFunc {
	return func(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
		reqs := map[string]inputRequest{}
		for _, k := range keys {
			reqs[k] = elicitReq(name+": "+k+"?", "ok", "boolean")
		}
		final := func(answers map[string]json.RawMessage) (map[string]any, *jsonrpc.Error) {
			return textResult(fmt.Sprintf("%s done with %d answers", name, len(answers))), nil
		}
		if c.hasTasksExtension() {
			return s.startTimedTask(c, 0, reqs, final), nil
		}
		got, early, err := s.gather(c, name, reqs)
		if err != nil || early != nil {
			return early, err
		}
		return final(got)
	}
}
