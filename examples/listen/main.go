// The listen command subscribes to a server's change notifications — list
// changes of tools, prompts and resources, and updates of one resource —
// and prints them as they arrive. In the modern era this is a
// subscriptions/listen stream that is re-established when it drops; in the
// legacy era resources/subscribe plus the session's notifications.
//
// Usage:
//
//	listen [-uri file:///hello.txt] [url]
//
// Without a URL it serves Conduit's test server on 127.0.0.1 and makes it
// announce a few changes.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
)

func main() {
	uri := flag.String("uri", "file:///hello.txt", "resource to watch")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	url := flag.Arg(0)
	var srv *conduittest.Server
	if url == "" {
		var err error
		if srv, err = conduittest.New(); err != nil {
			log.Fatal(err)
		}
		defer srv.Close()
		url = srv.URL()
	}

	c, err := client.Dial(ctx, url)
	if err != nil {
		log.Fatalf("dialing: %v", err)
	}
	defer c.Close()

	sub, err := c.Subscribe(ctx, client.SubscribeOptions{
		ToolsListChanged:     true,
		PromptsListChanged:   true,
		ResourcesListChanged: true,
		Resources:            []string{*uri},
	})
	if err != nil {
		log.Fatalf("subscribing: %v", err)
	}
	defer sub.Close()
	fmt.Printf("era %s; server honours %+v\n", c.Negotiated().Era, sub.Acknowledged())

	want := -1 // run until interrupted
	if srv != nil {
		// Demo mode: announce a few changes, then stop.
		srv.NotifyToolsChanged()
		srv.NotifyResourceUpdated(*uri)
		srv.NotifyPromptsChanged()
		want = 3
	}
	for n := 0; want < 0 || n < want; n++ {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				fmt.Printf("subscription ended: %v\n", sub.Err())
				return
			}
			switch {
			case ev.Resync:
				fmt.Println("resync")
			case ev.URI != "":
				fmt.Printf("%s %s\n", ev.Method, ev.URI)
			default:
				fmt.Println(ev.Method)
			}
		case <-ctx.Done():
			return
		case <-time.After(time.Minute):
			fmt.Println("no change for a minute")
			return
		}
	}
}
