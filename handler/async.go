package handler

import (
	"context"

	"github.com/conduitmcp/conduit/protocol"
)

// ElicitationCompleteListener receives the 2025-11-25
// notifications/elicitation/complete: the URL-mode elicitation with this
// id (from an elicitation/create request or a -32042 error) finished on
// the server's side.
type ElicitationCompleteListener interface {
	// OnElicitationComplete is called from the dispatcher goroutine, in
	// order.
	OnElicitationComplete(ctx context.Context, elicitationID string)
}

// TaskStatusListener receives the server's task status notifications
// (the 2025-11-25 notifications/tasks/status; the tasks extension's
// notifications/tasks, mapped to the same fields), so that a task's
// status is seen when it changes, not only when polled.
type TaskStatusListener interface {
	// OnTaskStatus is called from the dispatcher goroutine, in order.
	OnTaskStatus(ctx context.Context, task *protocol.Task)
}

// ElicitationCompleteListenerFunc adapts a function to
// [ElicitationCompleteListener].
type ElicitationCompleteListenerFunc func(ctx context.Context, elicitationID string)

// OnElicitationComplete calls f.
func (f ElicitationCompleteListenerFunc) OnElicitationComplete(ctx context.Context, id string) {
	f(ctx, id)
}

// TaskStatusListenerFunc adapts a function to [TaskStatusListener].
type TaskStatusListenerFunc func(ctx context.Context, task *protocol.Task)

// OnTaskStatus calls f.
func (f TaskStatusListenerFunc) OnTaskStatus(ctx context.Context, t *protocol.Task) { f(ctx, t) }

var (
	_ ElicitationCompleteListener = ElicitationCompleteListenerFunc(nil)
	_ TaskStatusListener          = TaskStatusListenerFunc(nil)
)
