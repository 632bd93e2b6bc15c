// Package oauth gives the host an OAuth 2.1 client for a Streamable HTTP
// server, from the server's oauth: configuration: a Handler is the
// auth.OAuthHandler of the go-sdk's StreamableClientTransport, which asks it
// for a token on every request and calls its Authorize after a 401 or 403.
//
// What it owns:
//   - the flows: authorization code with PKCE and a loopback redirect (the
//     URL printed for the person, a browser opened on request), built on the
//     go-sdk's handler (metadata discovery, dynamic registration, client ID
//     metadata documents, pre-registered clients, step-up on 403
//     insufficient_scope), and client credentials for CI, its own (client.go),
//     since every token request must name the server's resource (RFC 8707);
//   - refresh: a token is renewed within a margin of its expiry that scales
//     with its lifetime, once per token (renew.go), and a 401 on a token the
//     host thought valid (revoked, expired early) refreshes it and retries,
//     so a long run goes on without asking anyone again;
//   - protected resource metadata that names another resource is refused,
//     with an error that says so (discover.go);
//   - the token cache (Cache): tokens kept between runs, readable by the user
//     only. Tokens and secrets go nowhere else: not in errors, results, logs
//     or wire traces.
//
// One Handler serves one server for a whole run, shared by every host that
// connects to it, so that concurrent cases share one authorization.
package oauth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// Options say where a Handler works. Only URL is required.
type Options struct {
	// Server is the server's name in the host, for messages.
	Server string
	// URL is the server's MCP endpoint, as the host reaches it.
	URL string
	// Cache keeps tokens between runs (nil: in memory only).
	Cache *Cache
	// Out receives what the person must see: the URL to open to authorise
	// a server, and a cache that could not be written (nil: discarded).
	Out io.Writer
	// Open, if set, is called with the authorization URL after it is
	// printed: the CLI's -open launches the person's browser; FollowRedirects
	// plays a person for an authorization server that approves at once
	// (tests, the conformance suite).
	Open func(ctx context.Context, url string) error
	// PersonTimeout bounds the wait for the browser's redirect (default 5
	// minutes). The wait also ends with the context of the request that
	// needed the token: see Login for authorising before a run.
	PersonTimeout time.Duration
	// HTTPClient makes the requests to the authorization server: metadata,
	// registration, tokens (default: one with a 30 s timeout).
	HTTPClient *http.Client
	// ClientName is the client_name of a dynamic registration (default
	// "hosteval").
	ClientName string
	// Unattended, when set, says why no person can authorise now ("CI is
	// set", "stderr is not a terminal"): an authorization code flow that
	// would wait for one fails at once instead, saying what works without
	// a person. A cached or refreshed token still works.
	Unattended string
}

// AuthorizeError is why the host could not get a token for a server. Final
// says that no later request of the run will get one either (the person
// said no or did not answer, or no person is here): the host can stop
// using the server. Its text holds no secret.
type AuthorizeError struct {
	Server string
	Err    error
	Final  bool
}

func (e *AuthorizeError) Error() string {
	s := "authorise " + e.Server + ": " + e.Err.Error()
	if e.Final {
		s += " (not asked again in this run)"
	}
	return s
}

func (e *AuthorizeError) Unwrap() error { return e.Err }

// Permanent reports Final: internal/host recognises an authorisation that
// failed by this method, without knowing this package, and gives the
// server up when it is permanent.
func (e *AuthorizeError) Permanent() bool { return e.Final }

// Handler is the OAuth client of one server: an auth.OAuthHandler. It is
// safe for concurrent use by many connections.
type Handler struct {
	cfg  Config
	opts Options
	key  string

	// lock admits one authorization at a time: one browser tab for the
	// person, one token exchange, whatever number of requests got a 401.
	lock chan struct{}

	// saveMu orders the cache writes, each of the newest token.
	saveMu sync.Mutex

	mu sync.Mutex
	// src gives the current token (nil before the first); refresher is how
	// it refreshes (authorization code flow), nil when it cannot, and
	// resource is the server's resource (RFC 8707) its token requests name.
	src       oauth2.TokenSource
	refresher *oauth2.Config
	resource  string
	// last is the token last handed out, and saved the access token last
	// written to the cache.
	last  *oauth2.Token
	saved string
	// granted are the scopes of the current token.
	granted []string
	// refused is the person's refusal (or silence): not asked again.
	refused error
	// cacheFailed: the person was told once that the cache is not written.
	cacheFailed bool
}

var _ auth.OAuthHandler = (*Handler)(nil)

// New returns the handler of one server. It reads the token cache at once:
// a cached token is sent from the first request, and no one is asked.
func New(cfg Config, opts Options) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("oauth of %s: %w", opts.Server, err)
	}
	if u, err := url.Parse(opts.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("oauth of %s: the server URL %q is not an http(s) URL", opts.Server, opts.URL)
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.PersonTimeout <= 0 {
		opts.PersonTimeout = 5 * time.Minute
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if opts.ClientName == "" {
		opts.ClientName = "hosteval"
	}
	h := &Handler{cfg: cfg, opts: opts, key: cacheKey(opts.URL, cfg), lock: make(chan struct{}, 1)}
	if opts.Cache != nil {
		e, err := opts.Cache.load(h.key)
		if err != nil {
			fmt.Fprintf(opts.Out, "hosteval: the token cache of %s could not be read (%v): authorising again\n", opts.Server, err)
		} else if e != nil {
			h.restore(e)
		}
	}
	return h, nil
}

// String describes the handler without any secret.
func (h *Handler) String() string {
	return fmt.Sprintf("oauth(%s, %s)", h.cfg.flow(), h.cfg.registration())
}

// restore installs a cached token.
func (h *Handler) restore(e *entry) {
	h.granted, h.saved = e.Scopes, e.Token.AccessToken
	if h.cfg.flow() == FlowAuthorizationCode && e.Token.RefreshToken != "" && e.TokenURL != "" {
		secret := e.ClientSecret
		if e.ClientID == h.cfg.ClientID {
			secret = string(h.cfg.ClientSecret)
		}
		h.setRefreshing(&oauth2.Config{
			ClientID: e.ClientID, ClientSecret: secret,
			Endpoint: oauth2.Endpoint{TokenURL: e.TokenURL, AuthStyle: e.AuthStyle},
		}, cmp.Or(e.Resource, e.Server), e.Token)
		return
	}
	// A token that cannot be refreshed is sent while it lasts; then the
	// server's 401 starts a new authorization.
	h.src, h.last = validOnly{e.Token}, e.Token
}

// setRefreshing makes tok, refreshed through rc for resource, the current
// token; h.mu is held or h is not shared yet.
func (h *Handler) setRefreshing(rc *oauth2.Config, resource string, tok *oauth2.Token) {
	// Refreshes outlive the request that led to this token.
	ctx := context.Background()
	h.src = newRenewer(tok, func(old *oauth2.Token) (*oauth2.Token, error) {
		return h.refreshGrant(ctx, rc, resource, old)
	})
	h.refresher, h.resource, h.last = rc, resource, tok
}

// TokenSource implements auth.OAuthHandler: the source gives the current
// token, refreshed when it is about to expire, or none before the first
// authorization.
func (h *Handler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return current{h}, nil
}

type current struct{ h *Handler }

func (c current) Token() (*oauth2.Token, error) { return c.h.token() }

func (h *Handler) token() (*oauth2.Token, error) {
	h.mu.Lock()
	src := h.src
	h.mu.Unlock()
	if src == nil {
		return nil, nil // no Authorization header: the 401 starts the flow
	}
	tok, err := src.Token()
	if err != nil {
		// An invalid_grant refresh makes the transport send no token, and
		// the server's 401 then starts a new authorization; any other
		// failure fails this request only.
		return nil, err
	}
	if tok == nil {
		return nil, nil
	}
	// A token the source could not renew in time is still sent: the
	// server decides, and its 401 leads to Authorize.
	h.mu.Lock()
	// Two requests may race past a refresh: the older token never
	// replaces the newer (its refresh token may be spent).
	if h.last == nil || !tok.Expiry.Before(h.last.Expiry) {
		h.last = tok
	}
	changed := h.last.AccessToken != h.saved
	h.mu.Unlock()
	if changed {
		h.save()
	}
	return tok, nil
}

// validOnly gives its token while it is valid, and then none.
type validOnly struct{ tok *oauth2.Token }

func (v validOnly) Token() (*oauth2.Token, error) {
	if !alive(v.tok, time.Now()) {
		return nil, nil
	}
	return v.tok, nil
}

// Authorize implements auth.OAuthHandler: after a 401 or 403 it makes sure
// the next try carries a token that can work. In order: a token renewed by
// another request meanwhile is simply used; after a 401, the refresh token
// is tried; otherwise the configured flow runs (for a 403
// insufficient_scope, with the scopes the server asks for added).
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	select {
	case h.lock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-h.lock }()

	h.mu.Lock()
	last, refused := h.last, h.refused
	h.mu.Unlock()
	if refused != nil {
		return refused
	}
	sent, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if alive(last, time.Now()) && last.AccessToken != sent {
		return nil
	}
	if resp.StatusCode == http.StatusUnauthorized && h.refreshAfter401(ctx) {
		return nil
	}
	var err error
	if f := h.cfg.flow(); f == FlowClientCredentials || f == FlowJWTBearer || f == FlowEnterprise {
		err = h.authorizeClient(ctx, req, resp)
	} else {
		err = h.authorizeCode(ctx, req, resp)
	}
	if err != nil {
		h.mu.Lock()
		refused := h.refused
		h.mu.Unlock()
		if refused != nil {
			return refused
		}
		return &AuthorizeError{Server: h.opts.Server, Err: explain(err, h.cfg)}
	}
	return nil
}

// refreshAfter401 refreshes a token the server refused, and reports whether
// a new token is in place. A refreshed token the server refuses too (one
// for another audience, a grant the server no longer honours) is no
// renewal: a new authorization follows. It is asked at once, since the
// transport retries once and then gives up without telling the handler;
// later refusals of a token that worked (it expired again) refresh again.
func (h *Handler) refreshAfter401(ctx context.Context) bool {
	h.mu.Lock()
	rc, resource, last := h.refresher, h.resource, h.last
	h.mu.Unlock()
	if rc == nil || last == nil || last.RefreshToken == "" {
		return false
	}
	tok, err := h.refreshGrant(ctx, rc, resource, last)
	if err != nil {
		return false // a new authorization follows
	}
	if resp, _, err := h.probe(ctx, tok); err == nil {
		resp.Body.Close()
		if refused(resp) {
			return false
		}
	}
	h.mu.Lock()
	h.setRefreshing(rc, resource, tok)
	h.mu.Unlock()
	h.save()
	return true
}

// probe sends the server a ping with tok (none when nil), the way the
// transport sends a request: its answer says whether the token is
// accepted. The caller closes the response's body.
func (h *Handler) probe(ctx context.Context, tok *oauth2.Token) (*http.Response, *http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.opts.URL,
		strings.NewReader(`{"jsonrpc":"2.0","id":"hosteval-login","method":"ping"}`))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if tok != nil {
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	resp, err := h.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	if !refused(resp) {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	}
	return resp, req, nil
}

// refused reports whether the server refused a request's token.
func refused(resp *http.Response) bool {
	return resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden
}

// save writes the current token to the cache, if there is one.
func (h *Handler) save() {
	if h.opts.Cache == nil {
		return
	}
	h.saveMu.Lock()
	defer h.saveMu.Unlock()
	h.mu.Lock()
	tok := h.last
	if tok == nil {
		h.mu.Unlock()
		return
	}
	e := &entry{
		Server: h.opts.URL, Flow: h.cfg.flow(), ClientID: h.cfg.ClientID,
		Scopes: slices.Clone(h.granted), Token: tok, Saved: time.Now().UTC(),
	}
	if rc := h.refresher; rc != nil {
		e.ClientID, e.TokenURL, e.AuthStyle, e.Resource = rc.ClientID, rc.Endpoint.TokenURL, rc.Endpoint.AuthStyle, h.resource
		if rc.ClientID != h.cfg.ClientID {
			e.ClientSecret = rc.ClientSecret // a registration's own secret
		}
	}
	h.saved = tok.AccessToken
	h.mu.Unlock()

	if err := h.opts.Cache.save(h.key, e); err != nil {
		h.mu.Lock()
		told := h.cacheFailed
		h.cacheFailed = true
		h.mu.Unlock()
		if !told {
			fmt.Fprintf(h.opts.Out, "hosteval: the token of %s could not be saved in %s (%v): the next run will authorise again\n",
				h.opts.Server, h.opts.Cache.Dir(), err)
		}
	}
}

// Login makes sure the handler holds a token the server accepts, before a
// run: it sends the server an unauthenticated-or-cached probe and, on a 401
// or 403, runs the flow with ctx alone as its deadline. A host's connect
// deadline is for servers, not for a person reading a consent page: chat and
// the lab call Login first, then start the host.
func (h *Handler) Login(ctx context.Context) error {
	for try := 0; try < 2; try++ {
		tok, err := h.token()
		if err != nil {
			tok = nil // the server's 401 starts the flow
		}
		resp, req, err := h.probe(ctx, tok)
		if err != nil {
			return &AuthorizeError{Server: h.opts.Server, Err: err}
		}
		if !refused(resp) {
			resp.Body.Close()
			return nil
		}
		if try == 1 {
			resp.Body.Close()
			return &AuthorizeError{Server: h.opts.Server, Err: fmt.Errorf("the server still answers %d after authorisation", resp.StatusCode)}
		}
		if err := h.Authorize(ctx, req, resp); err != nil {
			return err
		}
	}
	return nil
}

// explain adds to an error of a flow what the person can do about it.
func explain(err error, cfg Config) error {
	var rerr *oauth2.RetrieveError
	switch {
	case errors.As(err, &rerr) && rerr.ErrorCode == "invalid_client":
		return fmt.Errorf("%w (the authorization server does not accept the client: check client_id and client_secret)", err)
	// The SDK's words: it has no exported error for this.
	case strings.Contains(err.Error(), "no configured client registration methods are supported"):
		if cfg.ClientID == "" {
			return fmt.Errorf("%w: the authorization server offers no dynamic registration; register hosteval with it and set client_id (and client_secret) in the oauth: block", err)
		}
		return fmt.Errorf("%w: check the registration in the oauth: block", err)
	}
	return err
}
