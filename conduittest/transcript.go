package conduittest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/jsonrpc"
)

// Entry is one line of a transcript: a JSON-RPC message with its direction
// and time. In a file each entry is one JSON object a line:
//
//	{"dir":"send","ms":0.412,"msg":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}
type Entry struct {
	// Dir is "send" (client to server) or "recv" (server to client).
	Dir string `json:"dir"`
	// Ms is the time since the first message of the recording, in
	// milliseconds.
	Ms float64 `json:"ms"`
	// Msg is the message.
	Msg json.RawMessage `json:"msg"`
}

// Recorder writes a transcript of a client's session: every JSON-RPC
// message the client sends or receives, on any transport, one [Entry] a
// line. Install it with [Recorder.Option]. It is safe for concurrent use.
//
// Credentials are redacted by default: the value of every member named
// like a credential header or field (Authorization, Proxy-Authorization,
// Cookie, Set-Cookie, DPoP, X-Api-Key, access_token, refresh_token,
// id_token, client_secret, password, …, in any case and at any depth,
// _meta included) and every string that is an authorization header value
// ("Bearer …", "Basic …", "DPoP …") are written as [Redacted], so a
// transcript can be committed; [KeepCredentials] turns this off. (HTTP
// headers themselves are never recorded: a transcript holds the JSON-RPC
// messages only.) A [Replay] redacts the requests it gets the same way
// before matching them.
type Recorder struct {
	mu    sync.Mutex
	w     *bufio.Writer // guarded by mu
	start time.Time     // guarded by mu; zero until the first message
	err   error         // guarded by mu
	keep  bool          // written once by NewRecorder: KeepCredentials
}

// A RecorderOption configures [NewRecorder].
type RecorderOption func(*Recorder)

// KeepCredentials records messages as they are, credentials included.
// Default: credentials are redacted (see [Recorder]).
func KeepCredentials() RecorderOption { return func(r *Recorder) { r.keep = true } }

// NewRecorder returns a recorder writing to w. Call [Recorder.Flush] when
// the session is over.
func NewRecorder(w io.Writer, opts ...RecorderOption) *Recorder {
	r := &Recorder{w: bufio.NewWriter(w)}
	for _, o := range opts {
		if o != nil {
			o(r)
		}
	}
	return r
}

// Option returns the client option that feeds the recorder
// (client.WithMessageLog).
func (r *Recorder) Option() client.Option { return client.WithMessageLog(r.Log) }

// Log records one message; it is the client.WithMessageLog callback.
func (r *Recorder) Log(sent bool, msg jsonrpc.Message) {
	b, err := jsonrpc.EncodeMessage(msg)
	if err == nil && !r.keep {
		b = redactJSON(b)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.err = errors.Join(r.err, err)
		return
	}
	now := time.Now()
	if r.start.IsZero() {
		r.start = now
	}
	line, err := json.Marshal(Entry{Dir: dirName(sent), Ms: float64(now.Sub(r.start).Microseconds()) / 1000, Msg: b})
	if err == nil {
		_, err = r.w.Write(append(line, '\n'))
	}
	if err != nil {
		r.err = errors.Join(r.err, err)
	}
}

// Flush writes out buffered entries and returns the first error met while
// recording or flushing.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.err, r.w.Flush())
}

// maxTranscriptLine bounds one line of a transcript file.
const maxTranscriptLine = 64 << 20

// ReadTranscript reads a transcript written by a [Recorder]. Blank lines
// are skipped; a line that is not an entry with dir send or recv and a
// JSON-RPC message is an error naming the line.
func ReadTranscript(r io.Reader) ([]Entry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxTranscriptLine)
	var out []Entry
	for n := 1; sc.Scan(); n++ {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("conduittest: transcript line %d: %w", n, err)
		}
		if e.Dir != "send" && e.Dir != "recv" {
			return nil, fmt.Errorf("conduittest: transcript line %d: dir %q, want send or recv", n, e.Dir)
		}
		if _, err := jsonrpc.DecodeMessage(e.Msg); err != nil {
			return nil, fmt.Errorf("conduittest: transcript line %d: %w", n, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("conduittest: transcript: %w", err)
	}
	return out, nil
}

// LoadTranscript reads the transcript file at path.
func LoadTranscript(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTranscript(f)
}

// dirName is an Entry's Dir: "send" or "recv".
func dirName(sent bool) string {
	if sent {
		return "send"
	}
	return "recv"
}
