package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/oauth2"
)

// Refresh renews the access token with the refresh token now, whatever
// its expiry, and returns the new token. It shares the refresh with
// concurrent callers and other processes like [Client.Token] does (if the
// store already holds a newer token than the current one, that one is
// returned without a request). It returns [ErrNoRefreshToken] when there
// is no refresh token and an error matching [ErrRefreshTokenRejected]
// when the server rejects it (the stored token is then deleted).
func (c *Client) Refresh(ctx context.Context) (*Token, error) {
	c.mu.Lock()
	stale := ""
	if c.tok != nil {
		stale = c.tok.AccessToken
	}
	c.mu.Unlock()
	t, err := c.refresh(ctx, stale)
	if err != nil {
		return nil, err
	}
	cp := *t
	return &cp, nil
}

// refresh replaces the token whose access token is stale. Concurrent
// calls share one attempt (singleflight); the attempt holds the store's
// lock, re-reads the store and uses a token another process saved
// instead of refreshing again, so a rotating refresh token is used once.
// The attempt runs with the context of the call that started it: when
// that context ends and fails the attempt, the calls still waiting start
// another one rather than fail with an error that is not theirs.
func (c *Client) refresh(ctx context.Context, stale string) (*Token, error) {
	for {
		res := c.sf.DoChan("refresh", func() (any, error) {
			t, err := c.doRefresh(ctx, stale)
			if err != nil && ctx.Err() != nil {
				return nil, &callerLeft{err}
			}
			return t, err
		})
		select {
		case r := <-res:
			if left, ok := errors.AsType[*callerLeft](r.Err); ok {
				if ctx.Err() != nil {
					return nil, left.err
				}
				continue // another caller's context ended the attempt
			}
			if r.Err != nil {
				return nil, r.Err
			}
			return r.Val.(*Token), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// callerLeft is the error of a shared refresh or authorization that
// ended with the context of the call that started it.
type callerLeft struct{ err error }

func (e *callerLeft) Error() string { return e.err.Error() }

func (e *callerLeft) Unwrap() error { return e.err }

// doRefresh holds the key's lease (see [RefreshLeaser]) while it reads
// the store again and, unless another Client or replica already replaced
// the stale token, refreshes and saves. Losing the lease cancels the
// token request.
//
// The refresh ends with callerCtx until its token request is sent. From
// then on it runs to its end, for [refreshAfterSent] at most, even when
// every caller stopped waiting: the server may rotate the refresh token
// as soon as it has the request, and an answer not read and saved would
// leave the store with a spent refresh token.
func (c *Client) doRefresh(callerCtx context.Context, stale string) (*Token, error) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(callerCtx))
	defer cancel(nil)
	follow := context.AfterFunc(callerCtx, func() { cancel(context.Cause(callerCtx)) })
	defer follow()
	ctx, release, err := c.lease(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	started := time.Now()
	st, err := c.loadToken(ctx)
	if err != nil {
		return nil, storeErr("load token", err)
	}
	c.storeUp(started)
	if st == nil {
		c.forget()
		return nil, ErrNoRefreshToken
	}
	if st.AccessToken != stale && st.fresh(c.now(), 0) {
		// Another Client or process refreshed (or authorized) already.
		c.adopt(st)
		return st, nil
	}
	if st.RefreshToken == "" {
		return nil, ErrNoRefreshToken
	}
	meta, err := c.issuerMetadata(ctx, st)
	if err != nil {
		return nil, err
	}
	reg, err := c.knownClient(ctx, meta)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		return nil, ErrNoRefreshToken
	}
	if !follow() {
		return nil, context.Cause(callerCtx) // the caller left before the request
	}
	ctx, cancelSent := context.WithTimeout(ctx, refreshAfterSent)
	defer cancelSent()
	conf := c.oauthConfig(meta, reg, "", nil)
	tctx := c.tokenContext(ctx, c.tokenCallFor(meta, reg, st.Resource))
	ot, err := conf.TokenSource(tctx, &oauth2.Token{RefreshToken: st.RefreshToken}).Token()
	if err != nil && context.Cause(ctx) != nil && errors.Is(context.Cause(ctx), ErrLeaseLost) {
		return nil, context.Cause(ctx)
	}
	if err != nil {
		te := tokenError(meta.TokenEndpoint, err)
		if e, ok := errors.AsType[*TokenError](te); ok && e.Code == "invalid_grant" {
			// Expired, revoked or already rotated: start over with a new
			// authorization rather than failing the connection.
			if err := c.store.SaveToken(ctx, c.key, nil); err != nil {
				return nil, storeErr("save token", err)
			}
			c.forget()
			return nil, fmt.Errorf("%w: %w", ErrRefreshTokenRejected, te)
		}
		return nil, te
	}
	nt := c.newToken(ot, st.Issuer, st.Resource, st.Scopes)
	nt.LegacyDiscovery = st.LegacyDiscovery
	c.adopt(nt)
	if err := c.saveRefreshed(ctx, nt); err != nil {
		// The token is used here, though the store could not share it.
		c.storeFailed(storeErr("save token", err))
	}
	c.log.Debug("auth: refreshed token", "issuer", st.Issuer)
	return nt, nil
}

// refreshAfterSent bounds a refresh from its token request on, when its
// callers no longer bound it: the request (with a DPoP nonce retry) and
// the save of its answer.
const refreshAfterSent = 2 * time.Minute

// Retries of the save of a refreshed token.
const (
	saveRetryEvery = 100 * time.Millisecond
	saveRetryFor   = 10 * time.Second
)

// saveRefreshed saves nt, the result of a refresh, trying again while the
// store fails, for up to saveRetryFor or until ctx ends (the lease is
// lost). The authorization server has rotated the refresh token: until
// the store holds nt, the token it holds is spent, and the next holder of
// the lease would present a used refresh token (which a strict server
// answers by revoking the grant). Holding the lease meanwhile keeps the
// others waiting, as long as the store keeps the lease.
func (c *Client) saveRefreshed(ctx context.Context, nt *Token) error {
	deadline := time.Now().Add(saveRetryFor)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		err := c.store.SaveToken(ctx, c.key, nt)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		c.storeFailed(storeErr("save token", err))
		t.Reset(saveRetryEvery)
		select {
		case <-ctx.Done():
			return err
		case <-t.C:
		}
	}
}

// issuerMetadata returns the metadata of the authorization server that
// issued st. For a token from the 2025-03-26 fallback the metadata is
// looked up at the server's origin again (not built from the issuer,
// which that document may name freely) and must still name st.Issuer.
func (c *Client) issuerMetadata(ctx context.Context, st *Token) (*ServerMetadata, error) {
	base := origin(c.key)
	if !st.LegacyDiscovery && st.Issuer != base {
		return c.serverMetadata(ctx, st.Issuer, false, false)
	}
	meta, err := c.serverMetadata(ctx, base, true, false)
	if err != nil {
		return nil, err
	}
	if meta.Issuer != st.Issuer {
		return nil, &MetadataError{Kind: "authorization server", URLs: []string{base}, Err: fmt.Errorf(
			"%w: the server's origin now names issuer %q, the token was issued by %q", ErrIssuerMismatch, meta.Issuer, st.Issuer)}
	}
	return meta, nil
}
