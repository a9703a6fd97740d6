package bench

import (
	"context"
	"fmt"
	"net/http"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/transport"
)

func init() {
	clients = append([]clientImpl{{name: "conduit", connect: connectConduit, websocket: true}}, clients...)
}

type conduitSession struct {
	c  *client.Client
	hc *http.Client
}

func connectConduit(ctx context.Context, ep endpoint, e era) (session, error) {
	p := client.Modern
	if e == legacyEra {
		p = client.Legacy
	}
	var c *client.Client
	var hc *http.Client
	var err error
	switch {
	case ep.url != "":
		hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
		c, err = client.Dial(ctx, ep.url, client.WithProtocol(p), client.WithHTTPClient(hc))
	case ep.ws != "":
		c, err = client.Dial(ctx, ep.ws, client.WithProtocol(p))
	default:
		c, err = client.Connect(ctx, transport.Command(ep.argv[0], ep.argv[1:]...), client.WithProtocol(p))
	}
	if err != nil {
		return nil, err
	}
	return &conduitSession{c: c, hc: hc}, nil
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

func (s *conduitSession) close() error {
	err := s.c.Close()
	if s.hc != nil {
		s.hc.CloseIdleConnections()
	}
	return err
}
