package jsonrpc

import (
	"bytes"
	"iter"

	"github.com/conduitmcp/conduit/internal/jsonscan"
)

// MaxBatch bounds the messages of one batch array that [DecodeMessages]
// yields; the elements beyond it are reported as one *DecodeError.
const MaxBatch = 1024

// IsBatch reports whether data, after leading white space, starts a JSON
// array: a JSON-RPC batch (protocol version 2025-03-26 allowed them; every
// version before and after it sends one message at a time).
func IsBatch(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '['
}

// DecodeMessages yields the messages data holds: the one message of a
// JSON-RPC object as [DecodeMessage] decodes it, or each element of a batch
// array in order, each decoded as [DecodeMessage] decodes it (a broken
// element yields its *DecodeError, and the elements after it still come).
// An empty batch, a batch that is not valid JSON and the elements beyond
// [MaxBatch] yield one *DecodeError each. It never retains data.
//
// A batch is checked once as a whole and its elements are then read in
// place, one at a time as they are yielded: the elements beyond MaxBatch,
// and those after the caller stops, cost nothing but that check.
func DecodeMessages(data []byte) iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		if !IsBatch(data) {
			yield(DecodeMessage(data))
			return
		}
		data := bytes.TrimSpace(data)
		if err := jsonscan.Validate(data); err != nil {
			yield(nil, &DecodeError{Reason: "not JSON", Err: err})
			return
		}
		// data is one valid array: past each element comes a comma or
		// the closing bracket.
		i := jsonscan.SkipSpace(data, 1)
		if data[i] == ']' {
			yield(nil, &DecodeError{Reason: "empty batch"})
			return
		}
		for n := 0; ; n++ {
			if n == MaxBatch {
				yield(nil, &DecodeError{Reason: "batch has more than 1024 messages"})
				return
			}
			e, err := jsonscan.SkipNested(data, i)
			if err != nil { // unreachable: data was validated
				yield(nil, &DecodeError{Reason: "not JSON", Err: err})
				return
			}
			var ok bool
			if IsBatch(e.Raw(data)) {
				// A batch holds messages, never batches.
				ok = yield(nil, &DecodeError{Reason: "batch inside a batch"})
			} else {
				ok = yield(DecodeMessage(e.Raw(data)))
			}
			if !ok {
				return
			}
			i = jsonscan.SkipSpace(data, e.End)
			if data[i] == ']' {
				return
			}
			i = jsonscan.SkipSpace(data, i+1) // past the comma
		}
	}
}
