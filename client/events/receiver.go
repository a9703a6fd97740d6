package events

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/client"
)

// Receiver is the http.Handler an application serves at a webhook
// callback URL: it verifies each delivery's Standard Webhooks signature
// with the secret of the subscription it names (X-MCP-Subscription-Id),
// refuses timestamps more than Tolerance away, answers the verification
// handshake, and hands events, gap and terminated envelopes to the
// [Subscription]. The zero value is ready to use; one Receiver may serve
// many subscriptions.
//
// Answers: 204 for an accepted delivery (or a duplicate), 200 with the
// challenge for a verification, 400 for a malformed or stale one, 401
// for a bad signature, 405 for a method other than POST, 413 for a body
// over 1 MiB, and 503 when the subscription is not known yet or its
// consumer is behind (the server retries those).
type Receiver struct {
	// Tolerance is how far a delivery's webhook-timestamp may be from
	// now; zero or negative selects 5 minutes.
	Tolerance time.Duration

	mu   sync.Mutex
	subs map[*Subscription]*hook // guarded by mu
	byID map[string]*hook        // guarded by mu
}

// hook is one registered subscription.
type hook struct {
	s   *Subscription
	key []byte // the decoded secret
	id  string // "" until known
}

// maxDelivery bounds a delivery body.
const maxDelivery = 1 << 20

var _ http.Handler = (*Receiver)(nil)

func (r *Receiver) register(s *Subscription, secret string) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) < 24 || len(key) > 64 {
		return &client.Error{Op: MethodSubscribe, Kind: client.KindInvalid, Err: errors.New("the webhook secret must be whsec_ and the base64 of 24 to 64 bytes")}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.subs == nil {
		r.subs, r.byID = map[*Subscription]*hook{}, map[string]*hook{}
	}
	r.subs[s] = &hook{s: s, key: key}
	return nil
}

func (r *Receiver) unregister(s *Subscription) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.subs[s]; h != nil {
		if r.byID[h.id] == h {
			delete(r.byID, h.id)
		}
		delete(r.subs, s)
	}
}

// bind records the server's id of s's subscription.
func (r *Receiver) bind(s *Subscription, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.subs[s]; h != nil && id != "" {
		h.id = id
		r.byID[id] = h
	}
}

// candidates are the hooks whose secret may sign a delivery for id: its
// own, or, for an id not bound yet (a verification during the first
// subscribe), every unbound one.
func (r *Receiver) candidates(id string) []*hook {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.byID[id]; h != nil {
		return []*hook{h}
	}
	var out []*hook
	for _, h := range r.subs {
		if h.id == "" {
			out = append(out, h)
		}
	}
	return out
}

// ServeHTTP handles one delivery.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxDelivery+1))
	if err != nil {
		http.Error(w, "reading the body", http.StatusBadRequest)
		return
	}
	if len(body) > maxDelivery {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	h, status, msg := r.authenticate(req, body)
	if h == nil {
		http.Error(w, msg, status)
		return
	}
	r.dispatch(w, h, req.Header.Get("X-MCP-Subscription-Id"), body)
}

// authenticate finds the hook whose secret signed the delivery.
func (r *Receiver) authenticate(req *http.Request, body []byte) (*hook, int, string) {
	id, ts, sigs := req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp"), req.Header.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return nil, http.StatusBadRequest, "missing webhook-id, webhook-timestamp or webhook-signature"
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, http.StatusBadRequest, "malformed webhook-timestamp"
	}
	tol := r.Tolerance
	if tol <= 0 {
		tol = 5 * time.Minute
	}
	if d := time.Since(time.Unix(sec, 0)); d > tol || d < -tol {
		return nil, http.StatusBadRequest, "webhook-timestamp outside the tolerance"
	}
	cands := r.candidates(req.Header.Get("X-MCP-Subscription-Id"))
	if len(cands) == 0 {
		return nil, http.StatusServiceUnavailable, "unknown subscription"
	}
	for _, h := range cands {
		if verify(h.key, id, ts, body, sigs) {
			return h, 0, ""
		}
	}
	return nil, http.StatusUnauthorized, "bad signature"
}

// verify reports whether one of the space-separated v1 signatures is the
// HMAC-SHA256 of id.ts.body under key.
func verify(key []byte, id, ts string, body []byte, sigs string) bool {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, sig := range strings.Fields(sigs) {
		v, ok := strings.CutPrefix(sig, "v1,")
		if !ok {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(v)
		if err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

// dispatch acts on an authenticated delivery.
func (r *Receiver) dispatch(w http.ResponseWriter, h *hook, id string, body []byte) {
	var env map[string]json.RawMessage
	if json.Unmarshal(body, &env) != nil {
		http.Error(w, "body is not a JSON object", http.StatusBadRequest)
		return
	}
	s := h.s
	if raw, ok := env["type"]; ok {
		var typ, challenge string
		_ = json.Unmarshal(raw, &typ)
		switch typ {
		case "verification":
			_ = json.Unmarshal(env["challenge"], &challenge)
			r.bind(s, id)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"challenge": challenge})
			return
		case "gap":
			var c *string
			_ = json.Unmarshal(env["cursor"], &c)
			if ok, _ := s.offer(Event{Name: s.name, Gap: true}); !ok {
				http.Error(w, "consumer behind", http.StatusServiceUnavailable)
				return
			}
			s.setCursor(c)
		case "terminated":
			select {
			case s.term <- s.terminated(body):
			default:
			}
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var o occurrenceWire
	if json.Unmarshal(body, &o) != nil || o.EventID == "" {
		http.Error(w, "not an event occurrence", http.StatusBadRequest)
		return
	}
	ok, dup := s.offer(o.event())
	if !ok {
		http.Error(w, fmt.Sprintf("subscription %q cannot take the event now", s.name), http.StatusServiceUnavailable)
		return
	}
	if !dup {
		s.setCursor(o.Cursor)
	}
	w.WriteHeader(http.StatusNoContent)
}
