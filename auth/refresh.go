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
func (c *Client) refresh(ctx context.Context, stale string) (*Token, error) {
	res := c.sf.DoChan("refresh", func() (any, error) {
		return c.doRefresh(ctx, stale)
	})
	select {
	case r := <-res:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*Token), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// doRefresh holds the key's lease (see [RefreshLeaser]) while it reads
// the store again and, unless another Client or replica already replaced
// the stale token, refreshes and saves. Losing the lease cancels the
// token request.
func (c *Client) doRefresh(ctx context.Context, stale string) (*Token, error) {
	ctx, release, err := c.lease(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	started := time.Now()
	st, err := c.store.LoadToken(ctx, c.key)
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
	if err := c.store.SaveToken(ctx, c.key, nt); err != nil {
		// The authorization server rotated the refresh token: keep
		// using the new one here, though the store could not share it.
		c.storeFailed(storeErr("save token", err))
	}
	c.adopt(nt)
	c.log.Debug("auth: refreshed token", "issuer", st.Issuer)
	return nt, nil
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
