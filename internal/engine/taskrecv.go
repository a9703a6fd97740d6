package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// The client as a 2025-11-25 task receiver: a task-augmented
// sampling/createMessage or elicitation/create (params.task) is answered
// at once with a CreateTaskResult, the handler runs on its own goroutine,
// and the server follows the task with tasks/get, tasks/result,
// tasks/list and tasks/cancel. It is offered only when the legacy
// capabilities declare tasks.requests for the method (see
// negotiation.CapabilityOptions.TaskRequests).

const (
	// MaxReceiverTasks bounds the tasks a client keeps for a server (the
	// running ones and the finished ones within their ttl).
	MaxReceiverTasks = 64
	// defaultReceiverTTL is a task's retention when the server asks for
	// none; maxReceiverTTL caps what it may ask.
	defaultReceiverTTL = 10 * time.Minute
	maxReceiverTTL     = time.Hour
	// receiverPollMs is the poll interval the client suggests.
	receiverPollMs = 100
)

// recvTask is one task the client runs for the server.
type recvTask struct {
	task    protocol.Task // guarded by taskReceiver.mu
	result  json.RawMessage
	err     *jsonrpc.Error
	expires time.Time
	done    chan struct{} // closed when the task is terminal
	cancel  context.CancelFunc
}

// taskReceiver holds the tasks of one session.
type taskReceiver struct {
	mu    sync.Mutex
	seq   int
	tasks map[string]*recvTask
	order []string // ids in creation order
}

// serveLegacy answers one legacy server request, through the middleware:
// every request the server sends passes through it once, whether it is
// held for a manual caller, served by the task receiver (tasks/*, a
// task-augmented request answered with its task) or by the handler.
func (s *Session) serveLegacy(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	if s.cfg.Middleware == nil {
		return s.dispatchLegacy(ctx, req)
	}
	m := &Message{Method: req.Method, Params: req.Params, Incoming: true, ID: req.ID}
	return s.through(ctx, m, func(ctx context.Context, m *Message) (json.RawMessage, error) {
		return s.dispatchLegacy(ctx, &jsonrpc.Request{ID: req.ID, Method: m.Method, Params: m.Params})
	})
}

// dispatchLegacy answers a legacy server request: tasks/* and
// task-augmented requests here, the rest through invoke.
func (s *Session) dispatchLegacy(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	if !hasTask(req.Params) {
		if res, err, held := s.holdForCaller(ctx, req); held {
			return res, err
		}
	}
	switch req.Method {
	case protocol.MethodTasksGet, protocol.MethodTasksResult, protocol.MethodTasksList, protocol.MethodTasksCancel:
		if t := s.legacyCaps.Tasks; t == nil {
			return nil, jsonrpc.ErrMethodNotFound.WithMessage("tasks are not supported")
		}
		return s.taskMethod(ctx, req)
	case protocol.MethodSamplingCreateMessage, protocol.MethodElicitationCreate:
		var p struct {
			Task *protocol.TaskMetadata `json:"task"`
		}
		if len(req.Params) > 0 && json.Unmarshal(req.Params, &p) == nil && p.Task != nil && s.taskable(req.Method) {
			return s.startRecvTask(req, p.Task)
		}
	}
	return s.invoke(ctx, req.Method, req.Params, s.legacyCaps)
}

// hasTask reports whether params carry a task augmentation.
func hasTask(params json.RawMessage) bool {
	var p struct {
		Task json.RawMessage `json:"task"`
	}
	return len(params) > 0 && json.Unmarshal(params, &p) == nil && len(p.Task) > 0 && string(p.Task) != "null"
}

// taskable reports whether the legacy capabilities accept method as a task.
func (s *Session) taskable(method string) bool {
	t := s.legacyCaps.Tasks
	if t == nil || t.Requests == nil {
		return false
	}
	if method == protocol.MethodSamplingCreateMessage {
		return t.Requests.Sampling != nil && t.Requests.Sampling.CreateMessage != nil
	}
	return t.Requests.Elicitation != nil && t.Requests.Elicitation.Create != nil
}

func isoNow() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// startRecvTask creates the task, starts the handler and returns the
// CreateTaskResult.
func (s *Session) startRecvTask(req *jsonrpc.Request, meta *protocol.TaskMetadata) (json.RawMessage, error) {
	ttl := defaultReceiverTTL
	if meta.TTL != nil && *meta.TTL > 0 {
		// Capped before the conversion, which would overflow.
		ttl = time.Duration(min(*meta.TTL, int64(maxReceiverTTL/time.Millisecond))) * time.Millisecond
	}
	r := &s.recv
	r.mu.Lock()
	r.purgeLocked()
	if len(r.tasks) >= MaxReceiverTasks {
		r.mu.Unlock()
		return nil, jsonrpc.ErrInternal.WithMessage("too many tasks (" + strconv.Itoa(MaxReceiverTasks) + ")")
	}
	r.seq++
	now := isoNow()
	ttlMs, poll := ttl.Milliseconds(), int64(receiverPollMs)
	ctx, cancel := context.WithCancel(s.dctx.Context)
	t := &recvTask{
		task:    protocol.Task{TaskID: "client-task-" + strconv.Itoa(r.seq), Status: protocol.TaskWorking, CreatedAt: now, LastUpdatedAt: now, TTL: &ttlMs, PollInterval: &poll},
		expires: time.Now().Add(ttl),
		done:    make(chan struct{}),
		cancel:  cancel,
	}
	if r.tasks == nil {
		r.tasks = map[string]*recvTask{}
	}
	r.tasks[t.task.TaskID] = t
	r.order = append(r.order, t.task.TaskID)
	created := t.task
	r.mu.Unlock()
	s.wg.Add(1)
	go s.runRecvTask(ctx, t, req)
	return marshalResult(&protocol.CreateTaskResult{Task: created})
}

// runRecvTask runs the handler of a task and records its outcome.
func (s *Session) runRecvTask(ctx context.Context, t *recvTask, req *jsonrpc.Request) {
	defer s.wg.Done()
	defer t.cancel()
	// The request already passed the middleware when it arrived
	// (serveLegacy); its outcome reaches the server through tasks/result.
	res, err := s.invoke(ctx, req.Method, req.Params, s.legacyCaps)
	r := &s.recv
	r.mu.Lock()
	if t.task.Status.Terminal() { // cancelled meanwhile
		r.mu.Unlock()
		return
	}
	if err != nil {
		je, ok := errors.AsType[*jsonrpc.Error](err)
		if !ok {
			je = jsonrpc.ErrInternal.WithMessage(err.Error())
		}
		t.err, t.task.Status = je, protocol.TaskFailed
	} else {
		t.result, t.task.Status = res, protocol.TaskCompleted
	}
	t.task.LastUpdatedAt = isoNow()
	close(t.done)
	snap := t.task
	r.mu.Unlock()
	s.notifyTaskStatus(snap)
}

// notifyTaskStatus tells the server a task's new status
// (notifications/tasks/status; optional in the spec, cheap here).
func (s *Session) notifyTaskStatus(t protocol.Task) {
	ctx, cancel := context.WithTimeout(s.dctx.Context, responseWriteTimeout)
	defer cancel()
	if err := s.Notify(ctx, protocol.NotificationTasksStatus, &protocol.TaskStatusParams{Task: t}); err != nil {
		s.log.Debug("sending notifications/tasks/status", "task", t.TaskID, "err", err)
	}
}

// purgeLocked drops the tasks whose ttl ran out (cancelling those still
// running). r.mu must be held.
func (r *taskReceiver) purgeLocked() {
	now := time.Now()
	keep := r.order[:0]
	for _, id := range r.order {
		t := r.tasks[id]
		if now.After(t.expires) {
			t.cancel()
			delete(r.tasks, id)
			continue
		}
		keep = append(keep, id)
	}
	r.order = keep
}

// lookup returns the task named by params, or -32602.
func (r *taskReceiver) lookup(params json.RawMessage) (*recvTask, error) {
	var p protocol.TaskIDParams
	if err := unmarshalParams(params, &p); err != nil || p.TaskID == "" {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("tasks: a taskId is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.purgeLocked()
	t, ok := r.tasks[p.TaskID]
	if !ok {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("unknown or expired task " + strconv.Quote(p.TaskID))
	}
	return t, nil
}

// taskMethod answers tasks/get, tasks/result, tasks/list and tasks/cancel.
func (s *Session) taskMethod(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error) {
	r := &s.recv
	if req.Method == protocol.MethodTasksList {
		var p struct {
			Cursor *string `json:"cursor"`
		}
		if unmarshalParams(req.Params, &p) != nil || p.Cursor != nil {
			return nil, jsonrpc.ErrInvalidParams.WithMessage("tasks/list: invalid cursor")
		}
		r.mu.Lock()
		r.purgeLocked()
		list := make([]protocol.Task, 0, len(r.order))
		for _, id := range r.order {
			list = append(list, r.tasks[id].task)
		}
		r.mu.Unlock()
		return marshalResult(&protocol.ListTasksResult{Tasks: list})
	}
	t, err := r.lookup(req.Params)
	if err != nil {
		return nil, err
	}
	switch req.Method {
	case protocol.MethodTasksGet:
		r.mu.Lock()
		snap := t.task
		r.mu.Unlock()
		return marshalResult(&protocol.GetTaskResult{Task: snap})
	case protocol.MethodTasksCancel:
		return s.cancelRecvTask(t)
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return taskPayload(t)
}

// cancelRecvTask cancels a running task; a terminal one is -32602.
func (s *Session) cancelRecvTask(t *recvTask) (json.RawMessage, error) {
	r := &s.recv
	r.mu.Lock()
	if t.task.Status.Terminal() {
		st := t.task.Status
		r.mu.Unlock()
		return nil, jsonrpc.ErrInvalidParams.WithMessage("task is already " + string(st))
	}
	t.task.Status, t.task.LastUpdatedAt = protocol.TaskCancelled, isoNow()
	t.cancel()
	close(t.done)
	snap := t.task
	r.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.notifyTaskStatus(snap)
	}()
	return marshalResult(&protocol.CancelTaskResult{Task: snap})
}

// taskPayload is the tasks/result answer of a terminal task: the
// underlying result with _meta related-task, or its error.
func taskPayload(t *recvTask) (json.RawMessage, error) {
	if t.err != nil {
		return nil, t.err
	}
	if t.result == nil {
		return nil, jsonrpc.ErrInternal.WithMessage("task " + strconv.Quote(t.task.TaskID) + " was cancelled")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t.result, &m); err != nil {
		return nil, jsonrpc.ErrInternal.WithMessage("task result: " + err.Error())
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := m["_meta"]; ok {
		_ = json.Unmarshal(raw, &meta) // a malformed _meta is replaced
	}
	rel, _ := json.Marshal(protocol.RelatedTaskMetadata{TaskID: t.task.TaskID})
	meta[protocol.MetaRelatedTask] = rel
	m["_meta"], _ = json.Marshal(meta)
	return json.Marshal(m)
}

// taskStatus delivers a server's task status notification to the
// listener: the 2025-11-25 notifications/tasks/status as it is, the tasks
// extension's notifications/tasks with its fields mapped (ttlMs to TTL,
// pollIntervalMs to PollInterval). It runs on the dispatcher.
func (s *Session) taskStatus(ctx context.Context, n *jsonrpc.Request) {
	l := s.cfg.Handler.TaskStatus
	if l == nil {
		return
	}
	var t protocol.Task
	if n.Method == protocol.NotificationTasksStatus {
		var p protocol.TaskStatusParams
		if json.Unmarshal(n.Params, &p) != nil || p.TaskID == "" {
			return
		}
		t = p.Task
	} else {
		var p protocol.TasksNotificationParams
		if json.Unmarshal(n.Params, &p) != nil || p.TaskID == "" {
			return
		}
		e := p.ExtTask
		t = protocol.Task{TaskID: e.TaskID, Status: e.Status, StatusMessage: e.StatusMessage, CreatedAt: e.CreatedAt,
			LastUpdatedAt: e.LastUpdatedAt, TTL: e.TTLMs, PollInterval: e.PollIntervalMs}
	}
	l.OnTaskStatus(ctx, &t)
}
