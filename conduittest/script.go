package conduittest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// exchange is one recorded client message with the server messages that
// answered it or came with it.
type exchange struct {
	line  int              // transcript line of req
	req   *jsonrpc.Request // the recorded client message
	key   string           // method and normalized params
	token string           // JSON of the progress token in req, or ""
	steps []step
	// answered is set when the transcript holds the server's response;
	// otherwise buildExchanges adds a made-up one (see noResponse), or
	// holds the request open when it was a listen or the client
	// cancelled it.
	answered  bool
	cancelled bool    // the client sent notifications/cancelled for it
	lastMs    float64 // time of the response, then of each later message
	used      bool    // guarded by Replay.mu
}

// step emits a recorded server message or, when await is set, waits for
// the client's answer to the server request emitted just before; hold
// keeps the request open until the client ends it.
type step struct {
	msg   jsonrpc.Message
	await bool
	hold  bool
	// after marks a message the recorded server sent after it answered,
	// unprompted; delay is the recorded gap since the previous message of
	// the exchange (at most maxReplayDelay).
	after bool
	delay time.Duration
}

// maxReplayDelay bounds the recorded gap a replay reproduces.
const maxReplayDelay = time.Second

// replayDelay is the wait for a recorded gap of ms milliseconds, bounded
// before it becomes a Duration: a gap past what one holds (a transcript's
// ms is anything a file says) would otherwise convert to a wrapped value.
func replayDelay(ms float64) time.Duration {
	if ms <= 0 {
		return 0
	}
	if ms >= float64(maxReplayDelay/time.Millisecond) {
		return maxReplayDelay
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// buildExchanges attributes each recorded server message to the client
// message it belongs to: a response to its request; a notification to the
// request its progress token, subscription id or requestId names; any
// other message to the most recent request still unanswered, else to the
// last client message. Messages before the first client message are
// dropped.
func buildExchanges(entries []Entry) []*exchange {
	var all, open []*exchange
	byID := map[string]*exchange{}
	for i, e := range entries {
		msg, err := jsonrpc.DecodeMessage(e.Msg)
		if err != nil {
			continue // ReadTranscript rejects these
		}
		if e.Dir == "send" {
			req, ok := msg.(*jsonrpc.Request)
			if !ok {
				continue // the client's answer to a server request
			}
			x := &exchange{line: i + 1, req: req, key: matchKey(req), token: progressToken(req.Params)}
			all = append(all, x)
			if req.Method == protocol.NotificationCancelled {
				if c := byID[string(bytes.TrimSpace(paramsMap(req.Params)["requestId"]))]; c != nil {
					c.cancelled = true
				}
			}
			if !req.IsNotification() {
				byID[idKey(req.ID)] = x
				open = append(open, x)
			}
			continue
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			if x := byID[idKey(resp.ID)]; x != nil {
				x.steps = append(x.steps, step{msg: resp})
				x.answered, x.lastMs = true, e.Ms
				delete(byID, idKey(resp.ID))
				open = slices.DeleteFunc(open, func(o *exchange) bool { return o == x })
			}
			continue
		}
		req := msg.(*jsonrpc.Request)
		x := owner(req, open, all)
		if x == nil {
			continue
		}
		st := step{msg: req}
		if x.answered {
			st.after = true
			st.delay = replayDelay(e.Ms - x.lastMs)
			x.lastMs = e.Ms
		}
		x.steps = append(x.steps, st)
		if !req.IsNotification() {
			x.steps = append(x.steps, step{await: true})
		}
	}
	for _, x := range all {
		switch {
		case x.answered || x.req.IsNotification():
		case x.cancelled || x.req.Method == protocol.MethodSubscriptionsListen:
			x.steps = append(x.steps, step{hold: true})
		default:
			x.steps = append(x.steps, step{msg: noResponse(x)})
		}
	}
	return all
}

// noResponse is the answer to a recorded request whose response the
// transcript lacks: the server answered with something that is not a
// JSON-RPC message (an HTTP status), did not answer, or the recording
// ended first. The probe gets -32601, which a client reads as legacy
// evidence on every transport, as it read the original answer (it went on
// with initialize); any other request gets [CodeNotInTranscript].
func noResponse(x *exchange) *jsonrpc.Response {
	if x.req.Method == protocol.MethodDiscover {
		return jsonrpc.NewErrorResponse(x.req.ID, jsonrpc.NewError(-32601, "Method not found"))
	}
	return jsonrpc.NewErrorResponse(x.req.ID, jsonrpc.NewError(CodeNotInTranscript,
		fmt.Sprintf("conduittest: the transcript has no response to this request (line %d)", x.line)))
}

// owner finds the exchange a server request or notification belongs to.
func owner(req *jsonrpc.Request, open, all []*exchange) *exchange {
	p := paramsMap(req.Params)
	if tok, ok := p["progressToken"]; ok {
		for _, x := range open {
			if x.token != "" && x.token == string(tok) {
				return x
			}
		}
	}
	var ref json.RawMessage
	if meta := paramsMap(p["_meta"]); meta[protocol.MetaSubscriptionID] != nil {
		ref = meta[protocol.MetaSubscriptionID]
	} else if p["requestId"] != nil {
		ref = p["requestId"]
	}
	if ref != nil {
		for _, x := range open {
			if idKey(x.req.ID) == string(bytes.TrimSpace(ref)) {
				return x
			}
		}
	}
	if len(open) > 0 {
		return open[len(open)-1]
	}
	if len(all) > 0 {
		return all[len(all)-1]
	}
	return nil
}

func idKey(id jsonrpc.ID) string { return string(id.AppendJSON(nil)) }

func paramsMap(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m
}

// progressToken returns the JSON of params._meta.progressToken, or "".
func progressToken(params json.RawMessage) string {
	tok := paramsMap(paramsMap(params)["_meta"])[protocol.MetaProgressToken]
	return string(bytes.TrimSpace(tok))
}

// normalize decodes params for comparison, keeping of _meta only the keys
// in metaKeep.
func normalize(params json.RawMessage) any {
	if len(bytes.TrimSpace(params)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(params))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return string(params)
	}
	if m, ok := v.(map[string]any); ok {
		if meta, ok := m["_meta"].(map[string]any); ok {
			kept := map[string]any{}
			for _, k := range metaKeep {
				if mv, ok := meta[k]; ok {
					kept[k] = mv
				}
			}
			delete(m, "_meta")
			if len(kept) > 0 {
				m["_meta"] = kept
			}
		}
		if len(m) == 0 {
			return nil
		}
	}
	return v
}

func matchKey(req *jsonrpc.Request) string {
	// Redacted as a Recorder redacts, so a live credential matches the
	// recorded [REDACTED].
	b, _ := json.Marshal(normalize(redactJSON(req.Params))) // map keys sorted
	return req.Method + "\x00" + string(b)
}

// match returns the exchange that answers live: the first unused one with
// the same key and a recorded response, else the first unused one, else
// the last used one. Without a match it returns the mismatch report.
func (r *Replay) match(live *jsonrpc.Request) (*exchange, string) {
	key := matchKey(live)
	r.mu.Lock()
	defer r.mu.Unlock()
	if l := r.byKey[matchIndex{key, live.IsNotification()}]; l != nil {
		if x := l.take(); x != nil {
			return x, ""
		}
	}
	return nil, r.diffReport(live)
}

// matchIndex is what a live message must share with a recorded one to
// match it.
type matchIndex struct {
	key          string
	notification bool
}

// matchList is the recorded messages of one [matchIndex], in transcript
// order, with cursors that only move forward, so that replaying a
// transcript costs time linear in it.
type matchList struct {
	xs []*exchange
	// answered and other are the indexes of the first exchange that may
	// be unused among those with a recorded response (or notifications)
	// and among the others; last is the index of the last one used, or
	// -1. Guarded by Replay.mu.
	answered, other, last int
}

// indexExchanges groups xs by what a live message must share to match.
func indexExchanges(xs []*exchange) map[matchIndex]*matchList {
	m := map[matchIndex]*matchList{}
	for _, x := range xs {
		k := matchIndex{x.key, x.req.IsNotification()}
		l := m[k]
		if l == nil {
			l = &matchList{last: -1}
			m[k] = l
		}
		l.xs = append(l.xs, x)
	}
	return m
}

// take marks used and returns the exchange match picks from l, or nil
// when l has none.
func (l *matchList) take() *exchange {
	complete := func(x *exchange) bool { return x.answered || x.req.IsNotification() }
	for ; l.answered < len(l.xs); l.answered++ {
		if x := l.xs[l.answered]; !x.used && complete(x) {
			return l.use(l.answered)
		}
	}
	for ; l.other < len(l.xs); l.other++ {
		if x := l.xs[l.other]; !x.used && !complete(x) {
			return l.use(l.other)
		}
	}
	if l.last >= 0 {
		return l.xs[l.last]
	}
	return nil
}

func (l *matchList) use(i int) *exchange {
	l.xs[i].used = true
	l.last = max(l.last, i)
	return l.xs[i]
}

// diffReport describes live against the nearest recorded request: the
// one of the same method with the fewest differing params, listed as
// "- path: recorded" and "+ path: live" lines.
func (r *Replay) diffReport(live *jsonrpc.Request) string {
	got := flatten(normalize(live.Params))
	var best *exchange
	var bestDiff []string
	methods := map[string]bool{}
	for _, x := range r.exchanges {
		methods[x.req.Method] = true
		if x.req.Method != live.Method {
			continue
		}
		d := diffLines(flatten(normalize(x.req.Params)), got)
		if best == nil || len(d) < len(bestDiff) {
			best, bestDiff = x, d
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "conduittest: replay: the transcript has no request matching %s (id %s)", live.Method, idKey(live.ID))
	if best == nil {
		names := make([]string, 0, len(methods))
		for m := range methods {
			names = append(names, m)
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "\nno recorded request has method %s; recorded methods: %s", live.Method, strings.Join(names, ", "))
		return b.String()
	}
	fmt.Fprintf(&b, "\nnearest recorded request (transcript line %d), - recorded, + sent:", best.line)
	for _, l := range bestDiff {
		b.WriteString("\n  " + l)
	}
	return b.String()
}

// flatten maps every leaf of v to its JSON text, keyed by a path such as
// params.arguments.text or params.items[2].
func flatten(v any) map[string]string {
	out := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case map[string]any:
			if len(t) == 0 {
				out[path] = "{}"
			}
			for k, e := range t {
				walk(path+"."+k, e)
			}
		case []any:
			if len(t) == 0 {
				out[path] = "[]"
			}
			for i, e := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		default:
			b, _ := json.Marshal(t)
			out[path] = string(b)
		}
	}
	walk("params", v)
	return out
}

// diffLines lists the paths whose values differ, sorted by path.
func diffLines(want, got map[string]string) []string {
	paths := map[string]bool{}
	for p := range want {
		paths[p] = true
	}
	for p := range got {
		paths[p] = true
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	var out []string
	for _, p := range sorted {
		w, wok := want[p]
		g, gok := got[p]
		if wok && gok && w == g {
			continue
		}
		if wok {
			out = append(out, "- "+p+": "+w)
		}
		if gok {
			out = append(out, "+ "+p+": "+g)
		}
	}
	return out
}

// remap rewrites a recorded server message for the live request: the
// response id, the progress token and references to the request id.
func remap(msg jsonrpc.Message, rec, live *jsonrpc.Request) jsonrpc.Message {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		return &jsonrpc.Response{ID: live.ID, Result: m.Result, Error: m.Error}
	case *jsonrpc.Request:
		p := paramsMap(m.Params)
		if p == nil {
			return m
		}
		recID, liveID := idKey(rec.ID), json.RawMessage(idKey(live.ID))
		changed := false
		if tok, ok := p["progressToken"]; ok && string(bytes.TrimSpace(tok)) == progressToken(rec.Params) {
			if lt := progressToken(live.Params); lt != "" {
				p["progressToken"], changed = json.RawMessage(lt), true
			}
		}
		if ref, ok := p["requestId"]; ok && string(bytes.TrimSpace(ref)) == recID {
			p["requestId"], changed = liveID, true
		}
		if meta := paramsMap(p["_meta"]); meta != nil && string(bytes.TrimSpace(meta[protocol.MetaSubscriptionID])) == recID {
			meta[protocol.MetaSubscriptionID] = liveID
			p["_meta"], _ = json.Marshal(meta)
			changed = true
		}
		if !changed {
			return m
		}
		b, err := json.Marshal(p)
		if err != nil {
			return m
		}
		return &jsonrpc.Request{ID: m.ID, Method: m.Method, Params: b}
	}
	return msg
}
