package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// authorizeClient runs the client credentials flow (RFC 6749 section 4.4)
// the way the go-sdk's extauth.ClientCredentialsHandler does (protected
// resource metadata, then the authorization server's, then the grant),
// with two differences the MCP authorization specification asks for: every
// token request carries the server's resource (RFC 8707), and a metadata
// document that names another resource is an error saying so.
func (h *Handler) authorizeClient(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return fmt.Errorf("the server's WWW-Authenticate header: %w", err)
	}
	serverURL := req.URL.String()
	prm, err := h.resourceMetadata(ctx, serverURL, challenges)
	if err != nil {
		return err
	}
	if prm == nil {
		// A 2025-03-26 server: its origin is its authorization server.
		u, err := url.Parse(serverURL)
		if err != nil {
			return fmt.Errorf("the server URL: %w", err)
		}
		u.Path, u.RawPath, u.RawQuery = "", "", ""
		prm = &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{u.String()}, Resource: serverURL}
	}
	if len(prm.AuthorizationServers) == 0 {
		return errors.New("the protected resource metadata names no authorization server")
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, h.opts.HTTPClient)
	if err != nil {
		return fmt.Errorf("the authorization server's metadata: %w", err)
	}
	if asm == nil {
		// 2025-03-26: the default endpoints.
		asm = &oauthex.AuthServerMeta{Issuer: issuer, TokenEndpoint: strings.TrimSuffix(issuer, "/") + "/token"}
	}
	if h.cfg.Issuer != "" && strings.TrimSuffix(h.cfg.Issuer, "/") != strings.TrimSuffix(asm.Issuer, "/") {
		// SEP-2352: the credentials are for one authorization server only.
		return fmt.Errorf("the authorization server is %s, not the issuer %s the client is registered with: its credentials are not sent there", asm.Issuer, h.cfg.Issuer)
	}

	scopes := challengedScopes(challenges)
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	if len(h.cfg.Scopes) > 0 && resp.StatusCode != http.StatusForbidden {
		scopes = h.cfg.Scopes
	}
	h.mu.Lock()
	scopes = union(h.granted, scopes)
	h.mu.Unlock()

	params := url.Values{"resource": {prm.Resource}}
	grant := "client credentials grant"
	switch h.cfg.flow() {
	case FlowJWTBearer:
		grant = "jwt-bearer grant"
		params.Set("grant_type", grantJWTBearer)
		params.Set("assertion", string(h.cfg.Assertion))
	case FlowEnterprise:
		jag, err := h.exchangeIDToken(ctx, asm.Issuer, prm.Resource, scopes)
		if err != nil {
			return err
		}
		grant = "jwt-bearer grant (the ID-JAG)"
		params.Set("grant_type", grantJWTBearer)
		params.Set("assertion", jag)
	}
	style := authStyle(asm.TokenEndpointAuthMethodsSupported)
	if h.cfg.ClientSecret == "" {
		// A public client (a workload): its id in the body, no secret.
		style = oauth2.AuthStyleInParams
	}
	cc := &clientcredentials.Config{
		ClientID: h.cfg.ClientID, ClientSecret: string(h.cfg.ClientSecret),
		TokenURL: asm.TokenEndpoint, Scopes: scopes,
		AuthStyle:      style,
		EndpointParams: params,
	}
	// The first grant ends with the request that needs it; later ones,
	// made when the token is about to expire, outlive it.
	later := context.WithValue(context.Background(), oauth2.HTTPClient, h.opts.HTTPClient)
	fetch := func(*oauth2.Token) (*oauth2.Token, error) { return cc.Token(later) }
	tok, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, h.opts.HTTPClient))
	if err != nil {
		return fmt.Errorf("%s: %w", grant, err)
	}
	granted := scopes
	if s, ok := tok.Extra("scope").(string); ok {
		granted = strings.Fields(s)
	}
	h.mu.Lock()
	h.src, h.refresher, h.last, h.granted = newRenewer(tok, fetch), nil, nil, granted
	h.mu.Unlock()
	_, err = h.token()
	return err
}

// grantJWTBearer is RFC 7523's grant type.
const grantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// exchangeIDToken exchanges the enterprise flow's ID token for an ID-JAG
// at the identity provider (RFC 8693, SEP-990): for the authorization
// server issuer, as its audience, and the server's resource.
func (h *Handler) exchangeIDToken(ctx context.Context, issuer, resource string, scopes []string) (string, error) {
	creds := &oauthex.ClientCredentials{ClientID: h.cfg.IDPClientID}
	if h.cfg.IDPClientSecret != "" {
		creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: string(h.cfg.IDPClientSecret)}
	}
	tok, err := oauthex.ExchangeToken(ctx, h.cfg.IDPTokenEndpoint, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG, Audience: issuer, Resource: resource, Scope: scopes,
		SubjectToken: string(h.cfg.Assertion), SubjectTokenType: oauthex.TokenTypeIDToken,
	}, creds, h.opts.HTTPClient)
	if err != nil {
		return "", fmt.Errorf("token exchange at the identity provider %s: %w", h.cfg.IDPTokenEndpoint, err)
	}
	return tok.AccessToken, nil
}

// challengedScopes returns the scope of a Bearer challenge.
func challengedScopes(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

// authStyle picks how the client authenticates at the token endpoint from
// the methods the server supports, as the go-sdk does: in the body first,
// then basic, else detected by trying.
func authStyle(supported []string) oauth2.AuthStyle {
	switch {
	case slices.Contains(supported, "client_secret_post"):
		return oauth2.AuthStyleInParams
	case slices.Contains(supported, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleAutoDetect
}
