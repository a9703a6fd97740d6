package client_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
)

// TestConnEventsAndErr: the event hook is told the era was pinned, in
// both eras; an event logs through slog as a group; Err is nil while the
// client is usable and matches ErrClosed once Done is closed by Close.
func TestConnEventsAndErr(t *testing.T) {
	for _, era := range allEras {
		for _, tr := range []string{tPipe, tHTTP} {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				t.Parallel()
				var got record[client.ConnEvent]
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p), client.WithConnEvents(got.add))
				if err := f.c.Err(); err != nil {
					t.Errorf("Err() on a usable client = %v", err)
				}
				var pinned client.ConnEvent
				eventually(func() bool {
					for _, ev := range got.all() {
						if ev.Kind == "era-pinned" {
							pinned = ev
						}
					}
					return pinned.Kind != ""
				})
				if pinned.Version != f.c.Negotiated().Version || pinned.Time.IsZero() {
					t.Fatalf("era-pinned event %+v, want version %q", pinned, f.c.Negotiated().Version)
				}
				var buf bytes.Buffer
				slog.New(slog.NewTextHandler(&buf, nil)).Info("mcp", "event", pinned)
				if s := buf.String(); !strings.Contains(s, "event.kind=era-pinned") || !strings.Contains(s, "event.version="+pinned.Version) {
					t.Errorf("slog line %q lacks the event's kind and version", s)
				}
				f.c.Close()
				await(t, f.c.Done(), "Done not closed after Close")
				if err := f.c.Err(); !errors.Is(err, client.ErrClosed) {
					t.Errorf("Err() after Close = %v, want ErrClosed", err)
				}
			})
		}
	}
}
