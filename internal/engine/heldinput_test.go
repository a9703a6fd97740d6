package engine

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// TestManualLegacyHeldKeysUnique: a legacy server that holds the string
// ids "\"5\"" and "5" and the integer id 5 open at once (they are different
// requests) gets all three handed to the manual caller under different
// keys, and an answer to each; before, the integer took the string "5"'s
// key and that request was lost until MaxHeldInputWait cancelled the call.
func TestManualLegacyHeldKeysUnique(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu      sync.Mutex
			answers = map[string]*jsonrpc.Response{}
			call    *jsonrpc.Request
		)
		elicit := map[string]any{"message": "name?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}
		tr := newScripted(func(p *peer, m jsonrpc.Message) {
			if r, ok := m.(*jsonrpc.Response); ok {
				mu.Lock()
				answers[r.ID.String()] = r
				done := len(answers) == 4
				mu.Unlock()
				if done {
					p.reply(call, map[string]any{"content": []any{}})
				}
				return
			}
			r, ok := m.(*jsonrpc.Request)
			if !ok || r.Method != protocol.MethodToolsCall {
				legacyServer(p, m)
				return
			}
			call = r
			req, _ := jsonrpc.NewRequest(jsonrpc.StringID("first"), protocol.MethodElicitationCreate, elicit)
			p.send(req)
		})
		s := connected(t, tr, Config{Mode: ModeLegacy, Handler: detected(handler.Funcs{Elicit: acceptAll})})
		_, err := s.Call(t.Context(), protocol.MethodToolsCall, json.RawMessage(`{"name":"t"}`), &CallOptions{ManualInput: true})
		ir, ok := errors.AsType[*InputRequiredError](err)
		if !ok || len(ir.Requests) != 1 {
			t.Fatalf("Call = %v, want one held request", err)
		}
		for _, id := range []jsonrpc.ID{jsonrpc.StringID(`"5"`), jsonrpc.StringID("5"), jsonrpc.Int64ID(5)} {
			req, _ := jsonrpc.NewRequest(id, protocol.MethodElicitationCreate, elicit)
			tr.peer(0).send(req)
		}
		synctest.Wait() // both held, waiting for the caller
		accept := json.RawMessage(`{"action":"accept","content":{}}`)
		_, err = s.Resume(t.Context(), ir, map[string]json.RawMessage{"first": accept}, nil)
		ir2, ok := errors.AsType[*InputRequiredError](err)
		if !ok {
			t.Fatalf("Resume = %v, want the two held requests", err)
		}
		if len(ir2.Requests) != 3 {
			t.Fatalf("held requests %v, want 3", ir2.Requests)
		}
		if _, ok := ir2.Requests["5"]; !ok {
			t.Errorf("held requests %v, want the integer id 5 under \"5\"", ir2.Requests)
		}
		all := map[string]json.RawMessage{}
		for k := range ir2.Requests {
			all[k] = accept
		}
		if _, err := s.Resume(t.Context(), ir2, all, nil); err != nil {
			t.Fatalf("Resume = %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(answers) != 4 {
			t.Errorf("%d requests answered, want 4", len(answers))
		}
		for id, r := range answers {
			if r.Error != nil {
				t.Errorf("request %s answered %v", id, r.Error)
			}
		}
	})
}
