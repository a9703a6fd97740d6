package auth

import (
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// dpopSigner makes DPoP proofs (RFC 9449) with one key and remembers the
// latest server-provided nonce per origin.
type dpopSigner struct {
	key crypto.Signer

	mu     sync.Mutex        // guards nonces
	nonces map[string]string // origin -> last DPoP-Nonce; created lazily
}

// maxNonceLen bounds a stored DPoP-Nonce (a peer-controlled value).
const maxNonceLen = 1024

// htu returns the htu claim for raw: the URL without query and fragment.
func htu(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	u.Scheme = lower(u.Scheme)
	u.Host = canonicalHost(u.Scheme, u.Host)
	return u.String()
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// proof returns a DPoP proof JWT for a request; accessToken, when not
// empty, is bound with the ath claim.
func (d *dpopSigner) proof(method, rawURL, accessToken string, now time.Time) (string, error) {
	claims := map[string]any{
		"jti": newJTI(),
		"htm": method,
		"htu": htu(rawURL),
		"iat": now.Unix(),
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if n := d.nonce(origin(rawURL)); n != "" {
		claims["nonce"] = n
	}
	return signJWT(d.key, "", "dpop+jwt", true, claims)
}

func (d *dpopSigner) nonce(orig string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nonces[orig]
}

// observe records the DPoP-Nonce of a response and reports whether it
// changed the stored nonce.
func (d *dpopSigner) observe(reqURL string, h http.Header) bool {
	n := h.Get("DPoP-Nonce")
	if n == "" || len(n) > maxNonceLen {
		return false
	}
	o := origin(reqURL)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.nonces == nil {
		d.nonces = map[string]string{}
	}
	if d.nonces[o] == n {
		return false
	}
	d.nonces[o] = n
	return true
}
