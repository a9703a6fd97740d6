package client

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/protocol"
)

// Roots is a list of roots kept by the client: give it to [WithRoots]
// and change it at any time with Add, Remove and Replace. Every client
// using it answers the server's roots requests from it (legacy
// roots/list, modern input_required rounds) and, in the legacy era,
// tells the server of each change with notifications/roots/list_changed
// (the modern era has no such notification: the server asks when it
// needs the roots). One Roots may serve many clients; its methods are
// safe for concurrent use. The zero value is an empty list ready to use;
// a Roots must not be copied after first use.
type Roots struct {
	mu      sync.Mutex
	list    []protocol.Root
	clients map[*Client]struct{}
}

// checkRoot refuses a root the protocol does not allow: roots are file://
// URIs.
func checkRoot(root protocol.Root) error {
	if !strings.HasPrefix(root.URI, "file://") {
		return newError("roots", KindInvalid, "root %q is not a file:// URI", root.URI)
	}
	return nil
}

// List returns a copy of the roots, in order.
func (r *Roots) List() []protocol.Root {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

// rootsLister serves roots/list from a Roots.
type rootsLister struct{ r *Roots }

func (l rootsLister) ListRoots(context.Context) ([]protocol.Root, error) {
	roots := l.r.List()
	if roots == nil {
		roots = []protocol.Root{}
	}
	return roots, nil
}

// Add appends roots; a root whose URI is already listed replaces it in
// place. A root that is not a file:// URI makes Add change nothing and
// fail with an [*Error] of kind [KindInvalid].
func (r *Roots) Add(roots ...protocol.Root) error {
	for _, root := range roots {
		if err := checkRoot(root); err != nil {
			return err
		}
	}
	r.change(func(l []protocol.Root) ([]protocol.Root, bool) { return upsert(l, roots), len(roots) > 0 })
	return nil
}

// Remove drops the roots with these URIs; unknown URIs are ignored.
func (r *Roots) Remove(uris ...string) {
	r.change(func(l []protocol.Root) ([]protocol.Root, bool) {
		n := len(l)
		l = slices.DeleteFunc(l, func(x protocol.Root) bool { return slices.Contains(uris, x.URI) })
		return l, len(l) != n
	})
}

// Replace sets the whole list (duplicates by URI keep the last). A root
// that is not a file:// URI makes Replace change nothing and fail with
// an [*Error] of kind [KindInvalid].
func (r *Roots) Replace(roots ...protocol.Root) error {
	for _, root := range roots {
		if err := checkRoot(root); err != nil {
			return err
		}
	}
	r.change(func([]protocol.Root) ([]protocol.Root, bool) { return upsert(nil, roots), true })
	return nil
}

// upsert adds roots to l; a root whose URI l lists replaces it in place.
func upsert(l, roots []protocol.Root) []protocol.Root {
	for _, root := range roots {
		if i := slices.IndexFunc(l, func(x protocol.Root) bool { return x.URI == root.URI }); i >= 0 {
			l[i] = root
		} else {
			l = append(l, root)
		}
	}
	return l
}

// change applies f to the list and, when f reports a change, tells every
// client.
func (r *Roots) change(f func([]protocol.Root) ([]protocol.Root, bool)) {
	r.mu.Lock()
	var changed bool
	r.list, changed = f(r.list)
	var clients []*Client
	if changed {
		for c := range r.clients {
			clients = append(clients, c)
		}
	}
	r.mu.Unlock()
	for _, c := range clients {
		select {
		case c.rootsDirty <- struct{}{}:
		default: // a notification is already due; it covers this change
		}
	}
}

// WithRoots makes the client answer roots requests from r (instead of the
// handler's handler.RootsLister, if any) and advertise the roots
// capability, with roots.listChanged in the legacy era: each change of r
// is then sent to the server as notifications/roots/list_changed (changes
// close together may share one). Default: none.
func WithRoots(r *Roots) Option {
	return optionFunc(func(c *config) { c.roots = r })
}

// rootsNotifyTimeout bounds one notifications/roots/list_changed write.
const rootsNotifyTimeout = 10 * time.Second

// watchRoots registers c with its Roots and, in the legacy era, starts
// the goroutine that sends notifications/roots/list_changed for changes.
func (c *Client) watchRoots() {
	r := c.cfg.roots
	if r == nil {
		return
	}
	c.rootsDirty = make(chan struct{}, 1)
	r.mu.Lock()
	if r.clients == nil {
		r.clients = map[*Client]struct{}{}
	}
	r.clients[c] = struct{}{}
	r.mu.Unlock()
	c.wg.Go(func() {
		defer func() {
			r.mu.Lock()
			delete(r.clients, c)
			r.mu.Unlock()
		}()
		for {
			select {
			case <-c.rootsDirty:
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
