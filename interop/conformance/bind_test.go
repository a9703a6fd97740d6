package conformance

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/interop/internal/testenv"
)

// bindScript listens the ways the suite and server-everything do and
// prints each server's address once listening. Listens without a host are
// also read synchronously, right after listen(), as the suite does (with
// an explicit host Node resolves it first, so there is no sync address).
const bindScript = `
const net = require('node:net');
const http = require('node:http');
const sync = [];
const all = [];
const take = (s, readNow) => {
  if (readNow) { const a = s.address(); sync.push(a && a.address); }
  all.push(new Promise((ok) => s.once('listening', () => { const a = s.address().address; s.close(); ok(a); })));
};
take(net.createServer().listen(0), true);
take(net.createServer().listen(0, () => {}), true);
take(net.createServer().listen({ port: 0 }), true);
take(http.createServer().listen(0), true);
take(http.createServer().listen(0, '0.0.0.0'), false);
take(http.createServer().listen(0, '::'), false);
Promise.all(all).then((addrs) => process.stdout.write(JSON.stringify(sync.concat(addrs))));
`

// TestBindLocalhost checks that bind-localhost.mjs moves every listener to
// 127.0.0.1 while keeping the address readable right after listen(), and
// that without it Node would bind every interface (so the test can fail).
func TestBindLocalhost(t *testing.T) {
	node := testenv.Node(t)
	run := func(t *testing.T, nodeOptions string) []any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "-e", bindScript)
		cmd.Env = append(os.Environ(), "NODE_OPTIONS="+nodeOptions)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node: %v", err)
		}
		var addrs []any
		if err := json.Unmarshal(out, &addrs); err != nil {
			t.Fatalf("output %q: %v", out, err)
		}
		return addrs
	}
	t.Run("preloaded", func(t *testing.T) {
		got := run(t, testenv.BindLocalhost(t))
		want := []any{}
		for range 4 + 6 { // 4 synchronous reads, then 6 listening addresses
			want = append(want, "127.0.0.1")
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("addresses (-want +got):\n%s", d)
		}
	})
	t.Run("without", func(t *testing.T) {
		got := run(t, "")
		if len(got) == 0 || got[0] == "127.0.0.1" {
			t.Errorf("without the preload listen(0) bound %v; the check above proves nothing", got)
		}
	})
}
