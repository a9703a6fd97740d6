package transport

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"

	sse "github.com/tmaxmax/go-sse"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// event is one server-sent event.
type event struct {
	// Type is the event field; "" when absent.
	Type string
	// Data is the data, multi-line data joined with "\n"; "" for a
	// priming event.
	Data string
	// LastID is the last event id seen so far in the stream.
	LastID string
}

// readEvents parses an event stream with go-sse (multi-line data, CR, LF
// and CRLF line ends, comments, events without an event field) and calls
// fn with every dispatched event until fn returns false. It returns the
// last retry field seen (0 when none) and the read error: nil at the end
// of the stream (an incomplete final event is dropped), a
// [*MessageTooLargeError] for an event over limit bytes, or the error of r.
func readEvents(r io.Reader, limit int, fn func(event) bool) (time.Duration, error) {
	// go-sse's Read does not report the retry field (only its reconnecting
	// Connection uses it, with its own backoff), so a sniffer watches the
	// lines as they pass through to the parser.
	sn := &retrySniffer{r: r}
	var readErr error
	for ev, err := range sse.Read(sn, &sse.ReadConfig{MaxEventSize: limit}) {
		if err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				err = &MessageTooLargeError{Limit: limit}
			}
			readErr = err
			break
		}
		if !fn(event{Type: ev.Type, Data: ev.Data, LastID: ev.LastEventID}) {
			break
		}
	}
	return sn.retry, readErr
}

// decodeEvent returns the JSON-RPC message an event carries, or nil for a
// priming event (empty data), an event of another type than "message", or
// data that is not a JSON-RPC message.
func decodeEvent(ev event) jsonrpc.Message {
	if ev.Data == "" || ev.Type != "" && ev.Type != "message" {
		return nil
	}
	return decodeMessage([]byte(ev.Data))
}

// retrySniffer passes bytes through and remembers the value of the last
// complete "retry" field line.
type retrySniffer struct {
	r      io.Reader
	line   []byte // the current line, up to maxRetryLine bytes
	long   bool   // the current line is longer than maxRetryLine
	prevCR bool   // the previous byte was CR (so a LF completes CRLF)
	retry  time.Duration
}

const maxRetryLine = 32

func (s *retrySniffer) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	for _, c := range p[:n] {
		if c == '\n' && s.prevCR {
			s.prevCR = false
			continue
		}
		s.prevCR = c == '\r'
		if c == '\r' || c == '\n' {
			s.endLine()
			continue
		}
		if len(s.line) < maxRetryLine {
			s.line = append(s.line, c)
		} else {
			s.long = true
		}
	}
	return n, err
}

func (s *retrySniffer) endLine() {
	line, long := s.line, s.long
	s.line, s.long = s.line[:0], false
	v, ok := bytes.CutPrefix(line, []byte("retry:"))
	if long || !ok {
		return
	}
	v = bytes.TrimPrefix(v, []byte(" "))
	if len(v) == 0 {
		return
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return
		}
	}
	if ms, err := strconv.ParseInt(string(v), 10, 64); err == nil && ms <= int64(time.Hour/time.Millisecond) {
		s.retry = time.Duration(ms) * time.Millisecond
	}
}
