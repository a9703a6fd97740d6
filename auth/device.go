package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"golang.org/x/oauth2"
)

// DeviceAuthorization is what the user needs to approve a device-flow
// request (RFC 8628 §3.2).
type DeviceAuthorization struct {
	// VerificationURI is where the user goes.
	VerificationURI string
	// VerificationURIComplete, when set, includes the user code.
	VerificationURIComplete string
	// UserCode is what the user enters.
	UserCode string
	// Expiry is when the code expires (zero if the server did not say, or
	// gave no positive expires_in).
	Expiry time.Time
}

// DevicePrompter shows a device authorization to the user. It should
// return promptly (the Client polls for the result); it is bounded by ctx.
type DevicePrompter interface {
	PromptDevice(ctx context.Context, da DeviceAuthorization) error
}

// DevicePrompterFunc adapts a function to [DevicePrompter].
type DevicePrompterFunc func(ctx context.Context, da DeviceAuthorization) error

// PromptDevice calls f.
func (f DevicePrompterFunc) PromptDevice(ctx context.Context, da DeviceAuthorization) error {
	return f(ctx, da)
}

var _ DevicePrompter = DevicePrompterFunc(nil)

// PrintDevice returns a [DevicePrompter] that writes the instructions to w.
func PrintDevice(w io.Writer) DevicePrompter {
	return DevicePrompterFunc(func(_ context.Context, da DeviceAuthorization) error {
		if da.VerificationURIComplete != "" {
			_, err := fmt.Fprintf(w, "To authorize, open %s\n(or open %s and enter the code %s)\n", da.VerificationURIComplete, da.VerificationURI, da.UserCode)
			return err
		}
		_, err := fmt.Fprintf(w, "To authorize, open %s and enter the code %s\n", da.VerificationURI, da.UserCode)
		return err
	})
}

func (c *Client) devicePrompter() DevicePrompter {
	if c.cfg.DevicePrompter != nil {
		return c.cfg.DevicePrompter
	}
	if p, ok := c.cfg.Interaction.(DevicePrompter); ok {
		return p
	}
	return PrintDevice(os.Stderr)
}

// Device-flow polling bounds.
const (
	// defaultDeviceInterval is RFC 8628's default polling interval.
	defaultDeviceInterval = 5
	// maxDeviceInterval caps a (peer-controlled) interval, in seconds.
	maxDeviceInterval = 300
	// defaultDeviceLifetime bounds polling when the server gives no
	// expires_in.
	defaultDeviceLifetime = 30 * time.Minute
)

// deviceFlow runs the device authorization grant (RFC 8628).
func (c *Client) deviceFlow(ctx context.Context, meta *ServerMetadata, resource string, scopes []string) (*Token, error) {
	if meta.DeviceAuthorizationEndpoint == "" || meta.TokenEndpoint == "" {
		return nil, &MetadataError{Kind: "authorization server", URLs: []string{meta.Issuer}, Err: errors.New("auth: metadata lacks device_authorization_endpoint")}
	}
	reg, err := c.clientFor(ctx, meta, "")
	if err != nil {
		return nil, err
	}
	conf := c.oauthConfig(meta, reg, "", scopes)
	call := c.tokenCallFor(meta, reg, resource)
	var body []byte
	call.body = &body
	da, err := conf.DeviceAuth(c.tokenContext(ctx, call), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		return nil, tokenError(meta.DeviceAuthorizationEndpoint, err)
	}
	// x/oauth2 multiplies expires_in into a time.Duration unchecked (a
	// huge one wraps around): date the expiry from the raw value.
	var raw struct {
		ExpiresIn any `json:"expires_in"`
	}
	json.Unmarshal(body, &raw) // x/oauth2 parsed it already
	da.Expiry = time.Time{}
	if d, ok := peerLifetime(raw.ExpiresIn); ok {
		da.Expiry = time.Now().Add(d)
	}
	if da.DeviceCode == "" || da.UserCode == "" || da.VerificationURI == "" {
		return nil, &TokenError{Endpoint: meta.DeviceAuthorizationEndpoint, Code: "invalid_response", Description: "incomplete device authorization response"}
	}
	if err := c.devicePrompter().PromptDevice(ctx, DeviceAuthorization{
		VerificationURI:         da.VerificationURI,
		VerificationURIComplete: da.VerificationURIComplete,
		UserCode:                da.UserCode,
		Expiry:                  da.Expiry,
	}); err != nil {
		return nil, fmt.Errorf("auth: showing the device code: %w", err)
	}
	lifetime := defaultDeviceLifetime
	if !da.Expiry.IsZero() {
		lifetime = time.Until(da.Expiry)
	}
	pctx, cancel := context.WithTimeout(ctx, lifetime)
	defer cancel()
	// The server's interval is a minimum: a longer one is capped, never
	// replaced by the shorter default.
	interval := min(da.Interval, maxDeviceInterval)
	if interval <= 0 {
		interval = defaultDeviceInterval
	}
	params := map[string][]string{
		"grant_type":  {deviceGrantType},
		"device_code": {da.DeviceCode},
	}
	for {
		if c.onPoll != nil {
			c.onPoll(interval)
		}
		timer := time.NewTimer(time.Duration(interval) * c.pollUnit)
		select {
		case <-pctx.Done():
			timer.Stop()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &TokenError{Endpoint: meta.TokenEndpoint, Code: "expired_token", Description: "device code expired while waiting for approval"}
		case <-timer.C:
		}
		ot, err := c.grant(pctx, meta, reg, resource, nil, params)
		if err == nil {
			return c.newToken(ot, meta.Issuer, resource, scopes), nil
		}
		next, again := nextPoll(interval, err)
		if !again {
			return nil, err
		}
		interval = next
	}
}

// nextPoll returns the interval of the device flow's next poll after one
// that failed with err, or false when the flow ends with err.
func nextPoll(interval int64, err error) (int64, bool) {
	te, ok := errors.AsType[*TokenError](err)
	switch {
	case !ok:
		return 0, false
	case te.Code == "authorization_pending":
		return interval, true
	case te.Code == "slow_down":
		// RFC 8628 §3.5: add 5 seconds for this and all later polls.
		return min(interval+5, maxDeviceInterval), true
	case te.Code == "" && transientPoll(te):
		// RFC 8628 §3.5: a connection that fails (and a server down or
		// overloaded, which is the same to the user who is approving)
		// makes the client poll less often: twice the interval each
		// time, until the code expires.
		return min(interval*2, maxDeviceInterval), true
	}
	return 0, false // access_denied, expired_token, anything else
}

// transientPoll reports whether a poll of the device flow failed without
// an answer of the authorization server's: the connection failed, or the
// endpoint answered 429 or 5xx without an OAuth error.
func transientPoll(te *TokenError) bool {
	if te.StatusCode == http.StatusTooManyRequests || te.StatusCode >= 500 && te.StatusCode <= 599 {
		return true
	}
	_, conn := errors.AsType[*url.Error](te.Err)
	return te.StatusCode == 0 && conn
}
