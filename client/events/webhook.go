package events

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"time"
)

// subscribeResult is the result of events/subscribe.
type subscribeResult struct {
	ID            string  `json:"id"`
	RefreshBefore *string `json:"refreshBefore"`
	Cursor        *string `json:"cursor"`
	Truncated     bool    `json:"truncated"`
}

// newSecret returns a Standard Webhooks secret of 32 random bytes.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// runWebhook subscribes, refreshes before each grant expires, and
// unsubscribes when the subscription stops.
func (s *Subscription) runWebhook(ready chan<- error) error {
	w := s.opts.Webhook
	secret := w.Secret
	if secret == "" {
		secret = newSecret()
	}
	if r := w.Receiver; r != nil {
		if err := r.register(s, secret); err != nil {
			ready <- err
			return err
		}
		defer r.unregister(s)
	}
	// short counts the grants in a row that left no time to wait (an
	// unreadable or past refreshBefore): their refreshes back off.
	failures, short := 0, 0
	var expires time.Time // zero: no grant yet, or no expiry
	for first := true; ; {
		res, err := s.subscribeOnce(secret)
		if s.stopped() {
			s.unsubscribe()
			return nil
		}
		wait := s.refreshWait(res, err == nil)
		if err != nil {
			if first {
				ready <- err
				return err
			}
			if failures++; terminal(err) || failures >= maxFailures {
				return err
			}
			wait = s.backoff(failures - 1)
			if !expires.IsZero() {
				// Retry sooner than the backoff when the grant ends first.
				wait = min(wait, max(time.Until(expires)/2, 0))
			}
		} else {
			failures = 0
			expires = grantEnd(res)
			if wait > minRefresh {
				short = 0
			} else {
				wait = max(wait, s.backoff(short))
				short++
			}
			s.mu.Lock()
			s.id = res.ID
			s.mu.Unlock()
			if r := w.Receiver; r != nil {
				r.bind(s, res.ID)
			}
			if res.Truncated && res.Cursor != nil {
				s.offer(Event{Name: s.name, Gap: true})
			}
			s.setCursor(res.Cursor)
			if first {
				first = false
				ready <- nil
			}
		}
		if err := s.waitWebhook(wait); err != nil {
			return err
		}
		if s.stopped() {
			s.unsubscribe()
			return nil
		}
	}
}

// waitWebhook waits d, or until the subscription stops (nil) or is
// terminated (its error).
func (s *Subscription) waitWebhook(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.stop:
	case <-s.ec.c.Done():
	case err := <-s.term:
		return err
	}
	return nil
}

// subscribeOnce sends one events/subscribe.
func (s *Subscription) subscribeOnce(secret string) (subscribeResult, error) {
	w := s.opts.Webhook
	p := s.params()
	p["delivery"] = map[string]any{"mode": "webhook", "url": w.URL, "secret": secret}
	switch {
	case w.TTL > 0:
		p["ttlMs"] = w.TTL.Milliseconds()
	case w.TTL < 0:
		p["ttlMs"] = nil
	}
	var res subscribeResult
	err := s.ec.c.Call(s.ctx, MethodSubscribe, p, &res)
	return res, err
}

// grantEnd is when a grant expires; zero for no expiry.
func grantEnd(res subscribeResult) time.Time {
	if res.RefreshBefore == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, *res.RefreshBefore)
	if err != nil {
		return time.Now() // unreadable: refresh at once (the wait floor applies)
	}
	return t
}

// minRefresh keeps a server granting very short (or past) lifetimes from
// inducing a tight refresh loop; grants in a row that leave no more than
// it are refreshed with a growing backoff (see runWebhook).
const minRefresh = 100 * time.Millisecond

// refreshWait is the wait before the refresh after res: two thirds of the
// grant's remaining time (of the longest Duration for a grant that ends
// further ahead), or NoExpiryRefresh for no expiry.
func (s *Subscription) refreshWait(res subscribeResult, ok bool) time.Duration {
	if !ok {
		return 0
	}
	end := grantEnd(res)
	if end.IsZero() {
		if d := s.opts.Webhook.NoExpiryRefresh; d > 0 {
			return d
		}
		return time.Hour
	}
	// time.Until saturates; taking a third away, rather than doubling,
	// cannot wrap around.
	left := time.Until(end)
	return max(left-left/3, minRefresh)
}

// unsubscribe sends events/unsubscribe, bounded by closeTimeout.
func (s *Subscription) unsubscribe() {
	select {
	case <-s.ec.c.Done():
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	p := map[string]any{"name": s.name, "delivery": map[string]any{"url": s.opts.Webhook.URL}}
	if s.args != nil {
		p["arguments"] = s.args
	}
	_ = s.ec.c.Call(ctx, MethodUnsubscribe, p, nil)
}
