package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
)

const (
	// defaultMaxLine is the largest message, in bytes, that a stdio,
	// pipe or WebSocket connection accepts when its MaxMessageSize is 0.
	// It equals the HTTP transport's DefaultMaxMessageSize but is kept
	// apart so the two transports do not depend on each other's files.
	defaultMaxLine = 16 << 20
	// lineReaderSize is the size of the read buffer of a line-delimited
	// connection (see [lineReader]). Lines that fit are decoded in place;
	// longer ones are gathered by an [assembler] in pooled chunks. 16 KiB
	// holds the usual message (a call, a result, a notification); on a
	// polled pipe (a stdio server's stdout on Unix) an idle connection
	// holds none of it, elsewhere it lives as long as the connection.
	lineReaderSize = 16 << 10
	// retainBufferLimit is the capacity above which a write buffer that
	// grew for one large message is dropped instead of kept, so that a
	// single 16 MiB message does not pin 16 MiB for the connection's life.
	// (Read buffers are pooled pieces; see [assembler].)
	retainBufferLimit = 1 << 20
	// readAhead is how many decoded messages the reader goroutine may queue
	// before Read takes them.
	readAhead = 8
	// logPreview is how much of a skipped line is logged.
	logPreview = 200
)

// discardSlog is the logger used when a transport's Logger is nil.
var discardSlog = slog.New(slog.DiscardHandler)

func loggerOrDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return discardSlog
	}
	return l
}

func maxOrDefault(n int) int {
	if n <= 0 {
		return defaultMaxLine
	}
	return n
}

// writeDeadliner is implemented by writers whose blocked Write can be
// interrupted (*os.File pipes, net.Conn). lineConn uses it to make a
// cancelled context end a blocked Write.
type writeDeadliner interface {
	SetWriteDeadline(t time.Time) error
}

// lineConn is the newline-delimited JSON framing shared by [Stdio] and
// [Pipe]: one compact JSON-RPC message per line in both directions.
//
// One reader goroutine (readLoop) owns the input: it reads lines, decodes
// them and queues the messages on msgs, so that Read can honour its context
// without abandoning a half-read line. Writes are serialized by a channel
// lock so that a Write waiting for its turn can give up when its context
// ends.
type lineConn struct {
	kind   string
	logger *slog.Logger

	// Reader side, owned by the reader goroutine.
	br    *lineReader
	max   int
	long  assembler // gathers lines longer than br's buffer
	begun bool      // the stream's first bytes were read (its byte order mark dropped)

	inbox

	// Writer side.
	w  io.Writer
	dl writeDeadliner // w as a writeDeadliner, or nil
	// wlock is a channel lock (x/net "gate" style): holding it means
	// having put the token in. A channel, not a mutex, so that a Write
	// waiting for its turn can select on its context.
	wlock chan struct{}
	wbuf  []byte // guarded by wlock; reused encoding buffer
	werr  error  // guarded by wlock; once set, every Write fails with it

	// dlmu guards the deadline hand-off between a Write and the
	// context.AfterFunc that interrupts it: wgen identifies the current
	// write, writing says whether it is still in progress, dlSet whether
	// the callback set a deadline that must be cleared.
	dlmu    sync.Mutex
	wgen    uint64
	writing bool
	dlSet   bool

	// errs maps the errors that end the connection (the owner's, such as
	// a stdio server's exit); nil maps both with closedBy. An interface,
	// not two func fields, so that setting it allocates nothing.
	errs lineErrs
}

// lineErrs maps the errors that end a lineConn.
type lineErrs interface {
	// finishRead maps the error that ended the read loop to the error
	// Read reports from then on. It runs on the reader goroutine; it
	// must return when closing is closed.
	finishRead(err error) error
	// mapWriteErr maps a failed write to the error Write reports.
	mapWriteErr(err error) error
}

func newLineConn(kind string, r io.Reader, w io.Writer, maxSize int, logger *slog.Logger) *lineConn {
	return newLineConnIdle(kind, r, nil, w, maxSize, logger)
}

// newLineConnIdle is newLineConn reading r through idle, when not nil (see
// lineReader).
func newLineConnIdle(kind string, r io.Reader, idle idleSource, w io.Writer, maxSize int, logger *slog.Logger) *lineConn {
	maxSize = maxOrDefault(maxSize)
	// The buffer holds a line of maxSize and its "\r\n" when that fits;
	// min first, so that a maxSize near the largest int cannot wrap.
	size := min(lineReaderSize-2, maxSize) + 2
	c := &lineConn{
		kind:   kind,
		logger: loggerOrDiscard(logger),
		br:     newLineReader(r, size, idle),
		max:    maxSize,
		inbox:  newInbox(),
		w:      w,
		wlock:  make(chan struct{}, 1),
	}
	c.dl, _ = w.(writeDeadliner)
	return c
}

// closedBy wraps the error that ended a connection so that it matches
// [ErrClosed]; a [*MessageTooLargeError] is returned as it is.
func closedBy(err error) error {
	if _, ok := errors.AsType[*MessageTooLargeError](err); ok {
		return err
	}
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: the peer closed the stream", ErrClosed)
	}
	return fmt.Errorf("%w: %v", ErrClosed, err)
}

// Kind implements [Kinder].
func (c *lineConn) Kind() string { return c.kind }

// readLoop is the reader goroutine.
func (c *lineConn) readLoop() {
	err := c.readMessages()
	select {
	case <-c.closing:
		c.readErr = ErrClosed
	default:
		if c.errs != nil {
			c.readErr = c.errs.finishRead(err)
		} else {
			c.readErr = closedBy(err)
		}
	}
	close(c.readDone)
	if _, ok := errors.AsType[*MessageTooLargeError](err); ok {
		// Nothing more can be framed, but the peer may still be
		// writing: discard its output so it never blocks on a full
		// pipe and can still shut down when asked to. This ends at
		// end of stream, which Close brings.
		io.Copy(io.Discard, c.br)
	}
}

// readMessages reads and queues messages until the stream fails or the
// connection is closing.
func (c *lineConn) readMessages() error {
	for {
		line, owned, err := c.readLine()
		if err != nil {
			return err
		}
		if jsonrpc.IsBatch(line) {
			if !c.deliverAll(batchInbound(line, c.logger, c.kind)) {
				return ErrClosed
			}
			continue
		}
		msg, broken := c.decode(line, owned)
		switch {
		case msg != nil:
			if !c.deliver(msg) {
				return ErrClosed
			}
		case broken != nil:
			if !c.deliverBroken(broken) {
				return ErrClosed
			}
		}
	}
}

// readLine returns the next line without its line ending. A line that fits
// in the reader's buffer is returned in place (owned false): the slice is
// valid until the next call. A longer one is gathered in pooled pieces and
// returned in a new slice of its exact length, which the caller owns
// (owned true). A line longer than c.max fails with a
// [*MessageTooLargeError] after at most c.max+1 bytes were gathered. A
// last line without a newline is returned at end of input. A UTF-8 byte
// order mark that starts the stream is dropped: some Windows programs
// write one before their first line, which is not JSON with it.
func (c *lineConn) readLine() ([]byte, bool, error) {
	for {
		frag, err := c.br.readSlice()
		if !c.begun {
			c.begun = true
			frag = bytes.TrimPrefix(frag, bom)
		}
		switch {
		case err == nil:
			frag = frag[:len(frag)-1]
		case errors.Is(err, bufio.ErrBufferFull):
			// One more byte than the limit may be a '\r' before the
			// newline; anything beyond that is too large. (Written
			// as a subtraction: c.max+1 wraps for a limit of the
			// largest int.)
			if c.long.len()+len(frag)-1 > c.max {
				c.long.reset()
				return nil, false, &MessageTooLargeError{Limit: c.max}
			}
			c.long.write(frag)
			continue
		case c.long.len()+len(frag) == 0:
			return nil, false, err
		}
		// A whole line, or a last line without a newline: deliver it;
		// at end of input, the next call sees the error again.
		line, owned := frag, false
		if c.long.len() > 0 {
			if c.long.len()+len(frag)-1 > c.max {
				c.long.reset()
				return nil, false, &MessageTooLargeError{Limit: c.max}
			}
			line, owned = c.long.bytes(frag), true
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) > c.max {
			return nil, false, &MessageTooLargeError{Limit: c.max}
		}
		return line, owned, nil
	}
}

// decode decodes one line; owned says the line is the caller's to give
// away (see readLine), so the message may keep it instead of copying its
// raw members. Blank lines are skipped silently; lines that are not JSON
// (banners, stray prints) and JSON that is not a JSON-RPC message are
// logged and skipped: servers that write noise to stdout keep working.
// The exception is an object that names the call it answers but is not a
// valid message: its error is returned (broken), for Read.
func (c *lineConn) decode(line []byte, owned bool) (msg jsonrpc.Message, broken *jsonrpc.DecodeError) {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, nil
	}
	var err error
	if owned {
		msg, err = jsonrpc.DecodeMessageOwned(line)
	} else {
		msg, err = jsonrpc.DecodeMessage(line)
	}
	if err == nil {
		return msg, nil
	}
	if de := answerError(err); de != nil {
		c.logger.Warn("transport: a malformed answer", "kind", c.kind, "id", de.ID, "err", err)
		return nil, de
	}
	if c.logger.Enabled(context.Background(), slog.LevelWarn) {
		preview := line[:min(len(line), logPreview)]
		if errors.Is(err, jsonrpc.ErrParse) {
			c.logger.Warn("transport: skipping a line that is not JSON", "kind", c.kind, "line", string(preview))
		} else {
			c.logger.Warn("transport: skipping JSON that is not a JSON-RPC message", "kind", c.kind, "err", err, "line", string(preview))
		}
	}
	return nil, nil
}

// answerError returns err as a *jsonrpc.DecodeError when it names the id
// of the call the broken message answers, or nil.
func answerError(err error) *jsonrpc.DecodeError {
	if de, ok := errors.AsType[*jsonrpc.DecodeError](err); ok && de.ID.IsValid() {
		return de
	}
	return nil
}

// Write implements [Conn]. ctx bounds the wait for the write lock and the
// write itself. A write cancelled after part of the line went out leaves
// the stream unusable: every later Write fails with an error matching
// [ErrClosed]. A write that fails matches ErrClosed too: when all of the
// message but perhaps its newline had left, as a [*NetworkError] (the
// peer may have it); otherwise without one (no whole message left).
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case c.wlock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closing:
		return ErrClosed
	}
	defer func() { <-c.wlock }()
	if c.werr != nil {
		return c.werr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.AppendMessage(c.wbuf[:0], msg)
	if err != nil {
		return fmt.Errorf("transport: encoding message: %w", err)
	}
	if bytes.IndexByte(b, '\n') >= 0 {
		// Only invalid raw params or results can carry a newline
		// through the compact encoder; it would split the message.
		return fmt.Errorf("transport: encoding message: %w", &jsonrpc.DecodeError{Reason: "raw JSON member is invalid and contains a newline"})
	}
	b = append(b, '\n')
	n, err := c.write(ctx, b)
	if cap(b) <= retainBufferLimit {
		c.wbuf = b
	} else {
		c.wbuf = nil
	}
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		if n > 0 {
			c.werr = fmt.Errorf("%w: a cancelled write left a partial message on the stream", ErrClosed)
		}
		return ctxErr
	}
	select {
	case <-c.closing:
		c.werr = ErrClosed
	default:
		if c.errs != nil {
			c.werr = c.errs.mapWriteErr(err)
		} else {
			c.werr = closedBy(err)
		}
	}
	if n >= len(b)-1 {
		// All of the message but perhaps its newline left: a server
		// that decodes JSON as it arrives may have it. A shorter part
		// is not a message, and later Writes send nothing.
		return &NetworkError{Op: "write", URL: c.kind, Err: c.werr}
	}
	return c.werr
}

// pastTime is a deadline that has already passed.
var pastTime = time.Unix(1, 0)

// write writes b, interrupting the write when ctx ends if the writer
// supports deadlines. Called with wlock held.
func (c *lineConn) write(ctx context.Context, b []byte) (int, error) {
	if c.dl == nil || ctx.Done() == nil {
		return c.w.Write(b)
	}
	c.dlmu.Lock()
	c.wgen++
	gen := c.wgen
	c.writing = true
	c.dlmu.Unlock()
	// The callback may run late, after this write finished and another
	// began; the generation check keeps it from touching that one.
	stop := context.AfterFunc(ctx, func() {
		c.dlmu.Lock()
		defer c.dlmu.Unlock()
		if c.writing && c.wgen == gen {
			c.dl.SetWriteDeadline(pastTime)
			c.dlSet = true
		}
	})
	n, err := c.w.Write(b)
	stop()
	c.dlmu.Lock()
	c.writing = false
	if c.dlSet {
		c.dl.SetWriteDeadline(time.Time{})
		c.dlSet = false
	}
	c.dlmu.Unlock()
	return n, err
}

// inbox hands messages from a connection's reader goroutine to Read, and
// holds the connection's closing signal. It is shared by the
// line-delimited connections and the WebSocket connection.
type inbox struct {
	// msgs carries decoded messages, and the non-terminal errors of
	// broken answers (see deliverBroken), from the reader goroutine to
	// Read. It is buffered (read-ahead); the reader blocks on it when Read
	// lags, which is the back-pressure on the peer.
	msgs chan inbound
	// readDone is closed by the reader goroutine when it ends; readErr is
	// written before, so it may be read by anyone who saw readDone closed.
	readDone chan struct{}
	readErr  error

	// closing is closed once by beginClose. It wakes a reader goroutine
	// blocked on msgs and Writes waiting for their turn.
	closing   chan struct{}
	closeOnce sync.Once
}

func newInbox() inbox {
	return inbox{
		msgs:     make(chan inbound, readAhead),
		readDone: make(chan struct{}),
		closing:  make(chan struct{}),
	}
}

// beginClose marks the connection closed. The owner then closes the
// underlying streams and waits for readDone.
func (b *inbox) beginClose() {
	b.closeOnce.Do(func() { close(b.closing) })
}

// deliver queues msg for Read. It reports false when the connection is
// closing instead.
func (b *inbox) deliver(msg jsonrpc.Message) bool { return b.put(inbound{msg: msg}) }

// deliverBroken queues for Read the *jsonrpc.DecodeError of a message that
// names the call it answers (its ID is valid): Read returns it as a
// non-terminal error, so that the caller waiting for that id fails at once
// instead of at its deadline. It reports false when the connection is
// closing.
func (b *inbox) deliverBroken(de *jsonrpc.DecodeError) bool { return b.put(inbound{err: de}) }

func (b *inbox) put(in inbound) bool {
	select {
	case b.msgs <- in:
		return true
	case <-b.closing:
		return false
	}
}

// Read implements [Conn]. Messages read before the connection ended are
// delivered before its error; after Close it returns [ErrClosed]. A
// [*jsonrpc.DecodeError] whose ID is valid is not terminal: it reports an
// answer to that id that is not a valid message, and Read may be called
// again.
func (b *inbox) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-b.closing:
		return nil, ErrClosed
	case in := <-b.msgs:
		return in.msg, in.err
	default:
	}
	select {
	case in := <-b.msgs:
		return in.msg, in.err
	case <-b.readDone:
		// The reader queued everything it read before it ended.
		select {
		case in := <-b.msgs:
			return in.msg, in.err
		default:
		}
		return nil, b.readErr
	case <-b.closing:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
