package transport_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// serverEnv selects the mode in which the re-executed test binary runs as
// a stdio server (see TestMain).
const serverEnv = "CONDUIT_TRANSPORT_TEST_SERVER"

// runTestServer is a tiny line-delimited JSON-RPC server on stdin/stdout,
// used as a real subprocess by the stdio tests. It answers these methods:
//
//	echo     result = params
//	pid      result = {"pid": os.Getpid()}
//	args     result = {"args": os.Args[1:]}
//	getenv   params {"name"}; result {"value", "set"}
//	sized    params {"size"}; a response line of exactly size bytes
//	crash    params {"stderrBytes"}; notification "bye", stderr noise, a
//	         "boom" line on stderr, exit 3
//	ignore   never answered
//	broken   params {"name"}: a noise line, then the broken answer of
//	         that shape (see brokenAnswer)
//
// Modes change what happens around that:
//
//	echo          just the above; exits 0 when stdin closes
//	banner        first prints non-JSON-RPC lines to stdout
//	crlf          ends its lines with "\r\n", as a Windows program may
//	bom           starts its output with a UTF-8 byte order mark, as a
//	              Windows program may
//	grandchild    starts a grandchild (mode sleep) in its process group,
//	              holding stdout and stderr, and announces its pid
//	ignore-stdin  keeps running after stdin closed (SIGTERM ends it)
//	grandchild-ignore-stdin  both of the above
//	ignore-term   also ignores SIGTERM (only SIGKILL ends it)
//	flood         writes one endless line
//	close-stdout  closes stdout at once, exits when stdin closes
//	no-read       never reads stdin
//	sleep         sleeps a minute
func runTestServer(mode string) int {
	switch mode {
	case "sleep", "no-read":
		time.Sleep(time.Minute)
		return 0
	case "flood":
		os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"big","params":{"p":"`)
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for range 1024 { // 64 MiB at most; the client hangs up long before
			if _, err := os.Stdout.Write(chunk); err != nil {
				return 1
			}
		}
		return 0
	}
	if mode == "close-stdout" {
		os.Stdout.Close()
		io.Copy(io.Discard, os.Stdin)
		return 0
	}
	out := bufio.NewWriter(os.Stdout)
	eol := "\n"
	if mode == "crlf" {
		eol = "\r\n"
	}
	writeLine := func(b []byte) {
		out.Write(b)
		out.WriteString(eol)
		out.Flush()
	}
	send := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		writeLine(b)
	}
	notify := func(method string, params any) {
		send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	}
	switch mode {
	case "banner":
		fmt.Println("Starting test server v1.0 on stdio...")
		fmt.Println(`{"hello":"this is JSON but not JSON-RPC"}`)
		fmt.Println()
		fmt.Print("\r\n")
	case "grandchild", "grandchild-ignore-stdin":
		exe, err := os.Executable()
		if err != nil {
			return 2
		}
		gc := exec.Command(exe)
		gc.Env = append(os.Environ(), serverEnv+"=sleep")
		gc.Stdout, gc.Stderr = os.Stdout, os.Stderr
		if err := gc.Start(); err != nil {
			return 2
		}
		notify("grandchild", map[string]any{"pid": gc.Process.Pid})
	case "bom":
		os.Stdout.WriteString("\xEF\xBB\xBF")
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		notify("ready", nil)
	case "ignore-stdin":
		notify("ready", nil)
	}

	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			if mode == "ignore-stdin" || mode == "ignore-term" || mode == "grandchild-ignore-stdin" {
				time.Sleep(time.Hour)
			}
			return 0
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			fmt.Fprintf(os.Stderr, "bad line %q: %v\n", line, err)
			return 4
		}
		respond := func(result any) {
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
		}
		var p struct {
			Name        string `json:"name"`
			Size        int    `json:"size"`
			StderrBytes int    `json:"stderrBytes"`
		}
		if len(req.Params) > 0 {
			json.Unmarshal(req.Params, &p)
		}
		switch req.Method {
		case "echo":
			if len(req.Params) == 0 {
				respond(map[string]any{})
			} else {
				respond(req.Params)
			}
		case "pid":
			respond(map[string]any{"pid": os.Getpid()})
		case "args":
			respond(map[string]any{"args": os.Args[1:]})
		case "getenv":
			v, ok := os.LookupEnv(p.Name)
			respond(map[string]any{"value": v, "set": ok})
		case "sized":
			prefix := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"p":"`
			const suffix = `"}}`
			pad := max(p.Size-len(prefix)-len(suffix), 0)
			writeLine([]byte(prefix + strings.Repeat("x", pad) + suffix))
		case "crash":
			notify("bye", nil)
			os.Stderr.WriteString(strings.Repeat("e", p.StderrBytes) + "\n")
			os.Stderr.WriteString("boom: the server crashed on purpose\n")
			os.Exit(3)
		case "broken":
			writeLine([]byte("a stray print"))
			writeLine([]byte(brokenAnswer(p.Name, string(req.ID))))
		case "ignore":
		}
	}
}
