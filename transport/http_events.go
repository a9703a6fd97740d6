package transport

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// event is one server-sent event.
type event struct {
	// Type is the event field; "" when absent.
	Type string
	// Data is the data, multi-line data joined with "\n"; empty for a
	// priming event. It is valid only during the callback of readEvents.
	Data []byte
	// LastID is the last event id seen so far in the stream.
	LastID string
	// ID is the event's own id field ("" when it had none, or an empty
	// one): unlike LastID, it names this event alone.
	ID string
	// Owned says the parser drops Data's buffer after the callback (a
	// large event), so that the callback may keep it.
	Owned bool
}

// readEvents parses an event stream by the WHATWG event-stream rules
// (https://html.spec.whatwg.org/multipage/server-sent-events.html): CR,
// LF and CRLF line ends, a leading BOM, comments, multi-line data, id
// (ignored when it holds NUL), retry, events without an event field. It
// calls fn with every dispatched event (an event with a data, event or id
// field, ended by a blank line) until fn returns false. It returns the
// last retry field seen (0 when none) and the read error: nil at the end
// of the stream (an incomplete final event is dropped), a
// [*MessageTooLargeError] for an event over limit bytes, or the error of r.
//
// Every byte is looked at a bounded number of times, however the stream
// is split into reads, so the cost is linear in the bytes received.
func readEvents(r io.Reader, limit int, fn func(event) bool) (time.Duration, error) {
	p := eventParser{br: eventReader(r), limit: limit, fn: fn}
	err := p.run()
	p.br.Reset(nil)
	eventReaders.Put(p.br)
	if errors.Is(err, io.EOF) || errors.Is(err, errStopEvents) {
		err = nil
	}
	return p.retry, err
}

// eventReadSize is the largest line and data buffers the event parser
// keeps between events.
const eventReadSize = 32 << 10

// eventBufSize is the size of the read buffer (small: most events are
// small, and a longer line is gathered across reads); the tests shrink it
// to put line ends on buffer boundaries.
var eventBufSize = 4 << 10

// eventReaders holds the read buffers of finished event streams: every
// POST answered with an event stream reads through one (the parser keeps
// what it hands on in its own buffers, never in this one).
var eventReaders sync.Pool // of *bufio.Reader

// eventReader returns a reader of eventBufSize bytes over r, from
// eventReaders when it holds one of that size.
func eventReader(r io.Reader) *bufio.Reader {
	if br, ok := eventReaders.Get().(*bufio.Reader); ok && br.Size() == eventBufSize {
		br.Reset(r)
		return br
	}
	return bufio.NewReaderSize(r, eventBufSize)
}

// errStopEvents ends the parse when fn returned false.
var errStopEvents = errors.New("transport: stop reading events")

// eventParser is the state of readEvents.
type eventParser struct {
	br    *bufio.Reader
	limit int
	fn    func(event) bool

	line    []byte // the current line while it spans reads
	afterCR bool   // the last line ended with CR: a LF next is its CRLF
	started bool   // the first line was seen (BOM handling)
	size    int    // bytes of the current event so far

	data   []byte // data buffer of the current event, each line + "\n"
	typ    string
	dirty  bool   // the current event has a data, event or id field
	id     string // the current event's id field
	lastID string
	retry  time.Duration
}

// run reads chunks and splits them into lines.
func (p *eventParser) run() error {
	for {
		chunk, err := p.br.ReadSlice('\n')
		if len(chunk) > 0 {
			if perr := p.split(chunk); perr != nil {
				return perr
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// split feeds the lines ended in chunk to field, and keeps the rest.
func (p *eventParser) split(chunk []byte) error {
	if p.afterCR {
		p.afterCR = false
		if chunk[0] == '\n' {
			chunk = chunk[1:]
		}
	}
	for len(chunk) > 0 {
		i := bytes.IndexAny(chunk, "\r\n")
		if i < 0 {
			if err := p.grow(len(chunk)); err != nil {
				return err
			}
			p.line = appendDoubling(p.line, chunk)
			return nil
		}
		if err := p.grow(i + 1); err != nil {
			return err
		}
		line, gathered := chunk[:i], len(p.line) > 0
		if gathered {
			p.line = appendDoubling(p.line, line)
			line = p.line
		}
		if chunk[i] == '\r' {
			if i+1 < len(chunk) {
				if chunk[i+1] == '\n' {
					i++
				}
			} else {
				p.afterCR = true
			}
		}
		chunk = chunk[i+1:]
		err := p.field(line, gathered)
		if cap(p.line) > eventReadSize {
			p.line = nil // nor a long line's
		} else {
			p.line = p.line[:0]
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// appendDoubling appends b to dst, doubling the capacity when it grows
// (append grows large slices by a quarter, which costs four times the
// final size in allocations for a line gathered from many reads).
func appendDoubling(dst, b []byte) []byte {
	if len(dst)+len(b) > cap(dst) {
		dst = slices.Grow(dst, max(len(b), cap(dst)))
	}
	return append(dst, b...)
}

// grow accounts n more bytes to the current event.
func (p *eventParser) grow(n int) error {
	p.size += n
	if p.size > p.limit {
		return &MessageTooLargeError{Limit: p.limit}
	}
	return nil
}

var (
	bom         = []byte("\xEF\xBB\xBF")
	fieldData   = []byte("data")
	fieldEvent  = []byte("event")
	fieldID     = []byte("id")
	fieldRetry  = []byte("retry")
	maxRetryDur = time.Hour
)

// field interprets one line; gathered says it is p.line, whose array a
// first data line may take over instead of copying it.
func (p *eventParser) field(line []byte, gathered bool) error {
	if !p.started {
		p.started = true
		line = bytes.TrimPrefix(line, bom)
	}
	if len(line) == 0 {
		return p.dispatch()
	}
	if line[0] == ':' {
		return nil // a comment
	}
	name, value, found := bytes.Cut(line, []byte{':'})
	if found && len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch {
	case bytes.Equal(name, fieldData):
		if gathered && len(p.data) == 0 && len(value) > eventReadSize {
			// A large first data line: move it to the front of its own
			// array and make that the data buffer.
			n := copy(line, value)
			p.data, p.line = append(line[:n], '\n'), nil
		} else {
			p.data = append(append(p.data, value...), '\n')
		}
		p.dirty = true
	case bytes.Equal(name, fieldEvent):
		p.typ = string(value)
		p.dirty = true
	case bytes.Equal(name, fieldID):
		if bytes.IndexByte(value, 0) < 0 {
			p.lastID = string(value)
			p.id = p.lastID
			p.dirty = true
		}
	case bytes.Equal(name, fieldRetry):
		p.setRetry(value)
	}
	return nil
}

// setRetry applies a retry field: ASCII digits only, in milliseconds, at
// most an hour; anything else is ignored.
func (p *eventParser) setRetry(v []byte) {
	if len(v) == 0 || len(v) > 10 {
		return
	}
	var ms int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return
		}
		ms = ms*10 + int64(c-'0')
	}
	if d := time.Duration(ms) * time.Millisecond; d <= maxRetryDur {
		p.retry = d
	}
}

// dispatch ends the current event at a blank line and hands it to fn.
func (p *eventParser) dispatch() error {
	p.size = 0
	if !p.dirty {
		return nil
	}
	data := p.data
	if len(data) > 0 {
		data = data[:len(data)-1]
	}
	owned := cap(p.data) > eventReadSize
	ok := p.fn(event{Type: p.typ, Data: data, LastID: p.lastID, ID: p.id, Owned: owned})
	p.typ, p.id, p.dirty = "", "", false
	if owned {
		p.data = nil // a large event's buffer is not kept for the stream's life
	} else {
		p.data = p.data[:0]
	}
	if !ok {
		return errStopEvents
	}
	return nil
}

// decodeEvent returns the JSON-RPC message an event carries, or nil for a
// priming event (empty data), an event of another type than "message", or
// data that is not a JSON-RPC message.
func decodeEvent(ev event) jsonrpc.Message {
	m, _ := decodeEventAnswer(ev)
	return m
}

// decodeEventAnswer is decodeEvent that also returns, for data that is not
// a valid message but names the call it answers, its *jsonrpc.DecodeError
// (see answerError).
func decodeEventAnswer(ev event) (jsonrpc.Message, *jsonrpc.DecodeError) {
	if len(ev.Data) == 0 || ev.Type != "" && ev.Type != "message" {
		return nil, nil
	}
	decode := jsonrpc.DecodeMessage
	if ev.Owned {
		// The parser drops this buffer: the message may alias it instead
		// of copying a large result.
		decode = jsonrpc.DecodeMessageOwned
	}
	m, err := decode(ev.Data)
	if err != nil {
		return nil, answerError(err)
	}
	return m, nil
}
