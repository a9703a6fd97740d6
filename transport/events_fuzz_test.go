package transport

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// referenceEvents parses a whole event stream line by line, the plain way
// the rules readEvents documents read (the WHATWG event-stream rules, with
// its dispatch of any event that had a data, event or id field and its
// bounds on retry). It is the model FuzzReadEvents holds readEvents to.
// ids holds each event's own id field ("" for none), as event.ID.
func referenceEvents(in []byte) (evs []parsedEvent, ids []string, retry time.Duration) {
	in = bytes.TrimPrefix(in, bom)
	var (
		data   []string
		typ    string
		lastID string
		id     string
		dirty  bool
	)
	for {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			return evs, ids, retry // an unended line, and the event it is in, are dropped
		}
		line := string(in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
		if line == "" {
			if dirty {
				evs = append(evs, parsedEvent{Type: typ, Data: joinLines(data), LastID: lastID})
				ids = append(ids, id)
			}
			data, typ, id, dirty = nil, "", "", false
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value := line, ""
		if j := bytes.IndexByte([]byte(line), ':'); j >= 0 {
			name, value = line[:j], line[j+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch name {
		case "data":
			data, dirty = append(data, value), true
		case "event":
			typ, dirty = value, true
		case "id":
			if !bytes.Contains([]byte(value), []byte{0}) {
				lastID, id, dirty = value, value, true
			}
		case "retry":
			if ms, ok := digits(value); ok && ms <= int64(time.Hour/time.Millisecond) {
				retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

func joinLines(lines []string) string {
	var b bytes.Buffer
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	return b.String()
}

// digits reads s as a number of at most ten ASCII digits.
func digits(s string) (int64, bool) {
	if s == "" || len(s) > 10 {
		return 0, false
	}
	var n int64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// FuzzReadEvents holds readEvents to referenceEvents on any stream, cut
// into reads of any size, through a read buffer small enough to put line
// ends, a CR before its LF and the BOM on its boundaries: the same events
// and retry with no limit in the way, and under a small limit either the
// same or a *MessageTooLargeError after a prefix of them — never a
// panic or another error.
func FuzzReadEvents(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n",
		"\xEF\xBB\xBFid: 1\r\ndata: a\r\ndata:b\r\r: c\nevent: x\n\n",
		"retry: 1500\nid: p0\n\nid: a\x00b\ndata\n\nfoo:bar\ndata: tail",
		"data: a\r",
		"\r\n\r\n\n\r",
	} {
		f.Add([]byte(s), uint8(3), uint8(16))
	}
	// A CRLF cut by the 16-byte read buffer between its CR and LF.
	f.Add([]byte("data: 123456789\r\ndata: b\r\n\r\n"), uint8(255), uint8(0))
	defer func(n int) { eventBufSize = n }(eventBufSize)
	f.Fuzz(func(t *testing.T, in []byte, readSize, bufSize uint8) {
		eventBufSize = 16 + int(bufSize) // bufio's smallest, and up
		want, wantIDs, wantRetry := referenceEvents(in)
		got, retry, err := parseAll(t, string(in), len(in)+1, 1+int(readSize))
		if err != nil {
			t.Fatalf("error %v with no limit in the way", err)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" || retry != wantRetry {
			t.Fatalf("input %q, reads of %d, buffer %d: retry %v (want %v), events (-want +got):\n%s",
				in, 1+int(readSize), eventBufSize, retry, wantRetry, diff)
		}
		var ids []string
		_, _ = readEvents(&trickleReader{b: in, n: 1 + int(readSize)}, len(in)+1, func(ev event) bool {
			ids = append(ids, ev.ID)
			return true
		})
		if diff := cmp.Diff(wantIDs, ids, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("input %q: the events' own ids (-want +got):\n%s", in, diff)
		}
		limit := 1 + len(in)/3
		got, _, err = parseAll(t, string(in), limit, 1+int(readSize))
		if err != nil {
			if _, ok := errors.AsType[*MessageTooLargeError](err); !ok {
				t.Fatalf("under a limit of %d: error %T %v, want a *MessageTooLargeError", limit, err, err)
			}
		}
		if len(got) > len(want) || cmp.Diff(want[:len(got)], got, cmpopts.EquateEmpty()) != "" {
			t.Fatalf("under a limit of %d: events %q are not a prefix of %q", limit, got, want)
		}
		if err == nil && len(got) != len(want) {
			t.Fatalf("under a limit of %d: %d events and no error, want %d", limit, len(got), len(want))
		}
	})
}
