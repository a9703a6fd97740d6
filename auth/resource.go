package auth

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// CanonicalResource returns the canonical URI of an MCP server for the
// RFC 8707 resource parameter: lower-case scheme and host, no default
// port, no fragment, no user info and no trailing slash. It fails for
// anything but an absolute http or https URL.
func CanonicalResource(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("auth: invalid server URL: %v", err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("auth: server URL %q is not an absolute http(s) URL", raw)
	}
	u.Host = canonicalHost(u.Scheme, u.Host)
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")
	return u.String(), nil
}

func canonicalHost(scheme, host string) string {
	host = strings.ToLower(host)
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		return host
	}
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return host
}

// origin returns scheme://host[:port] of u, canonicalized; "" if u is not
// an absolute http(s) URL.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return ""
	}
	return scheme + "://" + canonicalHost(scheme, u.Host)
}

// resourceCovers reports whether the resource identifier res (from
// Protected Resource Metadata) may stand for the server URL server: same
// origin and server's path is res's path or below it.
func resourceCovers(res, server string) bool {
	cr, err1 := CanonicalResource(res)
	cs, err2 := CanonicalResource(server)
	if err1 != nil || err2 != nil || origin(cr) != origin(cs) {
		return false
	}
	rp := strings.TrimPrefix(cr, origin(cr))
	sp := strings.TrimPrefix(cs, origin(cs))
	rp, _, _ = strings.Cut(rp, "?")
	sp, _, _ = strings.Cut(sp, "?")
	return rp == "" || sp == rp || strings.HasPrefix(sp, rp+"/")
}

// checkSecure rejects a URL that is not https unless its host is a
// loopback address or localhost (development and tests).
func checkSecure(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("auth: invalid endpoint URL %q", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s", ErrInsecureEndpoint, raw)
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
