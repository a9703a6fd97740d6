package host

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/protocol"
)

// searchName is uniqueName as it was, trying every count from 0: the
// names the catalogue must keep giving. claims counts the entries that
// claim each plain name.
func searchName(used, claims map[string]int, server, item string) string {
	n := Sanitize(server + "__" + item)
	if _, taken := used[n]; !taken && claims[n] <= 1 {
		return n
	}
	sum := fnv.New32a()
	sum.Write([]byte(server + "\x00" + item))
	tag := fmt.Sprintf("%08x", sum.Sum32())
	for i := 0; ; i++ {
		suffix := "_" + tag
		if i > 0 {
			suffix += "_" + strconv.Itoa(i)
		}
		c := truncate(n, MaxNameLen-len(suffix)) + suffix
		if _, taken := used[c]; !taken {
			return c
		}
	}
}

// TestCatalogueDuplicateNames: a server that lists one tool name 20,000
// times gets a distinct catalogue name for each, in linear time (each
// duplicate tried every count taken before it: seconds of CPU for these,
// minutes for more), and the names are those a search from 0 gives, also
// where a listed name is itself a suffixed one and where a prompt has a
// tool's name.
func TestCatalogueDuplicateNames(t *testing.T) {
	t.Run("many", func(t *testing.T) {
		s := &server{cfg: ServerConfig{Name: "s"}}
		for range 20000 {
			s.tools = append(s.tools, protocol.Tool{Name: "x"})
		}
		h := &Host{servers: []*server{s}}
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.rebuildLocked()
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("naming 20,000 duplicates still runs after 10 s")
		}
		seen := map[string]bool{}
		for _, tl := range h.cat.tools {
			if seen[tl.Name] {
				t.Fatalf("name %q given twice", tl.Name)
			}
			seen[tl.Name] = true
		}
		if len(seen) != 20000 {
			t.Errorf("%d names, want 20000", len(seen))
		}
	})
	t.Run("as a search from 0", func(t *testing.T) {
		sum := fnv.New32a()
		sum.Write([]byte("s\x00x"))
		tag := fmt.Sprintf("%08x", sum.Sum32())
		names := []string{"x", "x", "x", "x__" + tag + "_2", "y", "x"} // s__x__<tag>_2 is listed literally
		s := &server{cfg: ServerConfig{Name: "s"}}
		for _, n := range names {
			s.tools = append(s.tools, protocol.Tool{Name: n})
			s.prompts = append(s.prompts, protocol.Prompt{Name: n})
		}
		h := &Host{servers: []*server{s}}
		h.rebuildLocked()
		sorted := sortedBy(s.tools, func(t protocol.Tool) string { return t.Name })
		used, claims := map[string]int{}, map[string]int{}
		for _, tl := range sorted {
			claims[Sanitize("s__"+tl.Name)]++
		}
		var want []string
		for i, tl := range sorted {
			n := searchName(used, claims, "s", tl.Name)
			used[n] = i + 1
			want = append(want, n)
		}
		for i, tl := range h.cat.tools {
			if tl.Name != want[i] {
				t.Errorf("tool %d (%q) is named %q, want %q", i, tl.Tool.Name, tl.Name, want[i])
			}
		}
		for i, p := range h.cat.prompts {
			if p.Name != want[i] {
				t.Errorf("prompt %d (%q) is named %q, want %q", i, p.Prompt.Name, p.Name, want[i])
			}
		}
	})
}

// TestCatalogueNamesNeverMove: a catalogue name that named one server's
// entry never names another's, whatever servers come, go down or come
// back: a model that kept a name from an earlier turn reaches the tool it
// was given or is told the name is not there, never another server's tool
// that took the name over. Here my.server and my_server both list x, and
// Sanitize makes both my_server__x.
func TestCatalogueNamesNeverMove(t *testing.T) {
	e := &server{cfg: ServerConfig{Name: "my.server"}}
	f := &server{cfg: ServerConfig{Name: "my_server"}}
	x := []protocol.Tool{{Name: "x"}}
	owner := map[string]string{} // catalogue name → the server whose x it named
	h := &Host{servers: []*server{e, f}, changed: make(chan struct{})}
	check := func(step string) {
		t.Helper()
		for _, tl := range h.cat.tools {
			if was, ok := owner[tl.Name]; ok && was != tl.Server {
				t.Errorf("%s: %s names %s's %s, and named %s's before", step, tl.Name, tl.Server, tl.Tool.Name, was)
			}
			owner[tl.Name] = tl.Server
		}
	}
	h.publish(f, x, nil, nil) // my_server alone (my.server not connected yet)
	check("my_server alone")
	h.publish(e, x, nil, nil)
	check("both")
	h.drop(f)
	check("my_server down")
	h.publish(f, x, nil, nil)
	check("my_server back")
	h.drop(e)
	check("my.server down")
	h.drop(f)
	h.publish(e, x, nil, nil)
	check("my.server alone")
	if len(owner) < 2 {
		t.Errorf("names seen: %v, want one for each server's x at least", owner)
	}
	// A down server's tools still tell why they cannot be called.
	if gone := h.cat.goneTools; len(gone) == 0 {
		t.Errorf("my_server is down, and no name of its tools is remembered")
	}
}
