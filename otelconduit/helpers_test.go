package otelconduit_test

import (
	"bufio"
	"encoding/json"
	"io"
	"testing"
)

// scriptedLegacyServer answers initialize on rw, then sends the request
// line req and waits for its answer (bounded by the connection: the test
// closes it).
func scriptedLegacyServer(t *testing.T, rw io.ReadWriter, req string) {
	sc := bufio.NewScanner(rw)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("the client sent %q: %v", sc.Bytes(), err)
			return
		}
		switch {
		case m.Method == "initialize":
			resp := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"scripted","version":"1"}}}` + "\n"
			if _, err := io.WriteString(rw, resp); err != nil {
				return
			}
		case m.Method == "notifications/initialized":
			if _, err := io.WriteString(rw, req+"\n"); err != nil {
				return
			}
		case m.Method == "" && string(m.ID) == `"r1"`:
			return // the answer to our request
		}
	}
}
