package oauth

import (
	"context"
	"errors"
	"net/url"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// maxRenewMargin is how long before its expiry a long-lived token is
// renewed.
const maxRenewMargin = time.Minute

// renewMargin is how long before its expiry a token of the given lifetime
// is renewed: a tenth of its lifetime, at most a minute. The oauth2
// package renews 10 s early whatever the lifetime, so a token that lives
// 3 s was renewed on every request (14 refreshes in 4 s).
func renewMargin(lifetime time.Duration) time.Duration {
	return min(maxRenewMargin, max(lifetime, 0)/10)
}

// renewer is the token source of a flow: it gives the current token until
// the token is within its renewal margin of expiry, and then fetches the
// next one, once per token. A token whose renewal failed is still given
// while it lives (the server decides; its 401 leads to Authorize).
// Requests wait for a renewal in progress rather than start their own: a
// rotating refresh token works once.
type renewer struct {
	// fetch gets the next token; old is the current one (nil before the
	// first).
	fetch func(old *oauth2.Token) (*oauth2.Token, error)

	mu  sync.Mutex
	tok *oauth2.Token
	// got is when tok came, to tell its lifetime from its expiry.
	got time.Time
	// tried is set once tok's renewal was tried.
	tried bool
}

// newRenewer returns a source holding tok, received now (nil: the first
// Token fetches).
func newRenewer(tok *oauth2.Token, fetch func(old *oauth2.Token) (*oauth2.Token, error)) *renewer {
	return &renewer{fetch: fetch, tok: tok, got: time.Now()}
}

// Token implements oauth2.TokenSource.
func (r *renewer) Token() (*oauth2.Token, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.tok != nil && (!r.due(now) || r.tried) && alive(r.tok, now) {
		return r.tok, nil
	}
	r.tried = true
	next, err := r.fetch(r.tok)
	switch {
	case err == nil && next != nil:
		r.tok, r.got, r.tried = next, time.Now(), false
		return next, nil
	case r.tok != nil && alive(r.tok, now):
		return r.tok, nil
	case err == nil:
		err = errors.New("the token endpoint gave no token")
	}
	return nil, err
}

// due reports whether the current token is within its renewal margin.
func (r *renewer) due(now time.Time) bool {
	if r.tok.Expiry.IsZero() {
		return false // no expiry given: renewed after a 401 only
	}
	return !now.Before(r.tok.Expiry.Add(-renewMargin(r.tok.Expiry.Sub(r.got))))
}

// alive reports whether tok can still be sent: it has an access token and
// its expiry, if any, has not passed. Unlike oauth2.Token.Valid it allows
// no 10 s of slack, which is longer than a short-lived token's whole life.
func alive(tok *oauth2.Token, now time.Time) bool {
	return tok != nil && tok.AccessToken != "" && (tok.Expiry.IsZero() || now.Before(tok.Expiry))
}

// refreshGrant sends a refresh_token grant (RFC 6749 section 6) for
// old, with the server's resource (RFC 8707), which the MCP
// authorization specification requires in every token request.
// oauth2.Config's own refresh cannot carry it; clientcredentials.Config
// sends endpoint parameters and lets grant_type be replaced, and
// authenticates the client and reads the answer as oauth2.Config does.
func (h *Handler) refreshGrant(ctx context.Context, rc *oauth2.Config, resource string, old *oauth2.Token) (*oauth2.Token, error) {
	if old == nil || old.RefreshToken == "" {
		return nil, errors.New("no refresh token")
	}
	params := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {old.RefreshToken}}
	if resource != "" {
		params.Set("resource", resource)
	}
	cc := &clientcredentials.Config{
		ClientID: rc.ClientID, ClientSecret: rc.ClientSecret,
		TokenURL: rc.Endpoint.TokenURL, AuthStyle: rc.Endpoint.AuthStyle,
		EndpointParams: params,
	}
	tok, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, h.opts.HTTPClient))
	if err != nil {
		return nil, err
	}
	if tok.RefreshToken == "" {
		// The server kept the refresh token (RFC 6749 section 6 lets it).
		tok.RefreshToken = old.RefreshToken
	}
	return tok, nil
}
