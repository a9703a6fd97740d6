package client_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWireLogKeysAndLevel: the wire log logs at the level asked for (Info
// here, which a default logger shows), and its attributes survive slog's
// JSON handler: the direction and the message are not lost to slog's own
// "msg" key.
func TestWireLogKeysAndLevel(t *testing.T) {
	for _, tr := range []string{tStdio, tHTTP} {
		for _, era := range allEras {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				var buf syncBuffer
				l := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p), client.WithWireLog(l, slog.LevelInfo))
				if _, err := f.c.ListTools(testCtx(t), ""); err != nil {
					t.Fatal(err)
				}
				f.c.Close()
				dirs := map[string]int{}
				sc := bufio.NewScanner(strings.NewReader(buf.String()))
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					var rec struct {
						Level, Msg, Dir, Message string
					}
					if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
						t.Fatalf("log line %q: %v", sc.Text(), err)
					}
					if rec.Level != "INFO" || rec.Msg != "wire: "+rec.Dir || !json.Valid([]byte(rec.Message)) {
						t.Errorf("log record %s: want level INFO, msg \"wire: <dir>\", dir, and the message as JSON", sc.Text())
					}
					if strings.Contains(rec.Message, `"tools/list"`) || strings.Contains(rec.Message, `"tools":[`) {
						dirs[rec.Dir]++
					}
				}
				if dirs["send"] == 0 || dirs["recv"] == 0 {
					t.Errorf("tools/list seen by direction %v, want both send and recv; log:\n%s", dirs, buf.String())
				}
			})
		}
	}
	// Below the logger's level, nothing.
	var buf syncBuffer
	l := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	f := connect(t, tStdio, testserver.Options{}, client.WithWireLog(l, slog.LevelDebug))
	f.c.Close()
	if buf.String() != "" {
		t.Errorf("debug wire log on an info logger wrote %q", buf.String())
	}
}
