package transport_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// TestStreamConnect: a Stream frames newline-delimited JSON over the
// caller's byte stream both ways; its Dial's failure is a
// *NetworkError; NewStream connects once; a zero Stream fails.
func TestStreamConnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, server := net.Pipe()
	s := transport.NewStream(client)
	conn, err := s.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if k := conn.(transport.Kinder).Kind(); k != transport.KindStream || transport.ClassOf(conn) != transport.ClassHTTP {
		t.Errorf("kind %q class %v, want stream of the HTTP class", k, transport.ClassOf(conn))
	}
	go func() {
		buf := make([]byte, 4096)
		n, _ := server.Read(buf)
		if !strings.Contains(string(buf[:n]), `"method":"ping"`) || buf[n-1] != '\n' {
			server.Write([]byte("not what was sent\n"))
			return
		}
		server.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	}()
	req, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "ping", nil)
	if err := conn.Write(ctx, req); err != nil {
		t.Fatal(err)
	}
	m, err := conn.Read(ctx)
	if resp, ok := m.(*jsonrpc.Response); err != nil || !ok || resp.ID != jsonrpc.Int64ID(1) {
		t.Errorf("Read = %v, %v; want the response to 1", m, err)
	}
	conn.Close()
	server.Close()
	if _, err := s.Connect(ctx); err == nil {
		t.Error("a second Connect of NewStream succeeded")
	}
	_, err = transport.DialStream("unix", "/nonexistent/conduit-test.sock").Connect(ctx)
	var ne *transport.NetworkError
	if !errors.As(err, &ne) || ne.Op != "dial" {
		t.Errorf("DialStream to nothing = %v, want a *NetworkError", err)
	}
	if _, err := (&transport.Stream{}).Connect(ctx); err == nil {
		t.Error("a zero Stream connected")
	}
}

// cutWriter is a byte stream whose Write takes keep bytes of the first
// message and then fails, as a pipe whose reader went away mid-message.
type cutWriter struct {
	keep   func(n int) int // of a message of n bytes, how many get through
	closed chan struct{}
	once   sync.Once
}

func (w *cutWriter) Read(p []byte) (int, error) {
	<-w.closed
	return 0, io.EOF
}

func (w *cutWriter) Close() error {
	w.once.Do(func() { close(w.closed) })
	return nil
}

func (w *cutWriter) Write(p []byte) (int, error) {
	return w.keep(len(p)), errors.New("test: broken pipe")
}

// TestStreamWriteCut: a write that fails says whether the peer may have
// the message. With all of it but its newline through, a peer that
// decodes JSON as it arrives has it: the error is a *NetworkError (may
// have been delivered). With less through, no message left: the error
// matches ErrClosed and wraps no *NetworkError, and so does every later
// Write's.
func TestStreamWriteCut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tests := []struct {
		name      string
		keep      func(n int) int
		delivered bool
	}{
		{"all-but-newline", func(n int) int { return n - 1 }, true},
		{"half", func(n int) int { return n / 2 }, false},
		{"nothing", func(int) int { return 0 }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := transport.NewStream(&cutWriter{keep: tt.keep, closed: make(chan struct{})}).Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			req, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "tools/call", map[string]any{"name": "charge"})
			err = conn.Write(ctx, req)
			_, isNet := errors.AsType[*transport.NetworkError](err)
			if !errors.Is(err, transport.ErrClosed) || isNet != tt.delivered {
				t.Fatalf("Write = %v; a *NetworkError: %v, want %v (and ErrClosed)", err, isNet, tt.delivered)
			}
			err = conn.Write(ctx, req)
			if _, ok := errors.AsType[*transport.NetworkError](err); ok || !errors.Is(err, transport.ErrClosed) {
				t.Errorf("a later Write = %v, want ErrClosed and no *NetworkError", err)
			}
		})
	}
}
