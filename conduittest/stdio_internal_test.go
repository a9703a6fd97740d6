package conduittest

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestRelayRefusesStrangers checks that the stdio relay listener serves
// only a process that presents the token, and bounds what it reads first.
func TestRelayRefusesStrangers(t *testing.T) {
	s := NewServer(t)
	rl, err := s.startRelay()
	if err != nil {
		t.Fatal(err)
	}
	for _, first := range []string{"wrong-token\n", strings.Repeat("x", 1<<20)} {
		c, err := net.Dial("tcp", rl.ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = io.WriteString(c, first+`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n") }()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if b, err := io.ReadAll(c); len(b) != 0 || isTimeout(err) {
			t.Errorf("first line %.20q: read %q, %v; want the connection closed unanswered", first, b, err)
		}
		c.Close()
	}
	// With the token, the same ping is answered.
	c, err := net.Dial("tcp", rl.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, rl.token+"\n"+`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":1`) {
		t.Errorf("with the token: %q, %v", line, err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
