package testserver

import (
	"bytes"
	"errors"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// The older versions (2025-03-26, 2024-11-05) on request: a server whose
// Options.LegacyVersions lists only them answers initialize with one, and
// then shapes its answers as that version does (olderShape): no
// structuredContent, no outputSchema, no titles. It still sends
// elicitation/create when a tool asks for it (a client must refuse it at
// those versions). MethodBatch sends a JSON-RPC batch, as 2025-03-26
// allowed.

// MethodBatch is a test-only method of a legacy session at 2025-03-26: the
// server sends one JSON-RPC batch holding a notifications/message (level
// info, data "batched") and a ping request, on the request's stream, and
// answers {"pong": true} once the client answered the ping.
const MethodBatch = "testserver/batch"

func init() {
	commonMethods[MethodBatch] = (*Server).batch
}

// olderShape drops from a result what version does not have.
func olderShape(version, method string, res map[string]any) map[string]any {
	f := negotiation.FeaturesOf(version)
	if res == nil || f.StructuredContent && f.Titles {
		return res
	}
	switch method {
	case protocol.MethodToolsCall:
		delete(res, "structuredContent")
	case protocol.MethodToolsList, protocol.MethodPromptsList, protocol.MethodResourcesList, protocol.MethodResourcesTemplateList:
		for _, key := range []string{"tools", "prompts", "resources", "resourceTemplates"} {
			items, _ := res[key].([]any)
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					delete(m, "title")
					delete(m, "outputSchema")
				}
			}
		}
	}
	return res
}

// rawSender is an outbound that can write raw bytes as one message.
type rawSender interface {
	sendRaw(b []byte) error
}

func (c *streamConn) sendRaw(b []byte) error { return c.writeRaw(b) }

func (st *eventStream) sendRaw(b []byte) error {
	st.push(b, false, 0)
	return nil
}

// batch implements MethodBatch.
func (s *Server) batch(c *call) (map[string]any, *jsonrpc.Error) {
	if c.sess == nil || !negotiation.FeaturesOf(c.version).Batches {
		return nil, jsonrpc.ErrMethodNotFound.WithMessage(MethodBatch + " needs a 2025-03-26 session")
	}
	rs, ok := c.out.(rawSender)
	if !ok {
		return nil, jsonrpc.ErrInternal.WithMessage("this stream cannot send a batch")
	}
	note, err := jsonrpc.NewNotification(protocol.NotificationMessage, map[string]any{"level": "info", "data": "batched"})
	if err != nil {
		return nil, jsonrpc.ErrInternal.WithMessage(err.Error())
	}
	nb, err := jsonrpc.EncodeMessage(note)
	if err != nil {
		return nil, jsonrpc.ErrInternal.WithMessage(err.Error())
	}
	out := &batchOut{first: nb, rs: rs}
	if _, rpcErr := c.sess.request(c.ctx, out, protocol.MethodPing, nil); rpcErr != nil {
		return nil, rpcErr
	}
	return map[string]any{"pong": true}, nil
}

// batchOut sends the next message as the second element of a batch whose
// first element is first.
type batchOut struct {
	first []byte
	rs    rawSender
}

func (b *batchOut) send(m jsonrpc.Message) error {
	mb, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	if bytes.IndexByte(mb, '\n') >= 0 || bytes.IndexByte(b.first, '\n') >= 0 {
		return errors.New("testserver: a batch element holds a newline")
	}
	return b.rs.sendRaw(append(append(append(append([]byte("["), b.first...), ','), mb...), ']'))
}
