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
