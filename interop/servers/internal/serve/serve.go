package serve

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

// Flags are the command-line flags of an SDK-based interop server.
type Flags struct {
	Transport string // -transport: stdio or http
	Mode      string // -mode: dual, modern or legacy
	Addr      string // -addr: HTTP listen address, 127.0.0.1:<port>
	Fillers   int    // -tools: number of extra filler tools
	// Versions are the protocol versions -mode allows: nil for dual (the
	// SDK's own list), the modern version, or the legacy versions.
	Versions []string
}

// Parse defines and parses the flags, makes log print "name: " before
// each message, and resolves -mode into Versions (an unknown mode is
// fatal).
func Parse(name string) *Flags {
	var f Flags
	flag.StringVar(&f.Transport, "transport", "stdio", "stdio or http")
	flag.StringVar(&f.Mode, "mode", "dual", "dual, modern or legacy")
	flag.StringVar(&f.Addr, "addr", "127.0.0.1:0", "HTTP listen address")
	flag.IntVar(&f.Fillers, "tools", 0, "number of extra filler tools")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix(name + ": ")
	switch f.Mode {
	case "dual":
	case "modern":
		f.Versions = []string{"2026-07-28"}
	case "legacy":
		f.Versions = []string{"2025-11-25", "2025-06-18"}
	default:
		log.Fatalf("unknown -mode %q", f.Mode)
	}
	return &f
}

// SignalContext returns a context that ends on SIGINT or SIGTERM, and the
// function that releases its signal handler.
func SignalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// HTTP serves h at /mcp on addr, which must be 127.0.0.1:<port>, after
// printing the endpoint URL on stdout. It returns when ctx ends; any
// other failure is fatal.
func HTTP(ctx context.Context, addr string, h http.Handler) {
	if host, _, err := net.SplitHostPort(addr); err != nil || host != "127.0.0.1" {
		log.Fatalf("-addr must be 127.0.0.1:<port>, got %q", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := &http.Server{Handler: mux}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
