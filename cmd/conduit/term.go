package main

import (
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/width"
)

// Everything conduit prints may hold text a server chose: tool names and
// descriptions, server info, instructions, results, resources, progress
// and log messages, error messages. A terminal acts on some characters
// instead of showing them: escape sequences (an OSC 52 clipboard write, a
// screen clear), a carriage return that draws over the line, C1 controls
// and bidi overrides that reorder what is shown. Conduit's standard
// streams are wrapped in a [termWriter] that shows each such character as
// an escape (\x1b, \r, \u202e), on a terminal or not. --json output
// escapes them itself first ([appendJSONSafe]): a JSON string may hold a
// DEL, a C1 control or a bidi override as it is, and the termWriter's
// "\x7f" is no JSON escape.

// termUnsafe reports whether a terminal would act on r rather than show
// it: a control character other than newline and tab, DEL, a C1 control,
// or a bidi embedding, override or isolate.
func termUnsafe(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// appendTermSafe appends p to dst with each character [termUnsafe] finds,
// and each byte that is not UTF-8, written as an escape. A carriage
// return right before a newline is kept. It returns the bytes of p left
// over: the start of a UTF-8 sequence that p cuts off.
func appendTermSafe(dst, p []byte) (out, rest []byte) {
	for len(p) > 0 {
		r, n := utf8.DecodeRune(p)
		switch {
		case r == utf8.RuneError && n <= 1:
			if !utf8.FullRune(p) {
				return dst, p
			}
			dst = fmt.Appendf(dst, `\x%02x`, p[0])
		case r == '\r' && len(p) > 1 && p[1] == '\n':
			dst = append(dst, '\r')
		case r == '\r':
			dst = append(dst, `\r`...)
		case !termUnsafe(r):
			dst = append(dst, p[:n]...)
		case r < 0x80:
			dst = fmt.Appendf(dst, `\x%02x`, r)
		default:
			dst = fmt.Appendf(dst, `\u%04x`, r)
		}
		p = p[n:]
	}
	return dst, nil
}

// appendJSONSafe appends the JSON text p to dst with each character
// [termUnsafe] finds from DEL up (DEL, C1 controls, bidi
// characters), which JSON holds only inside strings, written as a JSON
// escape (\u007f), and each byte that is not UTF-8 (a raw JSON value
// keeps them) as \ufffd, as encoding/json writes them in strings. The
// result is valid JSON that decodes to the same values, and holds nothing
// a terminal would act on: the C0 controls JSON allows are whitespace
// between tokens.
func appendJSONSafe(dst, p []byte) []byte {
	for len(p) > 0 {
		r, n := utf8.DecodeRune(p)
		switch {
		case r == utf8.RuneError && n <= 1:
			dst = append(dst, `\ufffd`...)
		case r >= 0x7f && termUnsafe(r):
			dst = fmt.Appendf(dst, `\u%04x`, r)
		default:
			dst = append(dst, p[:n]...)
		}
		p = p[n:]
	}
	return dst
}

// termSafe returns s with the characters a terminal would act on written
// as escapes (see [appendTermSafe]).
func termSafe(s string) string {
	for _, r := range s {
		if termUnsafe(r) || r == utf8.RuneError {
			out, rest := appendTermSafe(nil, []byte(s))
			return string(appendBytes(out, rest))
		}
	}
	return s
}

// appendBytes appends each byte of p as an escape: a cut-off UTF-8
// sequence that no more input will complete.
func appendBytes(dst, p []byte) []byte {
	for _, b := range p {
		dst = fmt.Appendf(dst, `\x%02x`, b)
	}
	return dst
}

// termWriter writes to w with the characters a terminal would act on
// written as escapes. A UTF-8 sequence cut off at the end of a Write is
// held until the next one. It is safe for concurrent use.
type termWriter struct {
	mu   sync.Mutex
	w    io.Writer
	rest []byte // guarded by mu; a cut-off UTF-8 sequence
	buf  []byte // guarded by mu; reused output buffer
}

func newTermWriter(w io.Writer) *termWriter { return &termWriter{w: w} }

func (t *termWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in := p
	if len(t.rest) > 0 {
		in = append(t.rest, p...)
	}
	t.buf, t.rest = appendTermSafe(t.buf[:0], in)
	t.rest = append([]byte(nil), t.rest...)
	if _, err := t.w.Write(t.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// control writes s as it is: conduit's own escape sequences (the live
// progress bar's "\r\x1b[K"). A held cut-off sequence is written first,
// as escaped bytes.
func (t *termWriter) control(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(appendBytes(t.buf[:0], t.rest), s...)
	t.rest = nil
	t.w.Write(t.buf)
}

// writeControl writes conduit's own escape sequence s to w, past the
// escaping of a [termWriter].
func writeControl(w io.Writer, s string) {
	if t, ok := w.(*termWriter); ok {
		t.control(s)
		return
	}
	io.WriteString(w, s)
}

// defaultColumns is the width a live line fits when the terminal's is not
// known.
const defaultColumns = 80

// fitLine returns s, a line with what a terminal would act on escaped
// ([termSafe]), cut with "…" to fit a terminal as many columns wide as
// cols returns (defaultColumns when cols is nil or returns 0 or less),
// its last column left free. A
// live line is redrawn with "\r" and an erase of the line: both reach
// only the last row of a line that wrapped, so each redraw of a line
// wider than the terminal would leave the rows above it on the screen.
func fitLine(s string, cols func() int) string {
	n := 0
	if cols != nil {
		n = cols()
	}
	if n <= 0 {
		n = defaultColumns
	}
	room := n - 1
	w, cut := 0, -1 // cut: where "…" fits, once the line is full
	for i, r := range s {
		w += runeColumns(r)
		if w > room-1 && cut < 0 {
			cut = i
		}
		if w > room {
			return s[:cut] + "…"
		}
	}
	return s
}

// runeColumns is how many columns a terminal gives r: two for the wide
// and fullwidth characters of East Asian scripts, else one (a combining
// mark counted too: a line cut a little short is no harm).
func runeColumns(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}
