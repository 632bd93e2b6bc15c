// Package oauthtest is a local OAuth 2.1 authorization server, and an MCP
// server protected by it, for tests: real HTTP (httptest), strict checks
// (PKCE S256, redirect URIs, client authentication, single-use codes,
// rotating refresh tokens), and switches a test controls instead of the
// clock (ExpireTokens, Deny).
//
// The authorization endpoint approves at once, the way the conformance
// suite's does: it answers with a redirect to the client's redirect URI, so
// a client that follows redirects (oauth.FollowRedirects) plays the person.
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Client is a client the server knows before any registration.
type Client struct {
	// Secret is empty for a public client.
	Secret string
	// RedirectURIs the client may use; empty allows any loopback URI
	// (RFC 8252 section 7.3: a native client's port varies).
	RedirectURIs []string
}

// Options configure a Server. The zero value is a server with dynamic
// registration, no pre-registered clients and one-hour tokens.
type Options struct {
	// Clients are pre-registered, by client id.
	Clients map[string]Client
	// NoRegistration turns dynamic client registration (/register) off.
	NoRegistration bool
	// ScopesSupported is advertised in the metadata.
	ScopesSupported []string
	// TokenLifetime is the expires_in the server reports (default one
	// hour). Whether a token is accepted is decided by ExpireTokens, never
	// by the clock, so a test does not race it.
	TokenLifetime time.Duration
	// AuthMethods is token_endpoint_auth_methods_supported (default none,
	// client_secret_basic and client_secret_post).
	AuthMethods []string
}

// Counts say what the server was asked.
type Counts struct {
	Registrations  int // successful dynamic registrations
	Authorizations int // authorization requests answered with a code
	CodeExchanges  int // authorization_code grants
	Refreshes      int // refresh_token grants
	ClientGrants   int // client_credentials grants
	Rejected       int // access tokens refused by Verify
}

// TokenRequest is one token request the server granted.
type TokenRequest struct {
	// Grant is the grant_type: authorization_code, refresh_token or
	// client_credentials.
	Grant string
	// Resource is the request's resource parameter (RFC 8707), "" without
	// one.
	Resource string
}

// Server is a running authorization server.
type Server struct {
	// URL is the issuer: metadata at URL/.well-known/oauth-authorization-server.
	URL  string
	opts Options
	srv  *httptest.Server

	mu      sync.Mutex
	clients map[string]Client
	codes   map[string]grant
	access  map[string]tokenState
	refresh map[string]grant
	counts  Counts
	// scopesAsked lists the scopes of each authorization request, sorted.
	scopesAsked []string
	// tokenRequests lists the token requests that were granted.
	tokenRequests []TokenRequest
	deny          bool
	issued        []string
}

// grant is what a code or a refresh token stands for.
type grant struct {
	client    string
	scopes    []string
	challenge string // PKCE S256 challenge (codes only)
	redirect  string // codes only
	resource  string
}

type tokenState struct {
	scopes  []string
	expired bool
}

// NewServer starts a server that stops when the test ends.
func NewServer(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.TokenLifetime <= 0 {
		opts.TokenLifetime = time.Hour
	}
	if opts.AuthMethods == nil {
		opts.AuthMethods = []string{"none", "client_secret_basic", "client_secret_post"}
	}
	s := &Server{
		opts:    opts,
		clients: map[string]Client{},
		codes:   map[string]grant{},
		access:  map[string]tokenState{},
		refresh: map[string]grant{},
	}
	for id, c := range opts.Clients {
		s.clients[id] = c
		if c.Secret != "" {
			s.issued = append(s.issued, c.Secret)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	if !opts.NoRegistration {
		mux.HandleFunc("POST /register", s.register)
	}
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// ExpireTokens makes every access token issued so far be refused, as if
// each had expired: the next request with one gets 401.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.access {
		v.expired = true
		s.access[k] = v
	}
}

// RevokeRefreshTokens makes every refresh token issued so far invalid, so
// that only a new authorization gets a token.
func (s *Server) RevokeRefreshTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.refresh)
}

// Deny makes the authorization endpoint refuse (error=access_denied), as
// a person who clicks "deny" does.
func (s *Server) Deny(deny bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deny = deny
}

// Counts returns what the server was asked so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// ScopesAsked returns the scopes of every authorization request, in order,
// each sorted and joined by spaces (the order of scopes means nothing).
func (s *Server) ScopesAsked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.scopesAsked)
}

// TokenRequests returns the token requests granted so far, in order.
func (s *Server) TokenRequests() []TokenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tokenRequests)
}

// Secrets returns every secret the server issued or knows: client secrets,
// codes, access and refresh tokens. A test greps written files for them.
func (s *Server) Secrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.issued)
}

// Verify checks an access token: it is an auth.TokenVerifier for
// auth.RequireBearerToken.
func (s *Server) Verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.access[token]
	if !ok || st.expired {
		s.counts.Rejected++
		return nil, fmt.Errorf("%w: unknown or expired token", auth.ErrInvalidToken)
	}
	// The clock never decides (see Options.TokenLifetime).
	return &auth.TokenInfo{Scopes: slices.Clone(st.scopes), Expiration: time.Now().Add(time.Hour)}, nil
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	meta := &oauthex.AuthServerMeta{
		Issuer:                                     s.URL,
		AuthorizationEndpoint:                      s.URL + "/authorize",
		TokenEndpoint:                              s.URL + "/token",
		ScopesSupported:                            s.opts.ScopesSupported,
		ResponseTypesSupported:                     []string{"code"},
		GrantTypesSupported:                        []string{"authorization_code", "refresh_token", "client_credentials"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		TokenEndpointAuthMethodsSupported:          s.opts.AuthMethods,
		AuthorizationResponseIssParameterSupported: true,
	}
	if !s.opts.NoRegistration {
		meta.RegistrationEndpoint = s.URL + "/register"
	}
	writeJSON(w, http.StatusOK, meta)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var meta oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	method := meta.TokenEndpointAuthMethod
	if method == "" {
		method = "client_secret_basic" // RFC 7591's default
	}
	id := "client-" + rand.Text()
	c := Client{RedirectURIs: meta.RedirectURIs}
	if method != "none" {
		c.Secret = "secret-" + rand.Text()
	}
	s.mu.Lock()
	s.clients[id] = c
	s.counts.Registrations++
	if c.Secret != "" {
		s.issued = append(s.issued, c.Secret)
	}
	s.mu.Unlock()
	meta.TokenEndpointAuthMethod = method
	writeJSON(w, http.StatusCreated, &oauthex.ClientRegistrationResponse{
		ClientRegistrationMetadata: meta, ClientID: id, ClientSecret: c.Secret,
	})
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[q.Get("client_id")]
	redirect := q.Get("redirect_uri")
	switch {
	case !ok:
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	case !redirectAllowed(c, redirect):
		http.Error(w, "redirect_uri not registered", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code":
		http.Error(w, "response_type must be code", http.StatusBadRequest)
		return
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		http.Error(w, "PKCE with S256 is required", http.StatusBadRequest)
		return
	}
	asked := strings.Fields(q.Get("scope"))
	slices.Sort(asked)
	s.scopesAsked = append(s.scopesAsked, strings.Join(asked, " "))
	back, _ := url.Parse(redirect)
	v := url.Values{"state": {q.Get("state")}, "iss": {s.URL}}
	if s.deny {
		v.Set("error", "access_denied")
		v.Set("error_description", "the person said no")
	} else {
		code := "code-" + rand.Text()
		s.codes[code] = grant{
			client: q.Get("client_id"), scopes: strings.Fields(q.Get("scope")),
			challenge: q.Get("code_challenge"), redirect: redirect, resource: q.Get("resource"),
		}
		s.issued = append(s.issued, code)
		s.counts.Authorizations++
		v.Set("code", code)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func redirectAllowed(c Client, redirect string) bool {
	if len(c.RedirectURIs) > 0 {
		return slices.Contains(c.RedirectURIs, redirect)
	}
	u, err := url.Parse(redirect)
	return err == nil && u.Scheme == "http" && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost" || u.Hostname() == "::1")
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", "unreadable form")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	client, err := s.authenticate(r)
	if err != nil {
		tokenError(w, http.StatusUnauthorized, "invalid_client", err.Error())
		return
	}
	var g grant
	refresh := true
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		code := r.PostForm.Get("code")
		c, ok := s.codes[code]
		delete(s.codes, code) // single use, whatever happens next
		if !ok || c.client != client {
			tokenError(w, http.StatusBadRequest, "invalid_grant", "unknown or used code")
			return
		}
		if r.PostForm.Get("redirect_uri") != c.redirect {
			tokenError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
			return
		}
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
			tokenError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match code_challenge")
			return
		}
		g = c
		s.counts.CodeExchanges++
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		old, ok := s.refresh[rt]
		if !ok || old.client != client {
			tokenError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or revoked refresh token")
			return
		}
		delete(s.refresh, rt) // rotated: a refresh token works once
		g = old
		s.counts.Refreshes++
	case "client_credentials":
		if s.clients[client].Secret == "" {
			tokenError(w, http.StatusUnauthorized, "unauthorized_client", "client_credentials needs a confidential client")
			return
		}
		g = grant{client: client, scopes: strings.Fields(r.PostForm.Get("scope"))}
		refresh = false
		s.counts.ClientGrants++
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", r.PostForm.Get("grant_type"))
		return
	}
	s.tokenRequests = append(s.tokenRequests, TokenRequest{Grant: r.PostForm.Get("grant_type"), Resource: r.PostForm.Get("resource")})
	s.issue(w, g, refresh)
}

// authenticate returns the client id of a token request, checking its
// secret (basic or post) when the client has one.
func (s *Server) authenticate(r *http.Request) (string, error) {
	id, secret, basic := r.BasicAuth()
	if basic {
		// RFC 6749 section 2.3.1: form-encoded before base64.
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	c, ok := s.clients[id]
	switch {
	case !ok:
		return "", errors.New("unknown client")
	case c.Secret != "" && secret != c.Secret:
		return "", errors.New("wrong client secret")
	}
	return id, nil
}

// issue answers a token request; s.mu is held.
func (s *Server) issue(w http.ResponseWriter, g grant, refresh bool) {
	at := "at-" + rand.Text()
	s.access[at] = tokenState{scopes: g.scopes}
	s.issued = append(s.issued, at)
	resp := map[string]any{
		"access_token": at,
		"token_type":   "Bearer",
		"expires_in":   int(s.opts.TokenLifetime.Seconds()),
	}
	if len(g.scopes) > 0 {
		resp["scope"] = strings.Join(g.scopes, " ")
	}
	if refresh {
		rt := "rt-" + rand.Text()
		s.refresh[rt] = grant{client: g.client, scopes: g.scopes, resource: g.resource}
		s.issued = append(s.issued, rt)
		resp["refresh_token"] = rt
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, resp)
}

func tokenError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
