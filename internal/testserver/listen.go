package testserver

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// listen is one modern subscriptions/listen stream.
type listen struct {
	id      jsonrpc.ID
	out     outbound
	tools   bool // written once before registration
	prompts bool
	res     bool
	uris    []string
	taskIDs map[string]bool
	end     chan struct{} // closed (once) to end the listen
	endOnce sync.Once
	abort   bool // written before end is closed: end without a response
}

// listenFilter is the SubscriptionFilter of subscriptions/listen.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	TaskIDs               []string `json:"taskIds,omitempty"`
}

// listen serves subscriptions/listen: acknowledge, then forward matching
// notifications until the client ends the stream or EndListens.
func (s *Server) listen(c *call) reply {
	raw, ok := c.params["notifications"]
	if !ok {
		return errReply(jsonrpc.ErrInvalidParams.WithMessage("missing notifications filter"))
	}
	var f listenFilter
	if err := json.Unmarshal(raw, &f); err != nil {
		return errReply(jsonrpc.ErrInvalidParams.WithMessage("invalid notifications filter"))
	}
	if len(f.TaskIDs) > 0 && !c.hasTasksExtension() {
		return errReply(missingTasksExtension())
	}
	l := &listen{
		id: c.req.ID, out: c.out, tools: f.ToolsListChanged, prompts: f.PromptsListChanged,
		res: f.ResourcesListChanged, uris: f.ResourceSubscriptions, taskIDs: map[string]bool{},
		end: make(chan struct{}),
	}
	for _, id := range f.TaskIDs {
		l.taskIDs[id] = true
	}
	s.mu.Lock()
	s.listens[l] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listens, l)
		s.mu.Unlock()
	}()
	// Every type the filter names is supported, so the honoured subset is
	// the filter itself (with false and empty members dropped).
	l.send(protocol.NotificationSubscriptionsAcknowledged, map[string]any{"notifications": f})
	select {
	case <-l.end:
		if l.abort {
			l.out.send(mustNotification(protocol.NotificationCancelled, map[string]any{"requestId": c.req.ID, "reason": "server ended the subscription"}))
			if st, ok := l.out.(*eventStream); ok {
				st.closeStream()
			}
			return reply{silent: true}
		}
		res := map[string]any{"_meta": map[string]any{protocol.MetaSubscriptionID: c.req.ID}}
		return okReply(s.decorateModern(c, c.req.Method, res))
	case <-c.ctx.Done():
		return reply{silent: true}
	}
}

// send delivers a notification tagged with the listen's subscription id.
func (l *listen) send(method string, params map[string]any) {
	if params == nil {
		params = map[string]any{}
	}
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[protocol.MetaSubscriptionID] = l.id
	params["_meta"] = meta
	n, err := jsonrpc.NewNotification(method, params)
	if err == nil {
		_ = l.out.send(n)
	}
}

func (l *listen) wantsURI(uri string) bool {
	for _, u := range l.uris {
		if u == uri || strings.HasPrefix(uri, strings.TrimSuffix(u, "/")+"/") {
			return true
		}
	}
	return false
}

func (s *Server) activeListens() []*listen {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*listen, 0, len(s.listens))
	for l := range s.listens {
		out = append(out, l)
	}
	return out
}

func (s *Server) notifyListChanged(method string, want func(*listen) bool) {
	for _, l := range s.activeListens() {
		if want(l) {
			l.send(method, nil)
		}
	}
	s.broadcastLegacy(method, map[string]any{}, nil)
}

// NotifyToolsChanged sends notifications/tools/list_changed to every legacy
// session and every listen that asked for it.
func (s *Server) NotifyToolsChanged() {
	s.notifyListChanged(protocol.NotificationToolsListChanged, func(l *listen) bool { return l.tools })
}

// NotifyPromptsChanged sends notifications/prompts/list_changed.
func (s *Server) NotifyPromptsChanged() {
	s.notifyListChanged(protocol.NotificationPromptsListChanged, func(l *listen) bool { return l.prompts })
}

// NotifyResourcesChanged sends notifications/resources/list_changed.
func (s *Server) NotifyResourcesChanged() {
	s.notifyListChanged(protocol.NotificationResourcesListChanged, func(l *listen) bool { return l.res })
}

// NotifyResourceUpdated sends notifications/resources/updated {uri} to the
// listens subscribed to uri (or a parent of it) and to the legacy sessions
// that called resources/subscribe for it.
func (s *Server) NotifyResourceUpdated(uri string) {
	for _, l := range s.activeListens() {
		if l.wantsURI(uri) {
			l.send(protocol.NotificationResourcesUpdated, map[string]any{"uri": uri})
		}
	}
	s.broadcastLegacy(protocol.NotificationResourcesUpdated, map[string]any{"uri": uri}, func(ss *session) bool {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		return ss.subs[uri]
	})
}

// EndListens ends every active listen gracefully: each gets its final
// result ({resultType: "complete", _meta: {subscriptionId}}).
func (s *Server) EndListens() {
	for _, l := range s.activeListens() {
		l.endOnce.Do(func() { close(l.end) })
	}
}

// AbortListens tears every active listen down without a final result:
// the server sends notifications/cancelled referencing the listen id and,
// on HTTP, closes the stream.
func (s *Server) AbortListens() {
	for _, l := range s.activeListens() {
		l.endOnce.Do(func() {
			l.abort = true
			close(l.end)
		})
	}
}

func mustNotification(method string, params any) *jsonrpc.Request {
	n, err := jsonrpc.NewNotification(method, params)
	if err != nil {
		panic(err) // the params are built here from plain values
	}
	return n
}

// notifyTask sends notifications/tasks to the listens watching task id.
func (s *Server) notifyTask(id string, detail map[string]any) {
	for _, l := range s.activeListens() {
		if l.taskIDs[id] {
			p := map[string]any{}
			for k, v := range detail {
				p[k] = v
			}
			l.send(protocol.NotificationTasks, p)
		}
	}
}
