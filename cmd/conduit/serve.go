package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/conduitmcp/conduit/conduittest"
)

var serveCommand = &command{
	name:    "serve",
	args:    "[--http [ADDR]] [--era modern|legacy|both] [--fault SPEC]… | --replay FILE | --list-faults",
	summary: "run Conduit's dual-era test server (stdio or HTTP), with faults on demand",
	detail: `Runs the server of package conduittest, so that a host written in any language
can be tested against a real dual-era MCP server that misbehaves on demand.

By default it serves stdio: newline-delimited JSON-RPC on stdin and stdout, until
stdin ends (a host spawns 'conduit serve' as its server command). With --http it
serves on ADDR (default 127.0.0.1:0, a free port; loopback only) and prints the
Streamable HTTP URL on stdout; WebSocket is at /ws and the deprecated HTTP+SSE
transport at /sse. It stops on Ctrl-C or SIGTERM.

Each --fault makes the server misbehave on matching requests: --list-faults prints
every kind with what it does, and the fault behind each outcome of the era probe.
The form is KIND[:key=value,…] with keys method, transport, skip, times, code,
message, data, status, header, body, ctype, supported, version, result and size.

With --replay it serves a transcript recorded with 'conduit --record FILE' (or
conduittest.Recorder) instead: it answers the requests the transcript saw as the
recorded server did, and every other request with error -32099 and a diff on
stderr.

Exit status: 0 when stdin ended or on a signal, 1 on an error, 2 on a usage error,
3 when an exit fault fired (the process exits as a crashing server would).`,
	examples: `conduit serve                                   # stdio, both eras
conduit probe -- conduit serve --era legacy
conduit serve --http                            # prints http://127.0.0.1:PORT/mcp
conduit serve --http 127.0.0.1:8080 --era modern
conduit serve --fault silent:method=tools/call,times=1
conduit serve --fault http-status:status=503 --http
conduit tools --record session.jsonl https://example.com/mcp
conduit serve --replay session.jsonl --http
conduit serve --list-faults`,
	fixed: -1,
	setup: func(_ *invocation, fs *flag.FlagSet) { (&serveOptions{}).flags(fs) },
	main:  runServe,
}

// serveOptions are the flags of conduit serve.
type serveOptions struct {
	http       httpFlag
	era        string
	faults     stringsFlag
	replay     string
	listFaults bool
}

func (o *serveOptions) flags(fs *flag.FlagSet) {
	fs.Var(&o.http, "http", "serve HTTP on `ADDR` instead of stdio (--http alone: 127.0.0.1:0) and print the URL")
	fs.StringVar(&o.era, "era", "both", "eras served: `ERA` is modern, legacy or both")
	fs.Var(&o.faults, "fault", "install the fault `SPEC`, e.g. silent:method=tools/call (repeatable; see --list-faults)")
	fs.StringVar(&o.replay, "replay", "", "serve the transcript `FILE` instead of the test server")
	fs.BoolVar(&o.listFaults, "list-faults", false, "print every fault kind and the probe outcomes, then exit")
}

// httpFlag is --http, with or without an address.
type httpFlag struct {
	set  bool
	addr string
}

func (h *httpFlag) String() string   { return h.addr }
func (h *httpFlag) IsBoolFlag() bool { return true }

func (h *httpFlag) Set(v string) error {
	h.set = true
	switch v {
	case "true", "":
		h.addr = ""
	case "false":
		h.set = false
	default:
		h.addr = v
	}
	return nil
}

// runServe is conduit serve: it parses its own flags (the global client
// flags do not apply) and serves until stdin ends or ctx ends.
func runServe(ctx context.Context, args []string, std *stdio) int {
	var o serveOptions
	fs := flag.NewFlagSet("conduit serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.flags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandHelp(std.out, lookup("serve"))
			return exitOK
		}
		return serveUsage(std, "%v", err)
	}
	rest := fs.Args()
	if o.http.set && o.http.addr == "" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		o.http.addr, rest = rest[0], rest[1:] // --http ADDR
		if err := fs.Parse(rest); err != nil {
			return serveUsage(std, "%v", err)
		}
		rest = fs.Args()
	}
	if len(rest) > 0 {
		return serveUsage(std, "unexpected argument %q", rest[0])
	}
	if o.listFaults {
		printFaults(std.out)
		return exitOK
	}
	if o.http.set && o.http.addr == "" {
		o.http.addr = "127.0.0.1:0"
	}
	if o.replay != "" {
		if len(o.faults) > 0 || o.era != "both" {
			return serveUsage(std, "--replay serves the transcript as recorded: it takes no --fault or --era")
		}
		return serveReplay(ctx, &o, std)
	}
	era, err := conduittest.ParseEra(o.era)
	if err != nil {
		return serveUsage(std, "--era %q: want modern, legacy or both", o.era)
	}
	faults := make([]conduittest.Fault, 0, len(o.faults))
	for _, f := range o.faults {
		if err := conduittest.Fault(f).Validate(); err != nil {
			return serveUsage(std, "--fault: %v", strings.TrimPrefix(err.Error(), "conduittest: "))
		}
		faults = append(faults, conduittest.Fault(f))
	}
	srv, err := conduittest.New(conduittest.WithEra(era), conduittest.WithFaults(faults...))
	if err != nil {
		return serveUsage(std, "%v", err)
	}
	defer srv.Close()
	if o.http.set {
		return serveHTTP(ctx, o.http.addr, srv.Handler(), func() { srv.Close() }, std)
	}
	err = srv.ServeStdio(ctx, interruptible(std.in), std.out)
	switch {
	case errors.Is(err, conduittest.ErrExit):
		fmt.Fprintln(std.err, "conduit serve: exiting on fault")
		return exitNegotiation
	case err != nil && ctx.Err() == nil:
		fmt.Fprintln(std.err, "conduit serve:", err)
		return exitError
	}
	return exitOK
}

// interruptible returns a reader of in that the server can close: a read
// on the process's stdin cannot be interrupted, and the server stops by
// closing its input (an exit fault, a signal). The copying goroutine may
// stay blocked on stdin; the process exits right after.
func interruptible(in io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, in)
		pw.CloseWithError(err)
	}()
	return pr
}

func serveUsage(std *stdio, format string, args ...any) int {
	fmt.Fprintf(std.err, "conduit serve: %s (run 'conduit serve -h' for help)\n", fmt.Sprintf(format, args...))
	return exitUsage
}

// printFaults prints the fault table and the probe outcomes.
func printFaults(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, f := range conduittest.Faults() {
		fmt.Fprintf(tw, "%s\t%s\n", f.Fault, f.Description)
	}
	tw.Flush()
	fmt.Fprint(w, "\nProbe outcomes (server/discover answer → client verdict: --fault SPEC):\n")
	for _, p := range conduittest.ProbeOutcomes() {
		where := ""
		if p.Transport != "" {
			where = p.Transport + ": "
		}
		spec := string(p.Fault)
		if spec == "" {
			spec = "(none)"
		}
		fmt.Fprintf(w, "  %s%s → %s: %s\n", where, p.Outcome, p.Verdict, spec)
	}
}

// serveHTTP serves h on the loopback address addr until ctx ends, printing
// the endpoints; stop ends the long-lived streams before the shutdown.
func serveHTTP(ctx context.Context, addr string, h http.Handler, stop func(), std *stdio) int {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return serveUsage(std, "--http %q: want a loopback address such as 127.0.0.1:0", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(std.err, "conduit serve:", err)
		return exitError
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	base := "http://" + ln.Addr().String()
	fmt.Fprintln(std.out, base+"/mcp")
	fmt.Fprintf(std.err, "conduit serve: Streamable HTTP at %s/mcp, WebSocket at ws://%s/ws, HTTP+SSE at %s/sse; Ctrl-C stops\n", base, ln.Addr(), base)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		fmt.Fprintln(std.err, "conduit serve:", err)
		return exitError
	}
	stop()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if hs.Shutdown(sctx) != nil {
		hs.Close()
	}
	<-errc
	return exitOK
}

// serveReplay serves a transcript on stdio or HTTP.
func serveReplay(ctx context.Context, o *serveOptions, std *stdio) int {
	entries, err := conduittest.LoadTranscript(o.replay)
	if err != nil {
		fmt.Fprintln(std.err, "conduit serve:", err)
		return exitError
	}
	rp := conduittest.StartReplay(entries, func(msg string) { fmt.Fprintln(std.err, msg) })
	defer rp.Close()
	if o.http.set {
		return serveHTTP(ctx, o.http.addr, rp.Handler(), func() { rp.Close() }, std)
	}
	if err := rp.ServeStdio(ctx, interruptible(std.in), std.out); err != nil && ctx.Err() == nil {
		fmt.Fprintln(std.err, "conduit serve:", err)
		return exitError
	}
	return exitOK
}
