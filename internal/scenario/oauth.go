package scenario

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/oauth"
	"github.com/hosteval/hosteval/internal/yamlx"
)

// A url server's oauth: block: how the host gets tokens for it. The loader
// reads it into an oauth.Config (with ${VAR} expanded and every problem at
// its line); the command that runs servers builds the handler, once per
// server for the whole run ([NewOAuth]), and the cases' host options carry
// it, so that every case, and a shared server, uses one authorisation.

// oauthDoc is an oauth: block as written.
type oauthDoc struct {
	Flow                    *oauthFlow         `yaml:"flow" doc:"authorization_code (default): a person authorises in a browser (the URL is printed; -open opens it), once, then the token is cached and refreshed. client_credentials: a pre-registered confidential client, no person: the flow for CI. jwt_bearer: a workload presents the token it was given (assertion) in an RFC 7523 grant (workload identity federation). enterprise: the person's ID token (assertion) is exchanged for an ID-JAG at the identity provider (idp_token_endpoint, idp_client_id), which the pre-registered client presents (enterprise-managed authorization)." example:"client_credentials"`
	ClientID                *string            `yaml:"client_id" doc:"A client registered with the authorization server beforehand (needed by client_credentials)." example:"${NOTES_CLIENT_ID}"`
	ClientSecret            *string            `yaml:"client_secret" doc:"That client's secret, from the environment: write it as ${VAR}, never in the file. It is never printed, logged or written to results." example:"${NOTES_CLIENT_SECRET}"`
	ClientMetadataURL       *string            `yaml:"client_metadata_url" doc:"The https URL of a client ID metadata document describing hosteval; the URL is then the client id." example:"https://example.com/hosteval-client.json"`
	Registration            *oauthRegistration `yaml:"registration" doc:"How hosteval makes itself known as a client: auto (default: a metadata document if client_metadata_url is set, then client_id if set, then dynamic registration), preregistered, dynamic or metadata_document." example:"dynamic"`
	Issuer                  *string            `yaml:"issuer" doc:"The authorization server a pre-registered client belongs to: its credentials are sent to no other." example:"https://auth.example.com"`
	Scopes                  []string           `yaml:"scopes" doc:"Scopes to ask for instead of those the server advertises (authorization_code); a 403 insufficient_scope adds the ones it needs." example:"[notes:read, offline_access]"`
	RedirectPort            *int               `yaml:"redirect_port" min:"0" max:"65535" doc:"The port of the loopback redirect, http://127.0.0.1:PORT/callback (default 0: a free port); a pre-registered client needs the port it was registered with." example:"8765"`
	TokenEndpointAuthMethod *tokenAuthMethod   `yaml:"token_endpoint_auth_method" doc:"What a dynamic registration asks for: none, client_secret_basic or client_secret_post (default: the server's choice)." example:"none"`
	Assertion               *string            `yaml:"assertion" doc:"The token the jwt_bearer flow presents (a workload identity token), or the ID token the enterprise flow exchanges, from the environment as ${VAR}: never printed, logged or written to results." example:"${WORKLOAD_JWT}"`
	IDPTokenEndpoint        *string            `yaml:"idp_token_endpoint" doc:"The enterprise flow's identity provider token endpoint, where the ID token is exchanged for an ID-JAG (RFC 8693)." example:"https://idp.example.com/oauth2/token"`
	IDPClientID             *string            `yaml:"idp_client_id" doc:"The client registered with that identity provider (enterprise flow)." example:"${IDP_CLIENT_ID}"`
	IDPClientSecret         *string            `yaml:"idp_client_secret" doc:"That client's secret, as ${VAR}, when it has one (enterprise flow)." example:"${IDP_CLIENT_SECRET}"`
}

// oauthFlow, oauthRegistration and tokenAuthMethod are the values
// internal/oauth knows.
type (
	oauthFlow         string
	oauthRegistration string
	tokenAuthMethod   string
)

func (oauthFlow) Enum() []string {
	return []string{string(oauth.FlowAuthorizationCode), string(oauth.FlowClientCredentials), string(oauth.FlowJWTBearer), string(oauth.FlowEnterprise)}
}

func (oauthRegistration) Enum() []string {
	return []string{string(oauth.RegistrationAuto), string(oauth.RegistrationPreregistered),
		string(oauth.RegistrationDynamic), string(oauth.RegistrationMetadataDocument)}
}

func (tokenAuthMethod) Enum() []string {
	return []string{"none", "client_secret_basic", "client_secret_post"}
}

// oauthConfig builds the configuration of the oauth: block read at n (a
// server definition), expanding ${VAR} and reporting every problem at the
// field it is about. No problem quotes the secret.
func (f *fileCtx) oauthConfig(n *yamlx.Node, d *oauthDoc) *oauth.Config {
	at := n.At("oauth")
	// reported are the fields with a problem already: what Validate says
	// of their (empty, or cut) value would only repeat it.
	reported := map[string]bool{}
	str := func(key string, s *string) string {
		if s == nil {
			return ""
		}
		v, ok := f.expand(at, key, *s)
		if strings.Contains(v, caseDirMark) {
			errorAt(at, key, "${CASE_DIR} is only for args, env and dir")
			ok = false
		}
		reported[key] = !ok
		return v
	}
	cfg := &oauth.Config{
		ClientID:                str("client_id", d.ClientID),
		ClientSecret:            oauth.Secret(str("client_secret", d.ClientSecret)),
		ClientMetadataURL:       str("client_metadata_url", d.ClientMetadataURL),
		Issuer:                  str("issuer", d.Issuer),
		TokenEndpointAuthMethod: string(deref(d.TokenEndpointAuthMethod)),
		Flow:                    oauth.Flow(deref(d.Flow)),
		Registration:            oauth.Registration(deref(d.Registration)),
		Assertion:               oauth.Secret(str("assertion", d.Assertion)),
		IDPTokenEndpoint:        str("idp_token_endpoint", d.IDPTokenEndpoint),
		IDPClientID:             str("idp_client_id", d.IDPClientID),
		IDPClientSecret:         oauth.Secret(str("idp_client_secret", d.IDPClientSecret)),
	}
	// A port out of range is reported by the reader (the field's bounds).
	if p := deref(d.RedirectPort); p >= 0 && p <= 65535 {
		cfg.RedirectPort = p
	}
	for i, s := range d.Scopes {
		cfg.Scopes = append(cfg.Scopes, str(yamlx.Index("scopes", i), &s))
	}
	for _, secret := range []struct {
		key string
		v   *string
	}{{"client_secret", d.ClientSecret}, {"assertion", d.Assertion}, {"idp_client_secret", d.IDPClientSecret}} {
		if secret.v != nil && !strings.Contains(*secret.v, "${") && *secret.v != "" {
			errorAt(at, secret.key, "write the secret as ${VAR} and set that variable: a secret in a file is read, copied and committed")
		}
	}
	var fe *oauth.FieldError
	for _, err := range unjoin(cfg.Validate()) {
		if errors.As(err, &fe) {
			if !reported[fe.Field] {
				errorAt(at, fe.Field, "%s", fe.Problem)
			}
		} else {
			at.Errorf("%v", err)
		}
	}
	return cfg
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// unjoin returns the errors an errors.Join holds (err itself otherwise).
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// OAuthServer is a url server with an oauth: block, as a command needs it
// to build the server's handler.
type OAuthServer struct {
	// Name is the server's name in the host.
	Name string
	// URL is its MCP endpoint.
	URL    string
	Config oauth.Config
	// File and Line are where it is defined.
	File string
	Line int
}

// NewOAuth builds the handler that authorises the host with one server
// (an *oauth.Handler). The command gives it, and so decides where the
// person is told and where tokens are kept; the loader calls it once per
// server and configuration that the cases use (see [CaseOptions.OAuth]).
type NewOAuth func(OAuthServer) (host.OAuthHandler, error)

// oauthHandlers builds and keeps the handlers of one Cases or LoadServers
// call: one per server name, URL and configuration.
type oauthHandlers struct {
	build    NewOAuth
	handlers map[string]host.OAuthHandler
}

// handler returns the handler of def, building it on first use. A def
// without an oauth: block has none.
func (o *oauthHandlers) handler(def *serverDef) (host.OAuthHandler, error) {
	if def.oauth == nil {
		return nil, nil
	}
	where := fmt.Sprintf("%s:%d: server %s", def.file, def.line, def.spec.Name)
	if o.build == nil {
		return nil, fmt.Errorf("%s has an oauth: block, and this command does not authorise servers", where)
	}
	c := def.oauth
	key := strings.Join([]string{def.spec.Name, def.spec.URL, string(c.Flow), c.ClientID, string(c.ClientSecret), c.ClientMetadataURL,
		string(c.Registration), c.Issuer, strings.Join(c.Scopes, " "), fmt.Sprint(c.RedirectPort), c.TokenEndpointAuthMethod}, "\x00")
	if h, ok := o.handlers[key]; ok {
		return h, nil
	}
	h, err := o.build(OAuthServer{Name: def.spec.Name, URL: def.spec.URL, Config: *c, File: def.file, Line: def.line})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if o.handlers == nil {
		o.handlers = map[string]host.OAuthHandler{}
	}
	o.handlers[key] = h
	return h, nil
}
