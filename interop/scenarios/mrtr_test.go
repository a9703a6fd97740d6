package scenarios

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

// TestMRTRClient mirrors mrtr-client (src/scenarios/client/mrtr-client.ts,
// SEP-2322): requestState echoed byte for byte, none sent when the server
// sent none, a state-only round retried with its state, a new JSON-RPC id
// on each retry, nothing of one call's rounds on another call, and a
// result without resultType taken as complete.
func TestMRTRClient(t *testing.T) {
	var mu sync.Mutex
	sent := map[string]string{}        // tool → the requestState sent
	firstID := map[string]string{}     // tool → the first request's id
	retries := map[string][]recorded{} // tool → its retries
	unrelated := []recorded{}          // calls of test_mrtr_unrelated
	calls := map[string]int{}          // tool → calls
	confirm := map[string]any{"confirm": map[string]any{"method": "elicitation/create", "params": map[string]any{
		"message": "Please confirm to continue", "requestedSchema": map[string]any{"type": "object",
			"properties": map[string]any{"confirmed": map[string]any{"type": "boolean"}}}}}}
	tools := []any{}
	for _, n := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_state_only", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
		tools = append(tools, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}})
	}
	mk := newMock(t, func(w http.ResponseWriter, r *http.Request, m recorded) {
		mu.Lock()
		defer mu.Unlock()
		switch m.Method {
		case "server/discover":
			discover(w, m.ID, map[string]any{"tools": map[string]any{}})
			return
		case protocol.MethodToolsList:
			reply(w, m.ID, complete(map[string]any{"tools": tools}))
			return
		case protocol.MethodToolsCall:
		default:
			reply(w, m.ID, complete(map[string]any{}))
			return
		}
		var name string
		json.Unmarshal(m.Params["name"], &name)
		calls[name]++
		done := complete(map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}})
		if calls[name] == 1 {
			firstID[name] = string(m.ID)
			state := `{"nonce":"` + strconv.FormatInt(time.Now().UnixNano(), 10) + `", "originalId":` + string(m.ID) + `}`
			switch name {
			case "test_mrtr_echo_state":
				sent[name] = state
				reply(w, m.ID, map[string]any{"resultType": "input_required", "inputRequests": confirm, "requestState": state})
				return
			case "test_mrtr_no_state":
				reply(w, m.ID, map[string]any{"resultType": "input_required", "inputRequests": confirm})
				return
			case "test_mrtr_state_only":
				sent[name] = state
				reply(w, m.ID, map[string]any{"resultType": "input_required", "requestState": state})
				return
			case "test_mrtr_no_result_type":
				reply(w, m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "no-result-type"}}})
				return
			case "test_mrtr_unrelated":
				unrelated = append(unrelated, m)
				reply(w, m.ID, done)
				return
			}
		}
		retries[name] = append(retries[name], m)
		reply(w, m.ID, done)
	})
	h := handler.Funcs{Elicit: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"confirmed": true}}, nil
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, mk.srv.URL, client.WithProtocol(client.Modern), client.WithHandler(h))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_state_only", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
		wg.Add(1)
		go func() { // concurrently, so that the unrelated call runs between rounds
			defer wg.Done()
			if _, err := c.CallTool(ctx, name, nil); err != nil {
				t.Errorf("CallTool %s: %v", name, err)
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	state := func(r recorded) string {
		var s string
		if json.Unmarshal(r.Params["requestState"], &s) != nil {
			return "<absent>"
		}
		return s
	}
	echo := retries["test_mrtr_echo_state"]
	if check(t, "sep-2322-client-request-state-echoed", len(echo) == 1, "%d retries", len(echo)); len(echo) == 1 {
		check(t, "sep-2322-client-request-state-echoed", state(echo[0]) == sent["test_mrtr_echo_state"], "got %q, sent %q", state(echo[0]), sent["test_mrtr_echo_state"])
		check(t, "sep-2322-client-jsonrpc-id-different", string(echo[0].ID) != firstID["test_mrtr_echo_state"], "retry id %s = first id", echo[0].ID)
	}
	if ns := retries["test_mrtr_no_state"]; check(t, "sep-2322-client-no-state-omitted", len(ns) == 1, "%d retries", len(ns)) {
		_, has := ns[0].Params["requestState"]
		check(t, "sep-2322-client-no-state-omitted", !has, "the retry carried requestState %s", ns[0].Params["requestState"])
	}
	if so := retries["test_mrtr_state_only"]; check(t, "sep-2322-client-request-state-only-echoed", len(so) >= 1, "no retry") {
		check(t, "sep-2322-client-request-state-only-echoed", state(so[0]) == sent["test_mrtr_state_only"], "got %q, sent %q", state(so[0]), sent["test_mrtr_state_only"])
	}
	for _, u := range unrelated {
		_, ir := u.Params["inputResponses"]
		_, rs := u.Params["requestState"]
		check(t, "sep-2322-client-parallel-isolation", !ir && !rs, "the unrelated call carried inputResponses %v, requestState %v", ir, rs)
	}
	check(t, "sep-2322-default-result-type-complete", len(retries["test_mrtr_no_result_type"]) == 0, "a result without resultType was retried")
}
