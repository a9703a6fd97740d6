package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Exit statuses, documented in the help text.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitNegotiation = 3
	exitToolError   = 4
	exitInterrupted = 130
)

func main() {
	// Ctrl-C (and SIGTERM) cancel ctx: the running request is cancelled,
	// the client closed and a stdio server stopped, then conduit exits 130.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &stdio{
		in:      os.Stdin,
		out:     os.Stdout,
		err:     os.Stderr,
		inTTY:   isTerminal(os.Stdin),
		errTTY:  isTerminal(os.Stderr),
		errCols: func() int { return termColumns(os.Stderr) },
	})
	stop()
	os.Exit(code)
}

// isTerminal reports whether f is a character device (a terminal), without
// dependencies.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// stdio is the process's standard streams and what is known about them.
type stdio struct {
	in     io.Reader
	out    io.Writer
	err    io.Writer
	inTTY  bool // stdin is a terminal: prompts are interactive
	errTTY bool // stderr is a terminal: progress is drawn as a live bar
	// errCols returns the width of the stderr terminal, 0 when unknown;
	// nil: unknown.
	errCols func() int
}

// command is one subcommand.
type command struct {
	name     string
	args     string // the synopsis after "conduit NAME [flags]"
	summary  string // one line for the command list
	detail   string // what it does, for -h
	examples string // indented example lines, for -h
	output   string // what --json prints, for -h
	run      func(ctx context.Context, inv *invocation) error
	// setup registers the command's own flags; nil for none.
	setup func(inv *invocation, fs *flag.FlagSet)
	// main, when set, runs the command instead of run, with its own flags
	// only (no target, no global flags): conduit serve.
	main func(ctx context.Context, args []string, std *stdio) int
	// fixed is the number of positional arguments after the target when it
	// is fixed (so that a lone http:// resource URI is not taken for the
	// target), or -1.
	fixed int
}

// commands in the order of the help text. It is filled in init because
// the help command refers to it.
var commands []*command

func init() {
	commands = []*command{
		demoCommand, probeCommand,
		listCommand("tools"), listCommand("prompts"), listCommand("resources"), listCommand("templates"),
		callCommand, readCommand, promptCommand, completeCommand, listenCommand,
		serveCommand, helpCommand,
	}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run is main without the process: it returns the exit status. What it
// prints goes through a [termWriter], so that text a server chose cannot
// act on the terminal; but for conduit serve's stdout, its JSON-RPC stream.
func run(ctx context.Context, args []string, std *stdio) int {
	rawOut := std.out
	safe := *std
	safe.out, safe.err = newTermWriter(std.out), newTermWriter(std.err)
	std = &safe
	cmd := demoCommand
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if c := lookup(args[0]); c != nil {
			cmd, args = c, args[1:]
		} else if !isTargetURL(args[0]) {
			fmt.Fprintf(std.err, "conduit: unknown command %q (run 'conduit help' for the list)\n", args[0])
			return exitUsage
		}
	} else if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		printMainHelp(std.out)
		return exitOK
	}
	if cmd.main != nil {
		// conduit serve: stdout is the server's JSON-RPC stream (or its
		// URL), read by a host, not a terminal. It goes out as written: the
		// escapes would break the JSON (a DEL, which JSON carries as it is,
		// would become "\x7f", no JSON escape).
		std.out = rawOut
		return cmd.main(ctx, args, std)
	}
	inv := &invocation{std: std, cmd: cmd}
	err := inv.parse(args)
	if err == nil {
		err = inv.runCommand(ctx) // config.go: --config runs on every server
	}
	return inv.finish(ctx, err)
}

// invocation is one run of a command: its flags and arguments.
type invocation struct {
	std *stdio
	cmd *command

	// Global flags.
	protocol string
	headers  headerFlag
	timeout  time.Duration
	json     bool
	verbose  bool
	record   string // --record FILE: the session's transcript (record.go)
	// Authorization flags (auth.go).
	authMode  string
	tokenFile string
	clientID  string
	// Config flags (config.go).
	configFile string
	serverName string

	// Command flags (registered by the commands that take them).
	repeat      int         // call --repeat
	concurrency int         // call --concurrency
	replay      string      // call --replay
	samplingCmd string      // call, prompt, read --sampling-command
	uris        stringsFlag // listen --uri
	promptRef   string      // complete --prompt
	resourceRef string      // complete --resource

	// Arguments.
	target target   // where the server is
	args   []string // positional arguments after the target

	// jsonErrorWritten is set when the command already reported its
	// failure as JSON on stdout.
	jsonErrorWritten bool
}

// headerFlag collects repeated --header K:V flags.
type headerFlag []string

func (h *headerFlag) String() string { return strings.Join(*h, ", ") }

func (h *headerFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(k) == "" || strings.ContainsAny(strings.TrimSpace(k), " \t") {
		return errors.New("want NAME:VALUE")
	}
	*h = append(*h, strings.TrimSpace(k)+":"+strings.TrimSpace(val))
	return nil
}

// stringsFlag collects a repeated string flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ", ") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

// globalFlags registers the flags every command takes.
func (inv *invocation) globalFlags(fs *flag.FlagSet) {
	fs.StringVar(&inv.protocol, "protocol", "auto", "`MODE` of era negotiation: auto (probe, fall back to legacy), modern, legacy, or a version to pin such as 2025-06-18")
	fs.Var(&inv.headers, "header", "extra HTTP header `NAME:VALUE` for URL targets (repeatable)")
	fs.DurationVar(&inv.timeout, "timeout", 0, "give up after `DURATION`, e.g. 30s (0: no limit; for listen it bounds connecting)")
	fs.BoolVar(&inv.json, "json", false, "print machine-readable JSON on stdout (see -h of each command)")
	fs.StringVar(&inv.record, "record", "", "write a transcript of the session to `FILE`: every JSON-RPC message, one a line, credentials redacted, for 'conduit serve --replay' and conduittest")
	fs.BoolVar(&inv.verbose, "v", false, "log to stderr: the SDK's decisions and the wire log (every JSON-RPC message on any transport, and each HTTP exchange's status)")
	inv.authFlags(fs)
	inv.configFlags(fs)
}

// usageError is a mistake on the command line (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// parse parses the command's flags and arguments. Flags may appear
// anywhere before "--"; everything after "--" is the stdio command.
func (inv *invocation) parse(args []string) error {
	fs := flag.NewFlagSet("conduit "+inv.cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	inv.globalFlags(fs)
	if inv.cmd.setup != nil {
		inv.cmd.setup(inv, fs)
	}
	var command []string
	for i, a := range args {
		if a == "--" {
			args, command = args[:i], args[i+1:]
			if len(command) == 0 {
				return usagef("nothing after --: name the server command to run")
			}
			break
		}
	}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	if err := checkProtocol(inv.protocol); err != nil {
		return err
	}
	t, rest, err := parseTarget(positional, command, inv.cmd.fixed)
	if err != nil {
		return err
	}
	inv.target, inv.args = t, rest
	if inv.timeout < 0 {
		return usagef("--timeout must not be negative")
	}
	if len(inv.headers) > 0 && t.kind == targetCommand {
		return usagef("--header needs an http(s) or ws(s) URL target (a stdio server has no headers)")
	}
	if err := inv.checkConfig(); err != nil || inv.configFile != "" {
		return err
	}
	return inv.checkAuth()
}

// finish reports err and returns the exit status.
func (inv *invocation) finish(ctx context.Context, err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		printCommandHelp(inv.std.out, inv.cmd)
		return exitOK
	}
	code := exitCode(ctx, err)
	if inv.json && !inv.jsonErrorWritten {
		writeJSON(inv.std.out, map[string]any{"error": errorJSON(ctx, err)})
	}
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(inv.std.err, "conduit %s: %v (run 'conduit %s -h' for help)\n", inv.cmd.name, ue.msg, inv.cmd.name)
	case code == exitInterrupted:
		fmt.Fprintln(inv.std.err, "conduit: interrupted")
	default:
		fmt.Fprintln(inv.std.err, "conduit: "+oneLine(describeError(err)))
	}
	return code
}

// exitCode maps an error to the documented exit status.
func exitCode(ctx context.Context, err error) int {
	var ue *usageError
	var te *toolError
	var ce *connectError
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil && errors.Is(err, context.Canceled), ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		return exitInterrupted
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &te):
		return exitToolError
	case errors.As(err, &ce):
		return exitNegotiation
	}
	return exitError
}

// oneLine folds an error text onto one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

var helpCommand = &command{
	name:    "help",
	args:    "[COMMAND]",
	summary: "show help for conduit or one command",
	detail:  "Prints the overview, or the help of COMMAND (the same as 'conduit COMMAND -h').",
	fixed:   -1,
	run: func(ctx context.Context, inv *invocation) error {
		// help takes no target: put a URL-looking argument back.
		args := inv.args
		if inv.target.kind == targetURL {
			args = append([]string{inv.target.url}, args...)
		}
		if len(args) == 0 {
			printMainHelp(inv.std.out)
			return nil
		}
		c := lookup(args[0])
		if c == nil {
			return usagef("unknown command %q", args[0])
		}
		printCommandHelp(inv.std.out, c)
		return nil
	},
}
