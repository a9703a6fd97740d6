package transport

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// trickleReader hands out its bytes at most n at a time, as a slow server
// whose event arrives in many small reads.
type trickleReader struct {
	b []byte
	n int
}

func (r *trickleReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[k:]
	return k, nil
}

// largeEvent returns one event of about size bytes carrying a JSON-RPC
// response.
func largeEvent(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`data: {"jsonrpc":"2.0","id":1,"result":{"text":"`)
	b.WriteString(strings.Repeat("x", size))
	b.WriteString("\"}}\n\n")
	return b.Bytes()
}

// BenchmarkSSELargeEventTrickle parses one large event delivered in 64-byte
// reads. Parsing is linear when ns/MiB stays flat as the event grows.
func BenchmarkSSELargeEventTrickle(b *testing.B) {
	for _, mib := range []float64{0.25, 1, 4, 12} {
		ev := largeEvent(int(mib * (1 << 20)))
		b.Run(fmt.Sprintf("%gMiB", mib), func(b *testing.B) {
			b.SetBytes(int64(len(ev)))
			for range b.N {
				got := 0
				_, err := readEvents(&trickleReader{b: ev, n: 64}, 16<<20, func(e event) bool {
					got = len(e.Data)
					return true
				})
				if err != nil || got == 0 {
					b.Fatalf("readEvents: %d bytes of data, %v", got, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/mib, "ns/MiB")
		})
	}
}

// bytesPerLargeEvent returns the bytes allocated to read and decode one
// large event carrying a response of size bytes from a network-like
// reader.
func bytesPerLargeEvent(t testing.TB, size int) uint64 {
	ev := largeEvent(size)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var msg jsonrpc.Message
	_, err := readEvents(&trickleReader{b: ev, n: 32 << 10}, 16<<20, func(e event) bool {
		msg, _ = decodeEventAnswer(e)
		return true
	})
	runtime.ReadMemStats(&after)
	if r, ok := msg.(*jsonrpc.Response); err != nil || !ok || len(r.Result) < size {
		t.Fatalf("readEvents: %v, message %T", err, msg)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// TestLargeEventNotCopied checks that the response of a large event is
// decoded from the parser's buffer, which the parser drops, instead of a
// copy of it: reading and decoding a 1 MiB event allocates the gathered
// line (doubling, so under 4× the event) and nothing of its size more.
func TestLargeEventNotCopied(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates")
	}
	const size = 1 << 20
	got := bytesPerLargeEvent(t, size)
	t.Logf("a %d-byte event: %d bytes allocated (%.2f×)", size, got, float64(got)/size)
	if got > 4*size {
		t.Errorf("a %d-byte event allocated %d bytes (%.1f×), want at most 4×", size, got, float64(got)/size)
	}
}
