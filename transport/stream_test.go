package transport_test

import (
	"context"
	"errors"
	"net"
	"strings"
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
