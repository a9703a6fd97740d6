package client_test

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
)

// lines collects what a logger writes, safe for concurrent writes: a
// line a Write, as slog's handlers write each record at once.
type lines struct{ record[string] }

func (l *lines) Write(p []byte) (int, error) {
	l.add(string(p))
	return len(p), nil
}

func (l *lines) String() string { return strings.Join(l.all(), "") }

// TestWireLogKeysAndLevel: the wire log logs at the level asked for (Info
// here, which a default logger shows), and its attributes survive slog's
// JSON handler: the direction and the message are not lost to slog's own
// "msg" key.
func TestWireLogKeysAndLevel(t *testing.T) {
	for _, tr := range []string{tStdio, tHTTP} {
		for _, era := range allEras {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				var buf lines
				l := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p), client.WithWireLog(l, slog.LevelInfo))
				if _, err := f.c.ListTools(testCtx(t), ""); err != nil {
					t.Fatal(err)
				}
				f.c.Close()
				dirs := map[string]int{}
				for _, line := range buf.all() {
					var rec struct {
						Level, Msg, Dir, Message string
					}
					if err := json.Unmarshal([]byte(line), &rec); err != nil {
						t.Fatalf("log line %q: %v", line, err)
					}
					if _, err := jsonrpc.DecodeMessage([]byte(rec.Message)); err != nil || rec.Level != "INFO" || rec.Msg != "wire: "+rec.Dir {
						t.Errorf("log record %s: want level INFO, msg \"wire: <dir>\", dir, and the JSON-RPC message (%v)", line, err)
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
	var buf lines
	l := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	f := connect(t, tStdio, testserver.Options{}, client.WithWireLog(l, slog.LevelDebug))
	f.c.Close()
	if buf.String() != "" {
		t.Errorf("debug wire log on an info logger wrote %q", buf.String())
	}
}

// messageLog records what WithMessageLog reports.
type messageLog struct {
	msgs record[string] // "send server/discover", "recv response", …
}

func (l *messageLog) hook(sent bool, msg jsonrpc.Message) {
	s := "recv "
	if sent {
		s = "send "
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		s += m.Method
	case *jsonrpc.Response:
		s += "response"
	}
	l.msgs.add(s)
}

func (l *messageLog) has(s string) bool { return slices.Contains(l.msgs.all(), s) }

// TestMessageLog: every transport reports the messages of both directions,
// negotiation included.
func TestMessageLog(t *testing.T) {
	matrix(t, func(t *testing.T, tr string, p client.Protocol) {
		var l messageLog
		f := connect(t, tr, testserver.Options{}, client.WithProtocol(p), client.WithMessageLog(l.hook))
		if _, err := f.c.ListTools(testCtx(t), ""); err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		handshake := "send server/discover"
		if p == client.Legacy {
			handshake = "send initialize"
		}
		for _, want := range []string{handshake, "send tools/list", "recv response"} {
			if !l.has(want) {
				t.Errorf("message log lacks %q: %v", want, l.msgs.all())
			}
		}
	})
}

// TestMessageLogMarshalsWireForm: a message from WithMessageLog given to
// json.Marshal (as a program writing its own log does) is the JSON-RPC
// text, not the Go fields.
func TestMessageLogMarshalsWireForm(t *testing.T) {
	var got record[string]
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern), client.WithMessageLog(func(sent bool, msg jsonrpc.Message) {
		b, err := json.Marshal(msg)
		if err != nil {
			b = []byte(err.Error())
		}
		got.add(string(b))
	}))
	if _, err := f.c.ListTools(testCtx(t), ""); err != nil {
		t.Fatal(err)
	}
	var sawList, sawResult bool
	for _, line := range got.all() {
		if !strings.HasPrefix(line, `{"jsonrpc":"2.0",`) {
			t.Errorf("json.Marshal of a logged message = %s, want the wire form", line)
		}
		sawList = sawList || strings.Contains(line, `"method":"tools/list"`)
		sawResult = sawResult || (strings.Contains(line, `"result":{`) && strings.Contains(line, `"tools":[`))
	}
	if !sawList || !sawResult {
		t.Errorf("logged messages %q lack tools/list or its result", got.all())
	}
}

// TestWireLogCut: a message longer than 16 KiB is logged cut to its
// first 16 KiB and "…", on a character boundary (never half of a
// character, which a log would show as U+FFFD or as invalid UTF-8).
func TestWireLogCut(t *testing.T) {
	for _, pad := range []string{"", "x"} { // the cut falls inside an "é" for one of the two
		var buf lines
		l := slog.New(slog.NewJSONHandler(&buf, nil))
		f := connect(t, tPipe, testserver.Options{}, client.WithWireLog(l, slog.LevelInfo))
		text := pad + strings.Repeat("é", 20<<10)
		if _, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": text}); err != nil {
			t.Fatal(err)
		}
		f.c.Close()
		cut := 0
		for _, line := range buf.all() {
			var rec struct{ Dir, Message string }
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			if !strings.Contains(rec.Message, "éééé") {
				continue
			}
			cut++
			body, ok := strings.CutSuffix(rec.Message, "…")
			if !ok || len(body) > 16<<10 || len(body) < 16<<10-3 || strings.ContainsRune(body, utf8.RuneError) {
				t.Errorf("pad %q: %s message logged as %d bytes ending %q, want its first 16 KiB, cut between characters, and \"…\"", pad, rec.Dir, len(rec.Message), rec.Message[max(0, len(rec.Message)-12):])
			}
		}
		if cut < 2 {
			t.Errorf("pad %q: %d long messages logged, want the call and its result", pad, cut)
		}
	}
}
