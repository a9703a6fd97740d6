package main

import (
	"errors"
	"os"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/jsonrpc"
)

// recordOption returns the client option that writes the session's
// transcript to --record FILE (one JSON-RPC message a line, with direction
// and time; see conduittest.Recorder), and the function that flushes and
// closes the file. Without --record both are nil. The client keeps one
// message log, so with -v the option also writes the wire log that
// client.WithWireLog would.
func (inv *invocation) recordOption() (client.Option, func() error, error) {
	if inv.record == "" {
		return nil, nil, nil
	}
	f, err := os.OpenFile(inv.record, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, nil, err
	}
	rec := conduittest.NewRecorder(f)
	stop := func() error { return errors.Join(rec.Flush(), f.Close()) }
	l := inv.logger()
	if l == nil {
		return rec.Option(), stop, nil
	}
	return client.WithMessageLog(func(sent bool, msg jsonrpc.Message) {
		rec.Log(sent, msg)
		if b, err := jsonrpc.EncodeMessage(msg); err == nil {
			dir := "recv"
			if sent {
				dir = "send"
			}
			l.Debug("wire: "+dir, "msg", string(b))
		}
	}), stop, nil
}
