package storehealth

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

type counter map[slog.Level]int

type counterHandler struct{ c counter }

func (h counterHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h counterHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h counterHandler) WithGroup(string) slog.Handler            { return h }
func (h counterHandler) Handle(_ context.Context, r slog.Record) error {
	h.c[r.Level]++
	return nil
}

// TestLoggedOncePerOutage: failures log once; a success that started
// before the outage was seen does not end it; one that started after
// does, once; a failure within Quiet of the last one logged is the same
// outage; one after logs again.
func TestLoggedOncePerOutage(t *testing.T) {
	c := counter{}
	log := slog.New(counterHandler{c})
	var h Health
	err := errors.New("down")
	before := time.Now()
	time.Sleep(time.Millisecond)
	h.Report(log, "cache", time.Now(), err)
	h.Report(log, "cache", time.Now(), err)
	h.Report(log, "cache", before, nil) // overlapped the outage's start
	h.Report(log, "cache", time.Now(), err)
	if c[slog.LevelWarn] != 1 || c[slog.LevelInfo] != 0 {
		t.Fatalf("during an outage: %d warnings, %d infos; want 1, 0", c[slog.LevelWarn], c[slog.LevelInfo])
	}
	time.Sleep(time.Millisecond)
	if !h.Report(log, "cache", time.Now(), nil) {
		t.Error("Report(nil) = false")
	}
	h.Report(log, "cache", time.Now(), nil)
	if c[slog.LevelInfo] != 1 {
		t.Errorf("recovery logged %d times, want once", c[slog.LevelInfo])
	}
	time.Sleep(time.Millisecond)
	h.Report(log, "cache", time.Now(), nil)
	if c[slog.LevelWarn] != 1 || c[slog.LevelInfo] != 1 {
		t.Errorf("flapping within Quiet: %d warnings, %d infos in all; want 1, 1", c[slog.LevelWarn], c[slog.LevelInfo])
	}
	h.lastWarn.Add(-int64(Quiet)) // as if Quiet passed
	h.Report(log, "cache", time.Now(), err)
	if c[slog.LevelWarn] != 2 {
		t.Errorf("a second outage after Quiet: %d warnings in all, want 2", c[slog.LevelWarn])
	}
}
