package conduittest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/transport"
)

// envRelay carries "ADDR TOKEN" to a re-executed test binary: it then
// relays its stdin and stdout to the Server in the parent process.
const envRelay = "CONDUITTEST_STDIO_RELAY"

// mainHooked is set by Main: the test binary can serve as a stdio server.
var mainHooked atomic.Bool

// Main is the TestMain hook that lets [Server.Command] spawn the test
// binary itself as a stdio MCP server:
//
//	func TestMain(m *testing.M) { conduittest.Main(m) }
//
// It is [ServeIfSpawned] followed by os.Exit(m.Run()).
func Main(m *testing.M) {
	ServeIfSpawned()
	os.Exit(m.Run())
}

// ServeIfSpawned is the first half of [Main], for a TestMain that runs its
// tests another way (goleak.VerifyTestMain, setup code):
//
//	func TestMain(m *testing.M) {
//		conduittest.ServeIfSpawned()
//		goleak.VerifyTestMain(m)
//	}
//
// In a process started by [Server.Command] it relays stdin and stdout to
// the Server of the test that spawned it and exits when the connection
// ends; otherwise it returns at once and enables Server.Command.
func ServeIfSpawned() {
	if v := os.Getenv(envRelay); v != "" {
		os.Exit(runRelay(v, os.Stdin, os.Stdout))
	}
	mainHooked.Store(true)
}

// runRelay connects to the parent's relay listener and copies stdin to it
// and it to stdout until both directions end.
func runRelay(v string, in io.Reader, out io.Writer) int {
	addr, token, _ := strings.Cut(v, " ")
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, "conduittest: stdio relay:", err)
		return 1
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, token+"\n"); err != nil {
		return 1
	}
	var inDone atomic.Bool
	go func() {
		_, _ = io.Copy(conn, in)
		inDone.Store(true)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite() // the server sees the end of stdin
		}
	}()
	_, _ = io.Copy(out, conn) // ends when the server ends the stream
	if !inDone.Load() {
		// The server ended first ([FaultExit], or the Server closed):
		// exit as a crashing server does.
		return 3
	}
	return 0
}

// Command returns a transport that starts a new process for each
// connection: the test binary itself, serving this Server on its stdin and
// stdout. Everything the process receives reaches this Server (recording,
// faults, notifications), and [FaultExit] makes the process exit. It needs
// the [Main] or [ServeIfSpawned] hook in the package's TestMain; without
// it the test fails.
// Servers made by [New] outside tests cannot use it.
func (s *Server) Command(tb testing.TB) *transport.Stdio {
	tb.Helper()
	if !mainHooked.Load() {
		tb.Fatal("conduittest: Server.Command needs conduittest.Main (or ServeIfSpawned) in the TestMain of this package")
	}
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	rl, err := s.startRelay()
	if err != nil {
		tb.Fatal(err)
	}
	return &transport.Stdio{
		Path: exe,
		Args: []string{"-test.run=^$"},
		Env:  []string{envRelay + "=" + rl.ln.Addr().String() + " " + rl.token},
	}
}

// relay accepts the connections of relaying processes and serves each.
type relay struct {
	ln    net.Listener
	token string
	done  sync.WaitGroup
}

func (s *Server) startRelay() (*relay, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.relay != nil {
		return s.relay, nil
	}
	if s.conns.isClosed() {
		return nil, transport.ErrClosed
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	rl := &relay{ln: ln, token: hex.EncodeToString(b)}
	s.relay = rl
	rl.done.Add(1)
	go func() {
		defer rl.done.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.acceptRelayed(rl, c)
		}
	}()
	return rl, nil
}

// acceptRelayed checks the token a relaying process sends first, then
// serves the rest of its connection.
func (s *Server) acceptRelayed(rl *relay, c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	line, err := br.ReadSlice('\n') // at most the reader's 4 KiB
	_ = c.SetReadDeadline(time.Time{})
	if err != nil || strings.TrimSpace(string(line)) != rl.token || s.isDown() {
		// A server that is down: the process exits at once, as one
		// whose binary cannot start does.
		c.Close()
		return
	}
	s.serve(&bufferedConn{Conn: c, r: br}, c)
}

// bufferedConn reads through the reader that consumed the token line.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

func (rl *relay) close() {
	rl.ln.Close()
	rl.done.Wait()
}
