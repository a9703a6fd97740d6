package transport

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// tailBuffer keeps the last size bytes written to it (a bounded ring for
// a server's stderr). It stores up to twice size and compacts, which keeps
// Write amortized O(len(p)) without a modular index. Its size is set
// before its first use, and it is not copied after.
type tailBuffer struct {
	mu   sync.Mutex
	size int
	buf  []byte
}

// Write keeps the end of p. It never fails.
func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if t.size == 0 {
		return n, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) >= t.size {
		t.buf = append(t.buf[:0], p[len(p)-t.size:]...)
		return n, nil
	}
	// len(t.buf)+len(p) > 2*t.size, written so that a size near the
	// largest int cannot wrap.
	if len(t.buf)-t.size > t.size-len(p) {
		keep := t.size - len(p)
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-keep:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the kept tail: at most size bytes, starting at a UTF-8
// boundary, without trailing white space.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.size {
		b = b[len(b)-t.size:]
	}
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return strings.TrimRight(string(b), " \t\r\n")
}
