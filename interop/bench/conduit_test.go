package bench

import (
	"context"
	"fmt"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/transport"
)

func init() {
	clients = append([]clientImpl{{name: "conduit", connect: connectConduit, websocket: true}}, clients...)
}

type conduitSession struct {
	c *client.Client
}

// connectConduit connects as the README shows: client.Dial(ctx, url) or
// client.Connect(ctx, transport.Command(...)), no options in the modern
// era (the default, Auto, negotiates it); the legacy era needs the one
// option that picks it, WithProtocol(client.Legacy), as every library
// needs its own (see doc.go).
func connectConduit(ctx context.Context, ep endpoint, e era) (session, error) {
	var opts []client.Option
	if e == legacyEra {
		opts = append(opts, client.WithProtocol(client.Legacy))
	}
	var c *client.Client
	var err error
	switch {
	case ep.url != "":
		c, err = client.Dial(ctx, ep.url, opts...)
	case ep.ws != "":
		c, err = client.Dial(ctx, ep.ws, opts...)
	default:
		c, err = client.Connect(ctx, transport.Command(ep.argv[0], ep.argv[1:]...), opts...)
	}
	if err != nil {
		return nil, err
	}
	return &conduitSession{c: c}, nil
}

func (s *conduitSession) echo(ctx context.Context, text string) error {
	res, err := s.c.CallTool(ctx, "echo", map[string]any{"text": text})
	if err == nil && res.Failed() {
		err = fmt.Errorf("conduit: echo failed: %s", res.Text())
	}
	return err
}

func (s *conduitSession) big(ctx context.Context, size int) (int, error) {
	res, err := s.c.CallTool(ctx, "big", map[string]any{"size": size})
	if err != nil {
		return 0, err
	}
	// The first block's text, as for the other libraries (res.Text() would
	// add the cost of joining blocks: two more copies of the megabyte).
	if len(res.Content) == 0 {
		return 0, fmt.Errorf("conduit: empty big result")
	}
	return len(res.Content[0].Text), nil
}

func (s *conduitSession) listTools(ctx context.Context) (int, error) {
	n := 0
	for _, err := range s.c.Tools(ctx) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

func (s *conduitSession) protocolVersion() string { return s.c.Negotiated().Version }

func (s *conduitSession) close() error { return s.c.Close() }
