package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/protocol"
)

var listenCommand = &command{
	name:    "listen",
	args:    "[TARGET]",
	summary: "print list changes and resource updates until interrupted",
	detail: `Subscribes to the server's change notifications — tools, prompts and resources
list changes, and updates of resources — and prints each as it arrives until
Ctrl-C (which ends listen with exit status 0). Without --uri every listed
resource is watched when the server supports resource subscriptions.

In the modern era this is one subscriptions/listen stream, re-opened with
backoff when it drops (a "resync" event marks the gap); in the legacy era it is
resources/subscribe plus the session's notifications. A line on stderr says
what the server acknowledged.`,
	examples: `conduit listen https://example.com/mcp
conduit listen --uri file:///config.json --json -- ./my-server | jq -c .`,
	output: `one JSON object per line (JSON Lines):
{"event": "tools-list-changed" | "prompts-list-changed" | "resources-list-changed" | "resync"}
{"event": "resource-updated", "uri": "file:///config.json"}
{"event": "resync", "dropped": 12}   (after an overflow: how many events were dropped)`,
	fixed: 0,
	setup: func(inv *invocation, fs *flag.FlagSet) {
		fs.Var(&inv.uris, "uri", "watch the resource `URI` for updates (repeatable; default: every listed resource)")
	},
	run: runListen,
}

func runListen(ctx context.Context, inv *invocation) error {
	if len(inv.args) > 0 {
		return usagef("unexpected argument %q", inv.args[0])
	}
	// --timeout bounds connecting and subscribing; listening lasts until
	// the user interrupts.
	setupCtx, cancel := inv.withTimeout(ctx)
	defer cancel()
	c, err := inv.dial(setupCtx, nil)
	defer c.close()
	if err != nil {
		return err
	}
	opts := client.SubscribeOptions{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true}
	opts.Resources = append(opts.Resources, inv.uris...)
	caps := c.ServerCapabilities()
	if len(opts.Resources) == 0 && caps.Resources != nil && caps.Resources.Subscribe {
		res, err := collect(c.Resources(setupCtx))
		if err != nil {
			return fmt.Errorf("listing resources to watch: %w", err)
		}
		for _, r := range res {
			opts.Resources = append(opts.Resources, r.URI)
		}
	}
	sub, err := c.Subscribe(setupCtx, opts)
	if err != nil {
		return fmt.Errorf("subscribing: %w", err)
	}
	defer sub.Close()
	fmt.Fprintf(inv.std.err, "listening (%s era) for %s; Ctrl-C to stop\n", c.Negotiated().Era, describeSubscription(sub.Acknowledged()))

	w := inv.std.out
	for {
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return nil // Ctrl-C is how listen ends
			}
			return ctx.Err()
		case ev, ok := <-sub.Events():
			if !ok {
				if err := sub.Err(); err != nil {
					return fmt.Errorf("listening: %w", err)
				}
				if ctx.Err() != nil {
					return nil
				}
				return errors.New("listening: the server ended the subscription")
			}
			if inv.json {
				m := map[string]any{"event": eventName(ev)}
				if ev.URI != "" {
					m["uri"] = ev.URI
				}
				if ev.Dropped > 0 {
					m["dropped"] = ev.Dropped
				}
				if err := writeJSONLine(w, m); err != nil {
					return err
				}
				continue
			}
			if _, err := fmt.Fprintln(w, describeEvent(ev)); err != nil {
				return err
			}
		}
	}
}

// eventNames gives, per notification method, the "event" field of a JSON
// event line and the text of a plain one.
var eventNames = map[string][2]string{
	protocol.NotificationToolsListChanged:     {"tools-list-changed", "tools list changed"},
	protocol.NotificationPromptsListChanged:   {"prompts-list-changed", "prompts list changed"},
	protocol.NotificationResourcesListChanged: {"resources-list-changed", "resources list changed"},
	protocol.NotificationResourcesUpdated:     {"resource-updated", "resource updated"},
}

// eventName is the "event" field of a JSON event line.
func eventName(ev client.Event) string {
	if ev.Resync {
		return "resync"
	}
	if n, ok := eventNames[ev.Method]; ok {
		return n[0]
	}
	return ev.Method
}

func describeEvent(ev client.Event) string {
	switch {
	case ev.Resync && ev.Dropped > 0:
		return fmt.Sprintf("resync: %d events dropped while this listener fell behind; changes may have been missed", ev.Dropped)
	case ev.Resync:
		return "resync: the subscription was re-established; changes may have been missed"
	}
	n, ok := eventNames[ev.Method]
	switch {
	case !ok:
		return ev.Method
	case ev.URI != "":
		return n[1] + ": " + ev.URI
	}
	return n[1]
}

// describeSubscription says what the server acknowledged.
func describeSubscription(o client.SubscribeOptions) string {
	var lists []string
	if o.ToolsListChanged {
		lists = append(lists, "tools")
	}
	if o.PromptsListChanged {
		lists = append(lists, "prompts")
	}
	if o.ResourcesListChanged {
		lists = append(lists, "resources")
	}
	var parts []string
	if len(lists) > 0 {
		parts = append(parts, strings.Join(lists, ", ")+" list changes")
	}
	switch n := len(o.Resources); n {
	case 0:
	case 1:
		parts = append(parts, "updates of "+o.Resources[0])
	default:
		parts = append(parts, fmt.Sprintf("updates of %d resources", n))
	}
	if len(parts) == 0 {
		return "nothing (the server acknowledged no notifications)"
	}
	return strings.Join(parts, " and ")
}
