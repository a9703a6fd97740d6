package client

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/protocol"
)

// WithRoots makes the client keep a list of roots, starting with roots
// (none is an empty list), and answer the server's roots requests from
// it (legacy roots/list, modern input_required rounds) instead of the
// handler's handler.RootsLister, if any; [Client.SetRoots] changes it.
// The client advertises the roots capability, with roots.listChanged in
// the legacy era. A root that is not a file:// URI makes [Connect] and
// [Dial] fail with an [*Error] of kind [KindInvalid]; of roots with the
// same URI the last is kept. Default: no list of the client's own.
func WithRoots(roots ...protocol.Root) Option {
	roots = slices.Clone(roots)
	return optionFunc(func(c *config) { c.roots, c.hasRoots = roots, true })
}

// SetRoots replaces the client's list of roots (of roots with the same
// URI the last is kept). In the legacy era the server is then told with
// notifications/roots/list_changed (changes close together may share
// one); the modern era has no such notification: the next input round
// that asks for the roots gets the new list. SetRoots does not wait for
// the notification; a failure to send it is logged.
//
// A root that is not a file:// URI makes SetRoots change nothing and fail
// with an [*Error] of kind [KindInvalid], as does a client connected
// without [WithRoots]. It is safe for concurrent use. To keep the roots
// of several clients alike, call SetRoots on each.
func (c *Client) SetRoots(roots ...protocol.Root) error {
	const op = "roots"
	rl, ok := c.listeners.RootsLister.(*rootList)
	if !ok {
		return newError(op, KindInvalid, "the client was connected without WithRoots")
	}
	if err := checkRoots(op, roots); err != nil {
		return err
	}
	rl.set(roots)
	return nil
}

// checkRoots refuses a root the protocol does not allow: roots are
// file:// URIs.
func checkRoots(op string, roots []protocol.Root) error {
	for _, root := range roots {
		if !strings.HasPrefix(root.URI, "file://") {
			return newError(op, KindInvalid, "root %q is not a file:// URI", root.URI)
		}
	}
	return nil
}

// rootList is the list of [WithRoots]; it serves roots requests as the
// client's handler.RootsLister.
type rootList struct {
	mu    sync.Mutex
	list  []protocol.Root // guarded by mu
	dirty chan struct{}   // cap 1: a change to notify (legacy)
}

// newRootList returns a list holding roots, deduplicated by URI.
func newRootList(roots []protocol.Root) *rootList {
	return &rootList{list: dedupRoots(roots), dirty: make(chan struct{}, 1)}
}

// ListRoots implements handler.RootsLister.
func (r *rootList) ListRoots(context.Context) ([]protocol.Root, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]protocol.Root{}, r.list...), nil
}

// set replaces the list and marks it for a change notification.
func (r *rootList) set(roots []protocol.Root) {
	l := dedupRoots(roots)
	r.mu.Lock()
	r.list = l
	r.mu.Unlock()
	select {
	case r.dirty <- struct{}{}:
	default: // a notification is already due; it covers this change
	}
}

// dedupRoots returns a copy of roots in order, a later root with the URI
// of an earlier one replacing it in place.
func dedupRoots(roots []protocol.Root) []protocol.Root {
	var l []protocol.Root
	for _, root := range roots {
		if i := slices.IndexFunc(l, func(x protocol.Root) bool { return x.URI == root.URI }); i >= 0 {
			l[i] = root
		} else {
			l = append(l, root)
		}
	}
	return l
}

// rootsNotifyTimeout bounds one notifications/roots/list_changed write.
const rootsNotifyTimeout = 10 * time.Second

// watchRoots starts, for a client with [WithRoots], the goroutine that
// sends notifications/roots/list_changed for changes (a no-op in the
// modern era, see notifyRootsChanged).
func (c *Client) watchRoots() {
	rl, ok := c.listeners.RootsLister.(*rootList)
	if !ok {
		return
	}
	c.wg.Go(func() {
		for {
			select {
			case <-rl.dirty:
			case <-c.closed:
				return
			case <-c.sess.Done():
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), rootsNotifyTimeout)
			if err := c.notifyRootsChanged(ctx); err != nil {
				c.cfg.logger.Warn("sending notifications/roots/list_changed", "err", err)
			}
			cancel()
		}
	})
}
