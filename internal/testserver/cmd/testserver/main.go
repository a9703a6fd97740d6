// The testserver command serves Conduit's dual-era MCP test server on
// stdin and stdout (newline-delimited JSON-RPC), for tests and examples that
// need a real stdio subprocess.
//
// Usage:
//
//	testserver [-era dual|modern|legacy] [-versions 2026-07-28] [-legacy-versions 2025-11-25,2025-06-18]
//	           [-fault SPEC]... [-exit-marker PATH] [-banner LINE]... [-page-size N] [-ttl DURATION]
//	           [-http 127.0.0.1:PORT] [-sse] [-conformance] [-record PATH]
//
// With -http it serves HTTP instead of stdio: Streamable HTTP at /mcp (and
// /), WebSocket at /ws and the deprecated HTTP+SSE transport at /sse, and
// prints "testserver: listening on http://ADDR" on stderr. The host must be
// a loopback address.
//
// Each -fault is parsed by testserver.ParseFault, e.g.
// "rpc-error:code=-32601" or "exit". With -exit-marker, exit faults only
// fire in a process that finds no file at PATH; the process that exits
// creates it, so a respawned server behaves normally.
//
// With -record, a stdio server appends, when it stops serving (stdin closed,
// a signal, or an exit fault), one line to PATH: the JSON object
// {"pid": N, "exit": "eof"|"fault"|"error", "received": [...]} whose
// received list holds every message it got, as testserver.Recorded values.
// Tests that drive the binary read it to assert exactly what a client sent
// to each process.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/conduitmcp/conduit/internal/testserver"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("testserver", flag.ContinueOnError)
	era := fs.String("era", "dual", "eras served: dual, modern or legacy")
	versions := fs.String("versions", "", "modern versions, comma-separated (default 2026-07-28)")
	legacy := fs.String("legacy-versions", "", "legacy versions, comma-separated, preferred first (default 2025-11-25,2025-06-18)")
	marker := fs.String("exit-marker", "", "exit faults fire only if this file does not exist; the exiting process creates it")
	pageSize := fs.Int("page-size", 0, "items per list page (0: one page)")
	ttl := fs.Duration("ttl", 0, "ttlMs of cacheable modern results (negative: omit cache hints)")
	scope := fs.String("cache-scope", "", "cacheScope of cacheable modern results (default public)")
	maxMsg := fs.Int("max-message", 0, "largest incoming message in bytes (0: 8 MiB)")
	httpAddr := fs.String("http", "", "serve HTTP on this loopback address (e.g. 127.0.0.1:0) instead of stdio")
	sse := fs.Bool("sse", false, "answer every HTTP request with an event stream")
	conformance := fs.Bool("conformance", false, "add the MCP conformance suite's fixtures (test_simple_text, …)")
	record := fs.String("record", "", "stdio: append what this process received to this file (one JSON line) when it stops serving")
	var faults, banner multiFlag
	fs.Var(&faults, "fault", "a fault, see testserver.ParseFault (repeatable)")
	fs.Var(&banner, "banner", "a non-JSON line written to stdout before serving (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	e, err := testserver.ParseEra(*era)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	opts := testserver.Options{
		Era: e, PageSize: *pageSize, TTL: *ttl, CacheScope: *scope, MaxMessageSize: *maxMsg, Banner: banner,
		SSEResponses: *sse, Conformance: *conformance,
	}
	if *versions != "" {
		opts.ModernVersions = strings.Split(*versions, ",")
	}
	if *legacy != "" {
		opts.LegacyVersions = strings.Split(*legacy, ",")
	}
	exitArmed := true
	if *marker != "" {
		if _, err := os.Stat(*marker); err == nil {
			exitArmed = false
		}
	}
	for _, spec := range faults {
		f, err := testserver.ParseFault(spec)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if f.Kind == testserver.FaultExit && !exitArmed {
			continue
		}
		opts.Faults = append(opts.Faults, f)
	}
	srv := testserver.New(opts)
	defer srv.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *httpAddr != "" {
		return serveHTTP(ctx, srv, *httpAddr)
	}
	fmt.Fprintf(os.Stderr, "testserver: serving %s era on stdio\n", e)
	err = srv.ServeStream(ctx, os.Stdin, os.Stdout)
	if *record != "" {
		if werr := writeRecord(*record, srv, err); werr != nil {
			fmt.Fprintln(os.Stderr, "testserver: -record:", werr)
		}
	}
	switch {
	case errors.Is(err, testserver.ErrExit):
		if *marker != "" {
			_ = os.WriteFile(*marker, []byte(time.Now().UTC().Format(time.RFC3339Nano)), 0o600)
		}
		fmt.Fprintln(os.Stderr, "testserver: exiting on fault")
		return 3
	case err != nil && !errors.Is(err, context.Canceled):
		fmt.Fprintln(os.Stderr, "testserver:", err)
		return 1
	}
	return 0
}

// writeRecord appends one JSON line describing this process and what it
// received to path, in a single write so that concurrent processes do not
// interleave.
func writeRecord(path string, srv *testserver.Server, serveErr error) error {
	exit := "eof"
	switch {
	case errors.Is(serveErr, testserver.ErrExit):
		exit = "fault"
	case serveErr != nil && !errors.Is(serveErr, context.Canceled):
		exit = "error"
	}
	line, err := json.Marshal(struct {
		PID      int                   `json:"pid"`
		Exit     string                `json:"exit"`
		Received []testserver.Recorded `json:"received"`
	}{os.Getpid(), exit, srv.Received()})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	return errors.Join(err, f.Close())
}

// serveHTTP serves srv's HTTP handlers on addr until ctx ends.
func serveHTTP(ctx context.Context, srv *testserver.Server, addr string) int {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		fmt.Fprintf(os.Stderr, "testserver: -http %q: want a loopback address such as 127.0.0.1:0\n", addr)
		return 2
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		return 1
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	mux.Handle("/ws", srv.WebSocketHandler())
	mux.Handle("/sse", srv.SSEHandler())
	mux.Handle("/", srv.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "testserver: listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "testserver:", err)
		return 1
	}
	// End the long-lived streams first, then the HTTP server.
	srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	return 0
}
