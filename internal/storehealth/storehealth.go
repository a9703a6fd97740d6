// Package storehealth tracks whether a shared store (tokens, cache, era
// verdicts) works, so that its failure is logged once per outage rather
// than once per call.
//
// # Concurrency
//
// A [Health] is safe for concurrent use; its zero value is a store that
// works.
package storehealth

import (
	"log/slog"
	"sync/atomic"
	"time"
)

// Health is the state of one store as its user sees it.
type Health struct {
	// downSince is when the store's current failure was first seen, in
	// Unix nanoseconds; 0 while it works.
	downSince atomic.Int64
	// lastWarn is when a failure was last logged, in Unix nanoseconds.
	lastWarn atomic.Int64
	// warned is set while a logged failure awaits its recovery line.
	warned atomic.Bool
}

// Quiet is how long after a logged failure another is not logged: a
// store coming back flaps (its clients' broken connections fail once
// more), and that is the same outage.
const Quiet = time.Minute

// Failed records a failed call, logging msg with err at warning level
// when the store worked until now and no failure was logged in the last
// [Quiet] period.
func (h *Health) Failed(log *slog.Logger, msg string, err error) {
	now := time.Now().UnixNano()
	if !h.downSince.CompareAndSwap(0, now) {
		return
	}
	if last := h.lastWarn.Load(); (last == 0 || now-last >= int64(Quiet)) && h.lastWarn.CompareAndSwap(last, now) {
		h.warned.Store(true)
		log.Warn(msg, "err", err)
	}
}

// Succeeded records a call that succeeded after started, logging msg at
// info level when the store's failure had been logged. A call that
// started before the failure was seen proves nothing (concurrent calls
// overlap an outage's start), so it changes nothing.
func (h *Health) Succeeded(log *slog.Logger, msg string, started time.Time) {
	d := h.downSince.Load()
	if d != 0 && started.UnixNano() > d && h.downSince.CompareAndSwap(d, 0) && h.warned.CompareAndSwap(true, false) {
		log.Info(msg)
	}
}

// Report records the outcome of a call that started at started: nil is
// a success, anything else a failure. It reports whether err is nil.
func (h *Health) Report(log *slog.Logger, which string, started time.Time, err error) bool {
	if err != nil {
		h.Failed(log, "the "+which+" store fails; going on without it until it works again", err)
		return false
	}
	h.Succeeded(log, "the "+which+" store works again", started)
	return true
}
