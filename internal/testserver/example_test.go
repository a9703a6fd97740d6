package testserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/conduitmcp/conduit/internal/testserver"
)

// A test server on an in-memory pipe, probed the way a dual-era client
// probes a stdio server.
func ExampleServer_Pipe() {
	srv := testserver.New(testserver.Options{})
	defer srv.Close()
	r, w, wait := srv.Pipe(context.Background())

	io.WriteString(w, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`+"\n")
	line, _ := bufio.NewReader(r).ReadBytes('\n')
	var resp struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
		} `json:"result"`
	}
	json.Unmarshal(line, &resp)
	fmt.Println(resp.Result.SupportedVersions)

	w.Close()
	io.Copy(io.Discard, r)
	fmt.Println(wait())
	// Output:
	// [2026-07-28]
	// <nil>
}

// Faults make the server produce a probe outcome: here a -32022 that names
// a mutual version, once, so the corrective retry succeeds.
func ExampleParseFault() {
	f, err := testserver.ParseFault("unsupported-version:supported=2099-01-01|2026-07-28,times=1")
	fmt.Println(f.Kind, f.Supported, f.Times, err)
	srv := testserver.New(testserver.Options{Faults: []testserver.Fault{f}})
	defer srv.Close()
	fmt.Println(srv.FaultHits())
	// Output:
	// unsupported-version [2099-01-01 2026-07-28] 1 <nil>
	// [0]
}
