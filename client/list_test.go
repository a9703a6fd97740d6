package client_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
)

// pagingServer is a modern Streamable HTTP server that serves tools/list
// through page(cursor), which returns one page's tools and nextCursor
// (nil ends the list).
func pagingServer(t *testing.T, page func(cursor *string) ([]string, *string)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		var m struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
			Params struct {
				Cursor *string `json:"cursor"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		res := map[string]any{"resultType": "complete"}
		switch m.Method {
		case "server/discover":
			res["supportedVersions"] = []string{"2026-07-28"}
			res["capabilities"] = map[string]any{"tools": map[string]any{}}
			res["_meta"] = map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "paging", "version": "1"}}
		case "tools/list":
			names, next := page(m.Params.Cursor)
			tools := []any{}
			for _, n := range names {
				tools = append(tools, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}})
			}
			res["tools"] = tools
			if next != nil {
				res["nextCursor"] = *next
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// TestWalkKeepsNoLongCursors: what a listing walk remembers of the
// cursors it followed, to catch a repeated one, does not grow with the
// cursors: a server whose twenty-four pages name cursors of 256 KB each
// does not make the walk hold 6 MB of them.
func TestWalkKeepsNoLongCursors(t *testing.T) {
	const pages = 24
	long := strings.Repeat("c", 256<<10)
	srv := pagingServer(t, func(cursor *string) ([]string, *string) {
		k := 0
		if cursor != nil {
			k, _ = strconv.Atoi(strings.TrimPrefix(*cursor, long))
		}
		if k == pages {
			return []string{"t" + strconv.Itoa(k)}, nil
		}
		next := long + strconv.Itoa(k+1)
		return []string{"t" + strconv.Itoa(k)}, &next
	})
	// Generous: each page carries half a megabyte, slow under the race
	// detector on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, srv.URL, client.WithProtocol(client.Modern))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := 0
	for _, err := range c.Tools(ctx) {
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		if n++; n == pages {
			var during runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&during)
			if grown := int64(during.HeapAlloc) - int64(before.HeapAlloc); grown > 3<<20 {
				t.Errorf("the heap grew by %d MB over %d pages with 256 KB cursors, want the cursors not kept", grown>>20, pages)
			}
		}
	}
	if n != pages+1 {
		t.Errorf("Tools yielded %d tools, want %d", n, pages+1)
	}
}
