package testserver

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// inputTools are the tools that exercise input answered in several
// rounds, URL elicitation required (-32042) and roots kept by the client.
var inputTools []*toolDef

func init() {
	inputTools = []*toolDef{
		{name: "ask_rounds", description: "Asks one elicitation per round, for rounds rounds (default 2); the answers are joined.",
			input: `{"type":"object","properties":{"rounds":{"type":"integer"}}}`, run: toolAskRounds},
		{name: "url_required", description: "2025-11-25: answers -32042 (URL elicitation required) until the elicitation completed; complete=false never completes it.",
			input: `{"type":"object","properties":{"complete":{"type":"boolean"}}}`, run: toolURLRequired},
		{name: "task_input", description: "2025-11-25: sends a task-augmented sampling (kind sample) or elicitation (kind elicit) request and follows the client's task; cancel=true cancels it.",
			input: `{"type":"object","properties":{"kind":{"type":"string"},"cancel":{"type":"boolean"}}}`, run: toolTaskInput},
	}
}

// inputState is what the input tools remember per server.
type inputState struct {
	mu        sync.Mutex
	urlSeq    int
	urlByConn map[*session]*urlElicitation
	roots     []string // the roots a legacy client last listed after list_changed
	rootsSeen int      // how many times they were fetched after list_changed
}

type urlElicitation struct {
	id   string
	done bool
}

// askName is the elicitation one round of ask_rounds sends.
func askName(round int) inputRequest {
	return inputRequest{Method: protocol.MethodElicitationCreate, Params: map[string]any{
		"message":         "Answer " + strconv.Itoa(round),
		"requestedSchema": json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}}
}

// elicitedName reads the name an accepted elicitation answer carries.
func elicitedName(raw json.RawMessage) (string, *jsonrpc.Error) {
	var er protocol.ElicitResult
	if json.Unmarshal(raw, &er) != nil {
		return "", jsonrpc.ErrInvalidParams.WithMessage("invalid elicitation response")
	}
	if er.Action != protocol.ElicitAccept {
		return er.Action, nil
	}
	return fmt.Sprint(er.Content["name"]), nil
}

// toolAskRounds needs rounds answers, one round at a time. Modern: round
// r sends input request "q<r>" with a sealed requestState naming r and
// the answers so far; legacy: one elicitation/create after the other.
func toolAskRounds(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	rounds := min(max(argInt(args, "rounds", 2), 1), 50)
	if !c.modern {
		names := ""
		for r := range rounds {
			raw, err := c.ask(protocol.MethodElicitationCreate, askName(r).Params)
			if err != nil {
				return nil, err
			}
			n, nerr := elicitedName(raw)
			if nerr != nil {
				return nil, nerr
			}
			names += n + ";"
		}
		return textResult(names), nil
	}
	if err := checkInputCaps(c, map[string]inputRequest{"q0": askName(0)}); err != nil {
		return nil, err
	}
	r, names := 0, ""
	if raw, ok := c.params["requestState"]; ok {
		var tok string
		st, valid := requestState{}, false
		if json.Unmarshal(raw, &tok) == nil {
			st, valid = s.openState(tok)
		}
		if !valid || st.Name != "ask_rounds" {
			return nil, jsonrpc.ErrInvalidParams.WithMessage("invalid requestState")
		}
		r, names = st.Round, st.Nonce
		var responses map[string]json.RawMessage
		c.param("inputResponses", &responses)
		if a, ok := responses["q"+strconv.Itoa(r)]; ok {
			n, nerr := elicitedName(a)
			if nerr != nil {
				return nil, nerr
			}
			names += n + ";"
			r++
		}
	}
	if r >= rounds {
		return textResult(names), nil
	}
	key := "q" + strconv.Itoa(r)
	return map[string]any{
		"resultType":    protocol.ResultTypeInputRequired,
		"inputRequests": map[string]inputRequest{key: askName(r)},
		"requestState":  s.sealState(requestState{Method: c.req.Method, Name: "ask_rounds", Keys: []string{key}, Round: r, Nonce: names}),
	}, nil
}

// toolURLRequired answers the 2025-11-25 URLElicitationRequiredError
// (-32042) until the session's URL elicitation completed; 30ms after the
// error it sends notifications/elicitation/complete (unless
// complete=false). Modern servers must not send -32042: there it fails
// with invalid params.
func toolURLRequired(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	if c.modern || c.sess == nil {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("url_required is a 2025-11-25 tool")
	}
	complete := true
	if v, ok := args["complete"].(bool); ok {
		complete = v
	}
	in := &s.in
	in.mu.Lock()
	if in.urlByConn == nil {
		in.urlByConn = map[*session]*urlElicitation{}
	}
	u := in.urlByConn[c.sess]
	if u != nil && u.done {
		delete(in.urlByConn, c.sess)
		in.mu.Unlock()
		return textResult("signed in (" + u.id + ")"), nil
	}
	if u == nil {
		in.urlSeq++
		u = &urlElicitation{id: "consent-" + strconv.Itoa(in.urlSeq)}
		in.urlByConn[c.sess] = u
	}
	id := u.id
	in.mu.Unlock()
	if complete {
		ss := c.sess
		s.goTracked(func() {
			t := time.NewTimer(30 * time.Millisecond)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ss.ctx.Done():
				return
			}
			in.mu.Lock()
			u.done = true
			in.mu.Unlock()
			ss.sendNotification(protocol.NotificationElicitationComplete, map[string]any{"elicitationId": id})
		})
	}
	return nil, jsonrpc.ErrURLElicitationRequired.WithMessage("this tool needs you to sign in").WithData(map[string]any{"elicitations": []any{map[string]any{
		"mode": protocol.ElicitModeURL, "elicitationId": id, "url": "https://example.com/consent?id=" + id, "message": "Please sign in",
	}}})
}

// rootsChanged answers a legacy notifications/roots/list_changed the way
// a server that uses roots does: it lists the client's roots again, on
// the session's stream, and remembers them ([Server.Roots]).
func (s *Server) rootsChanged(ss *session) {
	if ss == nil {
		return
	}
	s.goTracked(func() {
		raw, err := ss.request(ss.ctx, ss.notifyOut, protocol.MethodRootsList, map[string]any{})
		if err != nil {
			return
		}
		var lr protocol.ListRootsResult
		if json.Unmarshal(raw, &lr) != nil {
			return
		}
		uris := make([]string, len(lr.Roots))
		for i, r := range lr.Roots {
			uris[i] = r.URI
		}
		s.in.mu.Lock()
		s.in.roots, s.in.rootsSeen = uris, s.in.rootsSeen+1
		s.in.mu.Unlock()
	})
}

// Roots returns the roots a legacy client listed when the server asked
// again after notifications/roots/list_changed, and how many times it
// asked.
func (s *Server) Roots() ([]string, int) {
	s.in.mu.Lock()
	defer s.in.mu.Unlock()
	return append([]string(nil), s.in.roots...), s.in.rootsSeen
}

// toolTaskInput (2025-11-25) sends a task-augmented sampling/createMessage
// (kind "sample", the default) or elicitation/create (kind "elicit") to a
// client that declared it may run them as tasks, then follows the task
// as a requestor: tasks/list must list it, tasks/get is polled until the
// task is terminal (or, with cancel=true, tasks/cancel ends it first),
// and tasks/result gives the underlying result. The text reports the
// final status and the result's content.
func toolTaskInput(s *Server, c *call, args map[string]any) (map[string]any, *jsonrpc.Error) {
	if c.modern || c.version != protocol.Version20251125 {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("task_input is a 2025-11-25 tool")
	}
	method, params := protocol.MethodSamplingCreateMessage, map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": protocol.TextContent("Capital of France?")}},
		"maxTokens": 50,
	}
	if argString(args, "kind", "sample") == "elicit" {
		method, params = protocol.MethodElicitationCreate, askName(0).Params.(map[string]any)
	}
	if !clientTaskable(c.caps.Tasks, method) {
		return nil, jsonrpc.ErrInvalidParams.WithMessage("the client did not declare tasks.requests for " + method)
	}
	params["task"] = map[string]any{"ttl": 60_000}
	raw, err := c.ask(method, params)
	if err != nil {
		return nil, err
	}
	var created protocol.CreateTaskResult
	if json.Unmarshal(raw, &created) != nil || created.Task.TaskID == "" || created.Task.Status != protocol.TaskWorking {
		return nil, jsonrpc.ErrInternal.WithMessage("the client did not answer with a working task: " + string(raw))
	}
	id := created.Task.TaskID
	if err := checkListed(c, id); err != nil {
		return nil, err
	}
	if args["cancel"] == true {
		raw, err := c.ask(protocol.MethodTasksCancel, map[string]any{"taskId": id})
		if err != nil {
			return nil, err
		}
		var t protocol.GetTaskResult
		if json.Unmarshal(raw, &t) != nil || t.Status != protocol.TaskCancelled {
			return nil, jsonrpc.ErrInternal.WithMessage("tasks/cancel did not cancel: " + string(raw))
		}
	}
	status, err := pollClientTask(c, id)
	if err != nil {
		return nil, err
	}
	if status != protocol.TaskCompleted {
		return textResult(string(status)), nil
	}
	res, err := c.ask(protocol.MethodTasksResult, map[string]any{"taskId": id})
	if err != nil {
		return nil, err
	}
	var m struct {
		Meta protocol.Meta `json:"_meta"`
	}
	var rel protocol.RelatedTaskMetadata
	if json.Unmarshal(res, &m) != nil || !m.Meta.Lookup(protocol.MetaRelatedTask, &rel) || rel.TaskID != id {
		return nil, jsonrpc.ErrInternal.WithMessage("tasks/result lacks the related-task _meta: " + string(res))
	}
	return textResult(string(status) + " " + string(res)), nil
}

// clientTaskable reports whether the client's tasks capability lists method.
func clientTaskable(t *protocol.ClientTasksCapability, method string) bool {
	if t == nil || t.Requests == nil {
		return false
	}
	if method == protocol.MethodSamplingCreateMessage {
		return t.Requests.Sampling != nil && t.Requests.Sampling.CreateMessage != nil
	}
	return t.Requests.Elicitation != nil && t.Requests.Elicitation.Create != nil
}

// checkListed asks tasks/list and requires id in it.
func checkListed(c *call, id string) *jsonrpc.Error {
	raw, err := c.ask(protocol.MethodTasksList, map[string]any{})
	if err != nil {
		return err
	}
	var lr protocol.ListTasksResult
	if json.Unmarshal(raw, &lr) != nil {
		return jsonrpc.ErrInternal.WithMessage("malformed tasks/list result")
	}
	for _, t := range lr.Tasks {
		if t.TaskID == id {
			return nil
		}
	}
	return jsonrpc.ErrInternal.WithMessage("tasks/list does not list " + id)
}

// pollClientTask polls tasks/get until the task is terminal (bounded).
func pollClientTask(c *call, id string) (protocol.TaskStatus, *jsonrpc.Error) {
	for range 500 {
		raw, err := c.ask(protocol.MethodTasksGet, map[string]any{"taskId": id})
		if err != nil {
			return "", err
		}
		var t protocol.GetTaskResult
		if json.Unmarshal(raw, &t) != nil || t.TaskID != id {
			return "", jsonrpc.ErrInternal.WithMessage("malformed tasks/get result: " + string(raw))
		}
		if t.Status.Terminal() {
			return t.Status, nil
		}
		tm := time.NewTimer(10 * time.Millisecond)
		select {
		case <-tm.C:
		case <-c.ctx.Done():
			tm.Stop()
			return "", jsonrpc.ErrRequestCancelled
		}
	}
	return "", jsonrpc.ErrInternal.WithMessage("the client's task never finished")
}

// tellStatusLocked sends a legacy task's new status to its session
// (notifications/tasks/status), off the caller's goroutine. s.mu must be
// held.
func (s *Server) tellStatusLocked(t *task) {
	if t.modern || t.sess == nil {
		return
	}
	if s.closed {
		return
	}
	fields, ss := t.fieldsLocked(), t.sess
	s.wg.Add(1) // goTracked would take s.mu again
	go func() {
		defer s.wg.Done()
		ss.sendNotification(protocol.NotificationTasksStatus, fields)
	}()
}
