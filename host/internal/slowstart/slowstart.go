// Package slowstart is an MCP server that is slow to start, for the host
// package's tests and its scale harness: [Main] appends "start PID
// UNIXNANO" to a log file, sleeps, burns CPU time (as a heavy runtime
// does while it loads), appends "up PID UNIXNANO", then serves the
// project's test server on stdin and stdout.
//
// The log lets a test count, on the servers' side, how many of them were
// starting at once: the span from "start" to "up" of each process lies
// inside the span its client spends connecting.
package slowstart

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/conduitmcp/conduit/internal/testserver"
)

// Main runs the server with args (the flags below) and returns its exit
// status.
func Main(args []string) int {
	fs := flag.NewFlagSet("slowserver", flag.ContinueOnError)
	logPath := fs.String("log", "", "append the start and up lines to this file")
	sleep := fs.Duration("sleep", 0, "sleep this long before serving")
	cpu := fs.Duration("cpu", 0, "burn this much CPU time before serving")
	era := fs.String("era", "dual", "eras served: dual, modern or legacy")
	crash := fs.String("crash-on", "", "exit with status 3 on the first request of this method, unless the -crash-marker file exists (then create it)")
	marker := fs.String("crash-marker", "", "the file that disarms -crash-on (the process that crashes creates it)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	opts := testserver.Options{}
	var err error
	if opts.Era, err = testserver.ParseEra(*era); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if _, serr := os.Stat(*marker); *crash != "" && (*marker == "" || serr != nil) {
		opts.Faults = []testserver.Fault{{Kind: testserver.FaultExit, Method: *crash}}
	}
	if err := logLine(*logPath, "start"); err != nil {
		fmt.Fprintln(os.Stderr, "slowserver:", err)
		return 1
	}
	time.Sleep(*sleep)
	Burn(*cpu)
	if err := logLine(*logPath, "up"); err != nil {
		fmt.Fprintln(os.Stderr, "slowserver:", err)
		return 1
	}
	srv := testserver.New(opts)
	defer srv.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = srv.ServeStream(ctx, os.Stdin, os.Stdout)
	if errors.Is(err, testserver.ErrExit) {
		if *marker != "" {
			_ = os.WriteFile(*marker, nil, 0o600)
		}
		return 3
	}
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "slowserver:", err)
	}
	return 0
}

// logLine appends "WHAT PID UNIXNANO" to path in one write (concurrent
// processes do not interleave); "" logs nothing.
func logLine(path, what string) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s %d %d\n", what, os.Getpid(), time.Now().UnixNano())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Burn spins until this process has used d of CPU time: under
// contention it takes longer than d, as a heavy runtime's start does.
func Burn(d time.Duration) {
	if d <= 0 {
		return
	}
	target := cpuTime() + d
	x := uint64(1)
	for cpuTime() < target {
		for range 100000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink.Store(x)
}

// sink keeps Burn's loop from being optimized away.
var sink atomic.Uint64
