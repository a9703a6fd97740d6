package testserver

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// Task statuses.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

const (
	taskTTLMs  = 60_000
	taskPollMs = 10
)

// task is a tool call running as a task. It advances one step per poll
// (tasks/get), so tests need no clocks.
type task struct {
	id        string
	modern    bool
	sess      *session // legacy owner; nil in the modern era
	status    string
	created   time.Time
	updated   time.Time
	steps     int  // polls left before the task finishes
	needInput bool // ask for confirmation before finishing (modern)
	inputDone bool
	// rounds is how many times the task asks (the argument inputRounds,
	// not in the tool's schema; at least one with input); round counts
	// the answers so far. Round 0's key is
	// "confirm", round n's "confirm<n+1>".
	rounds, round int
	fail          bool
	result        map[string]any
	err           *jsonrpc.Error

	// Timed tasks (the conformance fixtures) finish by the clock rather
	// than by polls: once no input is pending and deadline has passed,
	// final computes the outcome from the collected answers.
	final    func(answers map[string]json.RawMessage) (map[string]any, *jsonrpc.Error)
	deadline time.Time
	pending  map[string]inputRequest // input requests not answered yet
	answers  map[string]json.RawMessage
}

// inputKey is the key of the input the task asks for in its current round.
func (t *task) inputKey() string {
	if t.round == 0 {
		return "confirm"
	}
	return "confirm" + strconv.Itoa(t.round+1)
}

func (t *task) terminal() bool {
	return t.status == taskCompleted || t.status == taskFailed || t.status == taskCancelled
}

func (s *Server) newTask(c *call, args map[string]any) *task {
	now := time.Now().UTC()
	t := &task{
		id:        s.newID("task-"),
		modern:    c.modern,
		status:    taskWorking,
		created:   now,
		updated:   now,
		steps:     min(max(argInt(args, "steps", 2), 0), 1000),
		needInput: args["input"] == true || argInt(args, "inputRounds", 0) > 0,
		rounds:    min(max(argInt(args, "inputRounds", 1), 1), 1000),
		fail:      args["fail"] == true,
	}
	if !c.modern {
		t.sess = c.sess
	}
	s.mu.Lock()
	s.tasks[t.id] = t
	s.mu.Unlock()
	return t
}

// advanceLocked moves t one poll forward. s.mu must be held.
func (t *task) advanceLocked(force bool) {
	if t.terminal() || t.status == taskInputRequired {
		return
	}
	if t.final != nil {
		if len(t.pending) > 0 {
			t.status = taskInputRequired
			return
		}
		if force || !time.Now().Before(t.deadline) {
			t.updated = time.Now().UTC()
			res, err := t.final(t.answers)
			if err != nil {
				t.status, t.err = taskFailed, err
			} else {
				t.status, t.result = taskCompleted, res
			}
		}
		return
	}
	if t.steps > 0 && !force {
		t.steps--
		if t.steps > 0 {
			return
		}
	}
	t.updated = time.Now().UTC()
	if t.needInput && !t.inputDone && t.modern {
		t.status = taskInputRequired
		return
	}
	t.finishLocked()
}

func (t *task) finishLocked() {
	t.updated = time.Now().UTC()
	switch {
	case t.fail && t.modern:
		t.status = taskFailed
		t.err = jsonrpc.ErrInternal.WithMessage("the task failed")
	case t.fail:
		// 2025-11-25: a tool result with isError makes the task failed.
		t.status = taskFailed
		t.result = textResult("the task failed")
		t.result["isError"] = true
	default:
		t.status = taskCompleted
		t.result = textResult("task " + t.id + " finished")
	}
}

// fieldsLocked returns the Task fields of the 2026 extension (modern) or of
// 2025-11-25 (legacy).
func (t *task) fieldsLocked() map[string]any {
	m := map[string]any{
		"taskId":        t.id,
		"status":        t.status,
		"createdAt":     t.created.Format(time.RFC3339Nano),
		"lastUpdatedAt": t.updated.Format(time.RFC3339Nano),
	}
	if t.modern {
		m["ttlMs"] = taskTTLMs
		m["pollIntervalMs"] = taskPollMs
	} else {
		m["ttl"] = taskTTLMs
		m["pollInterval"] = taskPollMs
	}
	return m
}

// detailLocked is the modern DetailedTask: fields plus inputRequests,
// result or error.
func (t *task) detailLocked() map[string]any {
	m := t.fieldsLocked()
	switch t.status {
	case taskInputRequired:
		if t.final != nil {
			m["inputRequests"] = t.pending
			break
		}
		m["inputRequests"] = map[string]inputRequest{t.inputKey(): {Method: protocol.MethodElicitationCreate, Params: map[string]any{
			"message":         "Continue the task?",
			"requestedSchema": json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`),
		}}}
	case taskCompleted:
		r := map[string]any{"resultType": protocol.ResultTypeComplete}
		for k, v := range t.result {
			r[k] = v
		}
		m["result"] = r
	case taskFailed:
		m["error"] = t.err
	}
	return m
}

func (s *Server) startModernTask(c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	t := s.newTask(c, args)
	s.mu.Lock()
	res := t.fieldsLocked()
	s.mu.Unlock()
	res["resultType"] = protocol.ResultTypeTask
	return res, nil
}

func (s *Server) startLegacyTask(c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	if c.version != protocol.Version20251125 {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("task augmentation needs 2025-11-25")
	}
	t := s.newTask(c, args)
	s.mu.Lock()
	res := map[string]any{"task": t.fieldsLocked()}
	s.mu.Unlock()
	return res, nil
}

// startTimedTask creates a modern task that finishes after d (and after
// every pending input request is answered) with the outcome of final, and
// returns its CreateTaskResult.
func (s *Server) startTimedTask(c *call, d time.Duration, pending map[string]inputRequest,
	final func(answers map[string]json.RawMessage) (map[string]any, *jsonrpc.Error)) map[string]any {
	t := s.newTask(c, nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	t.final, t.deadline, t.answers = final, time.Now().Add(d), map[string]json.RawMessage{}
	t.pending = map[string]inputRequest{}
	for k, v := range pending {
		t.pending[k] = v
	}
	if len(t.pending) > 0 {
		t.status = taskInputRequired
	}
	res := t.fieldsLocked()
	res["resultType"] = protocol.ResultTypeTask
	return res
}

// toolTaskSync runs the task tool without a task: at once.
func toolTaskSync(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	if args["required"] == true && c.modern {
		return nil, missingTasksExtension()
	}
	if args["fail"] == true {
		res := textResult("the task failed")
		res["isError"] = true
		return res, nil
	}
	return textResult("task finished synchronously"), nil
}

func (s *Server) lookupTask(c *call) (*task, *jsonrpc.Error) {
	var id string
	if !c.param("taskId", &id) {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("missing taskId")
	}
	s.mu.Lock()
	t := s.tasks[id]
	s.mu.Unlock()
	if t == nil || t.modern != c.modern || !t.modern && t.sess != c.sess {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("unknown task " + fmt.Sprintf("%q", id))
	}
	return t, nil
}

// modernTaskMethod serves tasks/get, tasks/update and tasks/cancel of the
// tasks extension.
func (s *Server) modernTaskMethod(c *call) (map[string]any, *jsonrpc.Error) {
	t, err := s.lookupTask(c)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	before := t.status
	var res map[string]any
	switch c.req.Method {
	case protocol.MethodTasksGet:
		t.advanceLocked(false)
		res = t.detailLocked()
	case protocol.MethodTasksUpdate:
		var responses map[string]json.RawMessage
		c.param("inputResponses", &responses)
		if t.final != nil {
			for k, v := range responses {
				if _, ok := t.pending[k]; ok {
					delete(t.pending, k)
					t.answers[k] = v
				}
			}
			if len(t.pending) == 0 && t.status == taskInputRequired {
				t.status = taskWorking
				t.updated = time.Now().UTC()
			}
		} else if _, ok := responses[t.inputKey()]; ok && t.status == taskInputRequired {
			t.updated = time.Now().UTC()
			if t.round++; t.round >= t.rounds { // else the next round's input is required
				t.inputDone = true
				t.status = taskWorking
				t.steps = 0
			}
		}
		res = map[string]any{}
	case protocol.MethodTasksCancel:
		if !t.terminal() {
			t.status = taskCancelled
			t.updated = time.Now().UTC()
		}
		res = map[string]any{}
	}
	changed := t.status != before
	var detail map[string]any
	if changed {
		detail = t.detailLocked()
	}
	s.mu.Unlock()
	if changed {
		s.notifyTask(t.id, detail)
	}
	return res, nil
}

// legacyTaskMethod serves the 2025-11-25 core tasks methods.
func (s *Server) legacyTaskMethod(c *call) reply {
	if c.req.Method == protocol.MethodTasksList {
		s.mu.Lock()
		var list []map[string]any
		for _, t := range s.tasks {
			if !t.modern && t.sess == c.sess {
				list = append(list, t.fieldsLocked())
			}
		}
		s.mu.Unlock()
		sort.Slice(list, func(i, j int) bool { return list[i]["createdAt"].(string) < list[j]["createdAt"].(string) })
		items := make([]any, len(list))
		for i, v := range list {
			items[i] = v
		}
		res, err := s.page(c, "tasks", items)
		if err != nil {
			return errReply(err)
		}
		return okReply(res)
	}
	t, err := s.lookupTask(c)
	if err != nil {
		return errReply(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch c.req.Method {
	case protocol.MethodTasksGet:
		before := t.status
		t.advanceLocked(false)
		if t.status != before {
			s.tellStatusLocked(t)
		}
		return okReply(t.fieldsLocked())
	case protocol.MethodTasksCancel:
		if t.terminal() {
			return errReply(jsonrpc.ErrInvalidParams.WithMessage("task is already " + t.status))
		}
		t.status = taskCancelled
		t.updated = time.Now().UTC()
		return okReply(t.fieldsLocked())
	}
	// tasks/result: finish the task now and return its underlying result.
	if !t.terminal() {
		t.finishLocked()
	}
	if t.status == taskCancelled {
		return errReply(jsonrpc.ErrInvalidParams.WithMessage("task was cancelled"))
	}
	res := map[string]any{}
	for k, v := range t.result {
		res[k] = v
	}
	res["_meta"] = map[string]any{protocol.MetaRelatedTask: map[string]any{"taskId": t.id}}
	return okReply(res)
}
