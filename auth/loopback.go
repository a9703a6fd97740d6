package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"
)

// Loopback is an [Interaction] for desktop and command-line programs: it
// receives the redirect on an HTTP listener on 127.0.0.1 (RFC 8252 §7.3),
// opens the system browser at the authorization URL (best effort) and
// prints the URL too. The zero value is ready to use; it listens on a
// random port chosen on first use and keeps that port until Close.
//
// Loopback also implements [RedirectProvider] and [DevicePrompter].
type Loopback struct {
	// Addr is the listening address; "" means "127.0.0.1:0" (a random
	// port). Only loopback addresses should be used.
	Addr string
	// Path is the redirect URI's path; "" means "/callback".
	Path string
	// Out receives the authorization URL (and device codes). nil means
	// os.Stderr.
	Out io.Writer
	// Browser opens a URL; nil means [OpenBrowser]. It is called with the
	// authorization URL; its error is reported on Out and ignored.
	Browser func(ctx context.Context, url string) error
	// NoBrowser disables opening a browser: the URL is only printed.
	NoBrowser bool

	mu   sync.Mutex   // guards ln, addr
	ln   net.Listener // bound but not serving; nil while serving or closed
	addr string       // host:port bound first; later listens reuse it
}

var (
	_ Interaction      = (*Loopback)(nil)
	_ RedirectProvider = (*Loopback)(nil)
	_ DevicePrompter   = (*Loopback)(nil)
)

// loopbackShutdownTimeout bounds stopping the redirect listener.
const loopbackShutdownTimeout = 5 * time.Second

func (l *Loopback) path() string {
	if l.Path == "" {
		return "/callback"
	}
	return l.Path
}

func (l *Loopback) out() io.Writer {
	if l.Out == nil {
		return os.Stderr
	}
	return l.Out
}

// listenLocked binds the listener if needed. l.mu is held.
func (l *Loopback) listenLocked() error {
	if l.ln != nil {
		return nil
	}
	addr := l.addr
	if addr == "" {
		addr = l.Addr
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("auth: loopback listener: %w", err)
	}
	l.ln = ln
	l.addr = ln.Addr().String()
	return nil
}

// RedirectURL binds the listener (if not yet bound) and returns the
// redirect URI, http://127.0.0.1:PORT/callback.
func (l *Loopback) RedirectURL(context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.listenLocked(); err != nil {
		return "", err
	}
	return "http://" + l.addr + l.path(), nil
}

// Authorize serves the redirect URI, shows authURL (browser and Out) and
// waits for the redirect carrying code or error, or for ctx to end. The
// listener stops before Authorize returns.
func (l *Loopback) Authorize(ctx context.Context, authURL string) (*url.URL, error) {
	l.mu.Lock()
	if err := l.listenLocked(); err != nil {
		l.mu.Unlock()
		return nil, err
	}
	ln, addr := l.ln, l.addr
	l.ln = nil // the server owns (and closes) it now
	l.mu.Unlock()

	got := make(chan *url.URL, 1)
	mux := http.NewServeMux()
	mux.HandleFunc(l.path(), func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code") == "" && q.Get("error") == "" {
			http.Error(w, "missing code", http.StatusBadRequest)
			return
		}
		u := *r.URL
		u.Scheme, u.Host = "http", addr
		select {
		case got <- &u:
			fmt.Fprintln(w, "Authorization received. You may close this window.")
		default:
			http.Error(w, "authorization already received", http.StatusConflict)
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	srv.SetKeepAlivesEnabled(false)
	served := make(chan struct{})
	// The server goroutine ends when Shutdown/Close below stops it.
	go func() {
		defer close(served)
		srv.Serve(ln)
	}()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loopbackShutdownTimeout)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
		<-served
	}()

	fmt.Fprintf(l.out(), "Open this URL to authorize:\n%s\n", authURL)
	if !l.NoBrowser {
		open := l.Browser
		if open == nil {
			open = OpenBrowser
		}
		if err := open(ctx, authURL); err != nil {
			fmt.Fprintf(l.out(), "(could not open a browser: %v)\n", err)
		}
	}
	select {
	case u := <-got:
		return u, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// PromptDevice prints the device-flow instructions to Out.
func (l *Loopback) PromptDevice(ctx context.Context, da DeviceAuthorization) error {
	return PrintDevice(l.out()).PromptDevice(ctx, da)
}

// Close releases the listener. Idempotent.
func (l *Loopback) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln == nil {
		return nil
	}
	err := l.ln.Close()
	l.ln = nil
	return err
}

// browserTimeout bounds the command that opens a browser.
const browserTimeout = 10 * time.Second

// OpenBrowser asks the operating system to open u in the default browser
// (xdg-open, open, or rundll32). It is best effort: it waits at most a few
// seconds for the opener command and reports its failure.
func OpenBrowser(ctx context.Context, u string) error {
	var name string
	var args []string
	switch runtime.GOOS {
	case "darwin":
		name, args = "open", []string{u}
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler", u}
	default:
		name, args = "xdg-open", []string{u}
	}
	ctx, cancel := context.WithTimeout(ctx, browserTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return fmt.Errorf("no %s command", name)
		}
		return err
	}
	return nil
}
