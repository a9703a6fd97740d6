package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// Task is a server-side task running a tool call: a task of the modern
// tasks extension (io.modelcontextprotocol/tasks, see [CapabilityOptions.TasksExtension]) or a
// 2025-11-25 core task. Await its result with [Client.AwaitTask].
type Task struct {
	// ID is the server's task id.
	ID string
	// Status is the last status seen.
	Status protocol.TaskStatus
	// StatusMessage is the server's description of the status, if any.
	StatusMessage string
	// CreatedAt and LastUpdatedAt are the server's ISO 8601 timestamps.
	CreatedAt, LastUpdatedAt string
	// TTL is how long the server keeps the task after creation; 0 means
	// unlimited or unknown.
	TTL time.Duration
	// PollInterval is the server's suggested polling interval; 0 means
	// none was suggested.
	PollInterval time.Duration
	// Extension reports a task of the modern tasks extension; false is a
	// 2025-11-25 core task.
	Extension bool
}

// Polling bounds of AwaitTask: the interval used when the server
// suggests none, and the clamp of the server's suggestion.
const (
	defaultPollInterval = 500 * time.Millisecond
	minPollInterval     = 10 * time.Millisecond
	maxPollInterval     = 30 * time.Second
)

// expiry returns when t's ttl runs out, or false when it has no ttl or
// no parseable createdAt.
func (t *Task) expiry() (time.Time, bool) {
	if t.TTL <= 0 || t.CreatedAt == "" {
		return time.Time{}, false
	}
	created, err := time.Parse(time.RFC3339Nano, t.CreatedAt)
	if err != nil {
		return time.Time{}, false
	}
	return created.Add(t.TTL), true
}

// untilExpiry shortens a poll interval so that the poll after t's ttl
// runs out is not delayed by more than minPollInterval.
func (c *Client) untilExpiry(t *Task, poll time.Duration) time.Duration {
	if poll <= 0 {
		poll = defaultPollInterval
	}
	if end, ok := t.expiry(); ok {
		if rem := end.Sub(c.cfg.now()); rem < poll {
			return max(rem, minPollInterval)
		}
	}
	return poll
}

// expired returns an *Error of kind KindTimeout when t's ttl has run
// out, else nil. pollErr is the last poll's error (nil after a successful
// poll); it stays in the chain unless it is a deadline of its own, which
// would make the task's expiry match context.DeadlineExceeded.
func (c *Client) expired(t *Task, pollErr error) error {
	end, ok := t.expiry()
	if !ok || c.cfg.now().Before(end) {
		return nil
	}
	err := fmt.Errorf("task %q expired: its ttl ran out at %s (status %s)", t.ID, end.Format(time.RFC3339), t.Status)
	switch {
	case pollErr == nil:
	case errors.Is(pollErr, context.DeadlineExceeded):
		err = fmt.Errorf("%w: %v", err, pollErr)
	default:
		err = fmt.Errorf("%w: %w", err, pollErr)
	}
	return &Error{Op: protocol.MethodToolsCall, Kind: KindTimeout, Err: err}
}

// taskError reports a task that failed; why is the server's
// *jsonrpc.Error.
func taskError(t *Task, status protocol.TaskStatus, why error) *Error {
	return &Error{Op: protocol.MethodToolsCall, Kind: KindServer, Err: fmt.Errorf("task %q %s: %w", t.ID, status, why)}
}

// taskCancelled reports a task that ended cancelled: kind KindCanceled,
// though no context of the caller's was cancelled.
func taskCancelled(t *Task) *Error {
	return newError(protocol.MethodToolsCall, KindCanceled, "task %q was cancelled", t.ID)
}

func msDuration(ms *int64) time.Duration {
	if ms == nil {
		return 0
	}
	return msTTL(*ms)
}

func extTask(t *protocol.ExtTask) *Task {
	return &Task{ID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage, CreatedAt: t.CreatedAt,
		LastUpdatedAt: t.LastUpdatedAt, TTL: msDuration(t.TTLMs), PollInterval: msDuration(t.PollIntervalMs), Extension: true}
}

func legacyTaskOf(t *protocol.Task) *Task {
	return &Task{ID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage, CreatedAt: t.CreatedAt,
		LastUpdatedAt: t.LastUpdatedAt, TTL: msDuration(t.TTL), PollInterval: msDuration(t.PollInterval)}
}

// legacyTaskable reports whether a 2025-11-25 server accepts tools/call of
// name as a task: it advertises tasks.requests.tools.call and the tool's
// execution.taskSupport is optional or required.
func (c *Client) legacyTaskable(ctx context.Context, name string) (bool, error) {
	if c.sess.ProtocolVersion() != protocol.Version20251125 {
		return false, nil
	}
	var caps struct {
		Requests struct {
			Tools struct {
				Call *json.RawMessage `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	}
	raw := c.ServerCapabilities().Tasks
	if len(raw) == 0 || json.Unmarshal(raw, &caps) != nil || caps.Requests.Tools.Call == nil {
		return false, nil
	}
	info, err := c.toolInfo(ctx, name, false)
	if err != nil {
		return false, err
	}
	if info == nil || info.execution == nil {
		return false, nil
	}
	ts := info.execution.TaskSupport
	return ts == protocol.TaskSupportOptional || ts == protocol.TaskSupportRequired, nil
}

// StartTool calls a tool allowing the server to run it as a task (as
// [WithTaskAugmentation] does) and returns the task without waiting, or the result
// when the server answered at once. Exactly one of the two is non-nil on
// success. Errors are those of [Client.CallTool].
func (c *Client) StartTool(ctx context.Context, name string, args any, opts ...CallOption) (*Task, *protocol.CallToolResult, error) {
	cc := c.callOptions(opts)
	cc.task = true
	res, task, err := c.startTool(ctx, name, args, &cc)
	return task, res, opError(protocol.MethodToolsCall, err)
}

// AwaitTask polls t until it ends (honouring the server's poll interval,
// clamped to between 10ms and 30s; 500ms when it suggests none) and returns the tool's
// result. Input the task asks for (tasks extension: input_required with
// inputRequests) is obtained from the handler and sent with tasks/update,
// each request key answered once; a status asking more than 64 new ones
// at once (as an MRTR round may not) is an [*Error] of kind
// [KindProtocol], and none is answered. A 2025-11-25 task's result is fetched
// with tasks/result, over which the server may send its own requests to
// the handler.
//
// The task's ttl is a backstop: once createdAt + ttl has passed (by the
// client's clock) and the task has not finished, AwaitTask stops polling
// with an [*Error] of kind [KindTimeout] (that does not match
// context.DeadlineExceeded) naming the task.
//
// A failed task is an [*Error] of kind [KindServer] wrapping the server's
// *jsonrpc.Error; a cancelled one is an [*Error] of kind [KindCanceled]
// naming the task (that does not match context.Canceled); a tasks/get
// answered with another task's state (another taskId, or none) is an
// [*Error] of kind [KindProtocol], and t keeps its ID; other errors are
// those of the calls made (a [*jsonrpc.Error] for an unknown task,
// [ErrClosed], ctx.Err()).
func (c *Client) AwaitTask(ctx context.Context, t *Task) (*protocol.CallToolResult, error) {
	if t == nil {
		return nil, newError(protocol.MethodToolsCall, KindInvalid, "AwaitTask of a nil task")
	}
	var res *protocol.CallToolResult
	var err error
	if t.Extension {
		res, err = c.awaitExtTask(ctx, t)
	} else {
		res, err = c.awaitCoreTask(ctx, t)
	}
	return res, opError(protocol.MethodToolsCall, err)
}

// pause waits d (clamped) or until ctx ends or the client closes.
func (c *Client) pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		d = defaultPollInterval
	}
	d = min(max(d, minPollInterval), maxPollInterval)
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closed:
		return ErrClosed
	}
}

func (c *Client) awaitExtTask(ctx context.Context, t *Task) (*protocol.CallToolResult, error) {
	answered := map[string]bool{}
	poll := t.PollInterval
	first := true
	rounds, maxRounds := 0, c.cfg.maxInputRounds
	if maxRounds <= 0 {
		maxRounds = engine.DefaultMaxInputRounds
	}
	for {
		dt, err := pollTask(ctx, c, t, &poll, first, c.getExtTask,
			func(dt *protocol.DetailedTask) *Task { return extTask(&dt.ExtTask) })
		if err != nil {
			return nil, err
		}
		first = false
		if !dt.Status.Terminal() {
			if xe := c.expired(t, nil); xe != nil {
				return nil, xe
			}
		}
		switch dt.Status {
		case protocol.TaskCompleted:
			var res protocol.CallToolResult
			if len(dt.Result) == 0 || string(dt.Result) == "null" {
				// null is no result object: decoded, it would be an
				// empty tool result, a tool that ran and said nothing.
				return nil, newError(protocol.MethodTasksGet, KindProtocol, "completed task without result")
			}
			if err := decode(protocol.MethodTasksGet, dt.Result, &res); err != nil {
				return nil, err
			}
			return &res, nil
		case protocol.TaskFailed:
			eo, _ := dt.TaskError()
			return nil, taskError(t, dt.Status, &jsonrpc.Error{Code: eo.Code, Message: eo.Message, Data: eo.Data})
		case protocol.TaskCancelled:
			return nil, taskCancelled(t)
		case protocol.TaskInputRequired:
			pending := map[string]protocol.InputRequest{}
			for k, r := range dt.InputRequests {
				if !answered[k] {
					pending[k] = r
				}
			}
			if len(pending) == 0 {
				continue
			}
			if rounds++; rounds > maxRounds {
				// A task that asks without end would have the handler
				// (a person, a model) asked without end.
				return nil, newError(protocol.MethodTasksUpdate, KindProtocol, "task %s asked for input more than %d times: %w", t.ID, maxRounds, engine.ErrTooManyInputRounds)
			}
			responses, err := c.answerInputs(ctx, pending)
			if err != nil {
				return nil, err
			}
			if _, err := c.call(ctx, protocol.MethodTasksUpdate, &protocol.UpdateTaskParams{TaskID: t.ID, InputResponses: responses}, nil); err != nil {
				return nil, err
			}
			for k := range pending {
				answered[k] = true
			}
			first = true // poll again at once: the answers may finish the task
		}
	}
}

// pollTask is one step of a task's polling: it waits the poll interval
// (not on the first step), fetches the task with get, stores its state
// (state of what get returned) in t and takes up the server's interval in
// poll. A failed fetch past the task's expiry is the expiry error.
func pollTask[T any](ctx context.Context, c *Client, t *Task, poll *time.Duration, first bool,
	get func(context.Context, string) (T, error), state func(T) *Task) (T, error) {
	var zero T
	if !first {
		if err := c.pause(ctx, c.untilExpiry(t, *poll)); err != nil {
			return zero, err
		}
	}
	v, err := get(ctx, t.ID)
	if err != nil {
		if xe := c.expired(t, err); xe != nil && ctx.Err() == nil {
			return zero, xe
		}
		return zero, err
	}
	*t = *state(v)
	if t.PollInterval > 0 {
		*poll = t.PollInterval
	}
	return v, nil
}

// getTask sends tasks/get for task id; R is the era's result.
func getTask[R any](ctx context.Context, c *Client, id string) (*R, error) {
	raw, err := c.call(ctx, protocol.MethodTasksGet, &protocol.GetTaskParams{TaskID: id}, nil)
	return decoded[R](protocol.MethodTasksGet, raw, err)
}

func (c *Client) getExtTask(ctx context.Context, id string) (*protocol.DetailedTask, error) {
	dt, err := getTask[protocol.DetailedTask](ctx, c, id)
	if err != nil {
		return nil, err
	}
	if dt.TaskID != id {
		return nil, otherTask(id, dt.TaskID)
	}
	return dt, nil
}

func (c *Client) getCoreTask(ctx context.Context, id string) (*protocol.Task, error) {
	gt, err := getTask[protocol.GetTaskResult](ctx, c, id)
	if err != nil {
		return nil, err
	}
	if gt.TaskID != id {
		return nil, otherTask(id, gt.TaskID)
	}
	return &gt.Task, nil
}

// otherTask reports a tasks/get of task id answered with the state of
// task got (or of none): taken as id's, it would make the task awaited
// change its id and end with another task's result.
func otherTask(id, got string) *Error {
	if got == "" {
		return newError(protocol.MethodTasksGet, KindProtocol, "tasks/get of task %q answered with a task without taskId", id)
	}
	return newError(protocol.MethodTasksGet, KindProtocol, "tasks/get of task %q answered with task %q", id, got)
}

func (c *Client) awaitCoreTask(ctx context.Context, t *Task) (*protocol.CallToolResult, error) {
	poll := t.PollInterval
	for first := true; ; first = false {
		ct, err := pollTask(ctx, c, t, &poll, first, c.getCoreTask, legacyTaskOf)
		if err != nil {
			return nil, err
		}
		if !ct.Status.Terminal() && ct.Status != protocol.TaskInputRequired {
			if xe := c.expired(t, nil); xe != nil {
				return nil, xe
			}
		}
		if ct.Status == protocol.TaskCancelled {
			return nil, taskCancelled(t)
		}
		if ct.Status.Terminal() || ct.Status == protocol.TaskInputRequired {
			break
		}
	}
	// tasks/result blocks until the task ends; the server may send its
	// input requests meanwhile, which the session serves.
	raw, err := c.call(ctx, protocol.MethodTasksResult, &protocol.TaskPayloadParams{TaskID: t.ID}, nil)
	if err != nil && t.Status == protocol.TaskFailed {
		return nil, taskError(t, t.Status, err)
	}
	return decoded[protocol.CallToolResult](protocol.MethodTasksResult, raw, err)
}

// TaskStatus returns the current state of task id (tasks/get, in the
// era's design). An answer naming another task, or none, is an [*Error]
// of kind [KindProtocol].
func (c *Client) TaskStatus(ctx context.Context, id string) (*Task, error) {
	if c.isModern() {
		dt, err := c.getExtTask(ctx, id)
		if err != nil {
			return nil, err
		}
		return extTask(&dt.ExtTask), nil
	}
	ct, err := c.getCoreTask(ctx, id)
	if err != nil {
		return nil, err
	}
	return legacyTaskOf(ct), nil
}

// CancelTask asks the server to cancel task id (tasks/cancel). Cancellation
// is cooperative: the task may still complete.
func (c *Client) CancelTask(ctx context.Context, id string) error {
	_, err := c.call(ctx, protocol.MethodTasksCancel, &protocol.CancelTaskParams{TaskID: id}, nil)
	return err
}

// Tasks iterates over the server's tasks (2025-11-25 tasks/list). In the
// modern era it yields one error matching [ErrNotSupported].
func (c *Client) Tasks(ctx context.Context) iter.Seq2[*Task, error] {
	return walk(ctx, c, protocol.MethodTasksList, func(ctx context.Context, cur *string) ([]*Task, *string, error) {
		if c.isModern() {
			return nil, nil, &Error{Op: protocol.MethodTasksList, Kind: KindUnsupported, Err: ErrNotSupported}
		}
		raw, err := c.call(ctx, protocol.MethodTasksList, &protocol.ListTasksParams{Cursor: cur}, nil)
		r, err := decoded[protocol.ListTasksResult](protocol.MethodTasksList, raw, err)
		if err != nil {
			return nil, nil, err
		}
		out := make([]*Task, len(r.Tasks))
		for i := range r.Tasks {
			out[i] = legacyTaskOf(&r.Tasks[i])
		}
		return out, r.NextCursor, nil
	})
}

// answerInputs answers a task's input requests as an MRTR round's
// (engine.Session.AnswerInputs): through the middleware and the handler,
// checked against the declared capabilities, a handler's failure of kind
// KindHandler as in a call's own rounds.
func (c *Client) answerInputs(ctx context.Context, reqs map[string]protocol.InputRequest) (protocol.InputResponses, error) {
	pending := make(map[string]engine.PendingRequest, len(reqs))
	for k, r := range reqs {
		pending[k] = engine.PendingRequest{Method: r.Method, Params: r.Params}
	}
	answers, err := c.sess.AnswerInputs(ctx, protocol.MethodToolsCall, pending)
	if err != nil {
		return nil, err
	}
	return protocol.InputResponses(answers), nil
}
