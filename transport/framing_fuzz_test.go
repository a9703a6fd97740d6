package transport

import (
	"bytes"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/google/go-cmp/cmp"
)

// referenceFraming reads a line-delimited stream the plain way the rules
// of lineConn.readLine and readMessages read: a UTF-8 byte order mark
// that starts the stream dropped, split at every LF, one CR before it
// dropped, a last line without LF read too; a line over max
// bytes ends the stream with a *MessageTooLargeError; the rest is decoded
// as readMessages decodes it. Each result is what Read returns, as text.
func referenceFraming(in []byte, max int) (reads []string, tooLarge bool) {
	in = bytes.TrimPrefix(in, bom)
	for len(in) > 0 {
		line := in
		in = nil
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, in = line[:i], line[i+1:]
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) > max {
			return reads, true
		}
		if jsonrpc.IsBatch(line) {
			for _, x := range batchInbound(line, discardSlog, "test") {
				reads = append(reads, readText(x.msg, x.err))
			}
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		m, err := jsonrpc.DecodeMessage(line)
		switch {
		case err == nil:
			reads = append(reads, readText(m, nil))
		case answerError(err) != nil:
			reads = append(reads, readText(nil, answerError(err)))
		}
	}
	return reads, false
}

func readText(m jsonrpc.Message, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	b, _ := jsonrpc.EncodeMessage(m)
	return string(b)
}

// FuzzLineFraming holds a line-delimited connection (a Pipe, whose reader
// is the one stdio's falls back to) to referenceFraming: the server's
// bytes, written in pieces of any size, under a limit small enough that
// its read buffer (limit+2 bytes) splits lines and long lines are
// gathered, must read as the model reads them, then end with ErrClosed,
// or with a *MessageTooLargeError where the model has a line over the
// limit.
func FuzzLineFraming(f *testing.F) {
	note := `{"jsonrpc":"2.0","method":"n","params":{"p":"xxxxxxxxxx"}}`
	for _, s := range []string{
		note + "\n" + note + "\r\n",
		"\n\r\n  \nhello\n" + `{"x":1}` + "\n[1]\n" + note,
		`[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":1,"result":{}},{"id":2,"result":1}]` + "\n",
		`{"jsonrpc":"2.0","id":7,"result":1,"error":{}}` + "\r\n" + note + "\r",
		"\xEF\xBB\xBF" + note + "\n\xEF\xBB\xBF" + note + "\n",
	} {
		f.Add([]byte(s), uint8(len(note)), uint8(5))
		f.Add([]byte(s), uint8(len(note)-1), uint8(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, limit, piece uint8) {
		max := 1 + int(limit)
		want, wantTooLarge := referenceFraming(in, max)
		p, server := NewPipe()
		p.MaxMessageSize = max
		p.Logger = slog.New(slog.DiscardHandler)
		var wg sync.WaitGroup
		wg.Go(func() {
			defer server.Close()
			for rest := in; len(rest) > 0; {
				n := min(len(rest), 1+int(piece))
				if _, err := server.Write(rest[:n]); err != nil {
					return // the connection ended: a line over the limit
				}
				rest = rest[n:]
			}
		})
		defer wg.Wait()
		c, err := p.Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var got []string
		for {
			m, err := c.Read(t.Context())
			if err != nil {
				if _, ok := errors.AsType[*jsonrpc.DecodeError](err); ok {
					got = append(got, readText(nil, err))
					continue
				}
				_, tooLarge := errors.AsType[*MessageTooLargeError](err)
				if !tooLarge && !errors.Is(err, ErrClosed) {
					t.Fatalf("Read() error %T %v, want ErrClosed or *MessageTooLargeError", err, err)
				}
				if tooLarge != wantTooLarge {
					t.Errorf("Read() ended with %v; a line over the limit of %d: %v", err, max, wantTooLarge)
				}
				break
			}
			got = append(got, readText(m, nil))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("input %q, limit %d, pieces of %d: reads (-model +got):\n%s", in, max, 1+int(piece), diff)
		}
	})
}
