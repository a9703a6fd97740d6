package transport

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
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
