package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// authorizeCode runs the authorization code flow with PKCE through the
// go-sdk's handler, with a loopback redirect of its own.
//
// The SDK's handler is made afresh for each authorization: its redirect URL
// (a port free now) is fixed at construction. Its memory of granted scopes
// goes with it, so the handler keeps its own (h.granted) and a step-up
// asks for them and the new ones together.
func (h *Handler) authorizeCode(ctx context.Context, req *http.Request, resp *http.Response) error {
	if h.opts.Unattended != "" {
		// Said before a registration or a listener: nothing here can
		// finish the flow.
		advice := "use flow: client_credentials"
		if h.opts.Cache != nil {
			advice += ", or a cached token (authorise once where a person can: hosteval keeps the token in " + h.opts.Cache.Dir() + ")"
		}
		err := fmt.Errorf("%w (%s): the authorization_code flow needs a person at a browser; %s", ErrNoPerson, h.opts.Unattended, advice)
		h.refuse(err)
		return err
	}
	// The go-sdk's flow looks for the server's metadata too, but passes
	// over a refused document to a fallback that fails for other reasons
	// (a 404 from the server's origin); and the resource it names is what
	// the refresh grants must name.
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("the server's WWW-Authenticate header: %w", err)
	}
	resource := req.URL.String()
	prm, err := h.resourceMetadata(ctx, resource, challenges)
	if err != nil {
		return err
	}
	if prm != nil {
		resource = prm.Resource
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", h.cfg.RedirectPort))
	if err != nil {
		return fmt.Errorf("listen for the browser's redirect: %w", err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://%s/callback", ln.Addr())

	h.mu.Lock()
	granted := slices.Clone(h.granted)
	h.mu.Unlock()
	stepUp := resp.StatusCode == http.StatusForbidden
	var (
		rc    *oauth2.Config
		first *oauth2.Token
	)
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: h.fetchCode(ln),
		ScopeFilter: func(discovered []string) []string {
			want := discovered
			if len(h.cfg.Scopes) > 0 && !stepUp {
				want = h.cfg.Scopes
			}
			return union(granted, want)
		},
		RequestRefreshToken: true,
		Client:              h.opts.HTTPClient,
		// The handler's own source (the renewer) refreshes this token; the
		// SDK's only reads it.
		NewTokenSource: func(_ context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			rc, first = c, tok
			return oauth2.StaticTokenSource(tok), nil
		},
	}
	reg := h.cfg.registration()
	if reg == RegistrationMetadataDocument || (reg == RegistrationAuto && h.cfg.ClientMetadataURL != "") {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: h.cfg.ClientMetadataURL}
	}
	if reg == RegistrationPreregistered || (reg == RegistrationAuto && h.cfg.ClientID != "") {
		creds := &oauthex.ClientCredentials{ClientID: h.cfg.ClientID, Issuer: h.cfg.Issuer}
		if h.cfg.ClientSecret != "" {
			creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: string(h.cfg.ClientSecret)}
		}
		cfg.PreregisteredClient = creds
	}
	if reg == RegistrationDynamic || reg == RegistrationAuto {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect},
			ClientName:              h.opts.ClientName,
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: h.cfg.TokenEndpointAuthMethod,
		}}
	}
	sdk, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return err
	}
	if err := sdk.Authorize(ctx, req, resp); err != nil {
		return err
	}
	if first == nil {
		return nil // a 403 that was no insufficient_scope: nothing to do
	}
	scopes := rc.Scopes // what was asked, unless the server says what it granted
	if granted, ok := first.Extra("scope").(string); ok {
		scopes = strings.Fields(granted)
	}
	h.mu.Lock()
	h.setRefreshing(rc, resource, first)
	h.granted = scopes
	h.mu.Unlock()
	h.save()
	return nil
}

// union returns a's scopes and then b's not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// callback is what the browser's redirect brought.
type callback struct {
	res *auth.AuthorizationResult
	err error // the authorization server's refusal
}

// errNoAnswer is a person who did not finish in time.
var errNoAnswer = errors.New("no answer from the browser")

// ErrNoPerson is an authorization that needs a person where there is none
// (Options.Unattended): the configuration, not the server, must change.
var ErrNoPerson = errors.New("no person can authorise it here")

// fetchCode returns the SDK's AuthorizationCodeFetcher: it serves the
// loopback redirect on ln, prints the authorization URL for the person
// (and opens it, if asked), and waits for the redirect that carries this
// authorization's state.
func (h *Handler) fetchCode(ln net.Listener) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, fmt.Errorf("authorization URL: %w", err)
		}
		results := make(chan callback, 1)
		srv := &http.Server{
			Handler:           &redirectHandler{server: h.opts.Server, state: u.Query().Get("state"), results: results},
			ReadHeaderTimeout: 10 * time.Second,
		}
		var wg sync.WaitGroup
		wg.Go(func() { srv.Serve(ln) })
		defer func() {
			// Let the browser get its page before the listener goes.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			defer cancel()
			if srv.Shutdown(sctx) != nil {
				srv.Close()
			}
			wg.Wait()
		}()

		fmt.Fprintf(h.opts.Out, "open this URL to authorise %s: %s\n", h.opts.Server, args.URL)
		if h.opts.Open != nil {
			if err := h.opts.Open(ctx, args.URL); err != nil {
				fmt.Fprintf(h.opts.Out, "the browser could not be opened (%v): open the URL yourself\n", err)
			}
		}
		timer := time.NewTimer(h.opts.PersonTimeout)
		defer timer.Stop()
		select {
		case cb := <-results:
			if cb.err != nil {
				h.refuse(cb.err)
				return nil, cb.err
			}
			return cb.res, nil
		case <-timer.C:
			err := fmt.Errorf("%w within %v: open the URL printed above, or run again", errNoAnswer, h.opts.PersonTimeout)
			h.refuse(err)
			return nil, err
		case <-ctx.Done():
			// Remembered too: in a batch run every case would print the
			// URL again, and wait as long for nothing.
			err := fmt.Errorf("%w within the request's time limit (%w): a person needs longer; authorise the server before the run", errNoAnswer, ctx.Err())
			h.refuse(err)
			return nil, err
		}
	}
}

// refuse remembers that the person said no or did not answer, so that the
// other requests of the run do not ask again.
func (h *Handler) refuse(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refused = &AuthorizeError{Server: h.opts.Server, Err: err, Final: true}
}

// redirectHandler receives the browser at the loopback redirect.
type redirectHandler struct {
	server  string
	state   string
	results chan<- callback
}

func (rh *redirectHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	q := r.URL.Query()
	if q.Get("state") != rh.state {
		// Not the answer to this authorization (a stale tab, a forged
		// link): ignored, the wait goes on.
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "hosteval: this page does not answer the authorisation hosteval is waiting for (its state differs).\n")
		return
	}
	var cb callback
	switch {
	case q.Get("error") != "":
		cb.err = fmt.Errorf("the authorization server answered %s", q.Get("error"))
		if d := q.Get("error_description"); d != "" {
			cb.err = fmt.Errorf("%w: %s", cb.err, d)
		}
		fmt.Fprintf(w, "hosteval: %s was not authorised (%s). You can close this tab.\n", rh.server, q.Get("error"))
	case q.Get("code") == "":
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "hosteval: the redirect carries no code.\n")
		return
	default:
		cb.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
		fmt.Fprintf(w, "hosteval: %s is authorised. You can close this tab.\n", rh.server)
	}
	select {
	case rh.results <- cb:
	default: // answered already: a reload
	}
}

// FollowRedirects returns an Options.Open that plays a person for an
// authorization server that approves at once (a test's, the conformance
// suite's): it gets the URL and follows the redirect to the loopback
// listener, which then holds the code.
func FollowRedirects(client *http.Client) func(ctx context.Context, url string) error {
	return func(ctx context.Context, url string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("the authorization page answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
		}
		return nil
	}
}
