package oauth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
)

// Flow is how the host obtains tokens.
type Flow string

const (
	// FlowAuthorizationCode asks a person, in a browser, with PKCE and a
	// loopback redirect: the flow for people (chat, the lab, a first run).
	FlowAuthorizationCode Flow = "authorization_code"
	// FlowClientCredentials uses a pre-registered confidential client and
	// asks no one: the flow for CI.
	FlowClientCredentials Flow = "client_credentials"
	// FlowJWTBearer presents a JWT the host is given (assertion: a
	// workload identity token) in an RFC 7523 jwt-bearer grant, and asks
	// no one: the flow for workloads (SEP-1933, workload identity
	// federation).
	FlowJWTBearer Flow = "jwt_bearer"
	// FlowEnterprise exchanges the person's ID token from the enterprise's
	// identity provider (assertion) for an ID-JAG there (RFC 8693 token
	// exchange at idp_token_endpoint), then presents the ID-JAG in a
	// jwt-bearer grant with the pre-registered client (SEP-990,
	// enterprise-managed authorization).
	FlowEnterprise Flow = "enterprise"
)

// Registration is how the host makes itself known to the authorization
// server as a client.
type Registration string

const (
	// RegistrationAuto tries each method the configuration allows, in the
	// order of the MCP specification: a client ID metadata document (when
	// client_metadata_url is set and the server supports it), the
	// pre-registered client (when client_id is set), dynamic registration.
	RegistrationAuto Registration = "auto"
	// RegistrationPreregistered uses client_id (and client_secret) only.
	RegistrationPreregistered Registration = "preregistered"
	// RegistrationDynamic registers a new client with the server (RFC 7591).
	RegistrationDynamic Registration = "dynamic"
	// RegistrationMetadataDocument uses client_metadata_url as the client id
	// (a client ID metadata document).
	RegistrationMetadataDocument Registration = "metadata_document"
)

// Config is a server's oauth: block in a servers file. Values reach it
// already expanded (${VAR}); the secret is never printed, logged or
// marshalled (see Secret).
type Config struct {
	// Flow is authorization_code (the default) or client_credentials.
	Flow Flow `yaml:"flow,omitempty" json:"flow,omitempty"`
	// ClientID and ClientSecret are a client registered with the
	// authorization server beforehand. The secret is empty for a public
	// client.
	ClientID     string `yaml:"client_id,omitempty" json:"client_id,omitempty"`
	ClientSecret Secret `yaml:"client_secret,omitempty" json:"client_secret,omitempty"`
	// ClientMetadataURL is the https URL of a client ID metadata document
	// that describes hosteval; the URL itself is then the client id.
	ClientMetadataURL string `yaml:"client_metadata_url,omitempty" json:"client_metadata_url,omitempty"`
	// Registration picks the registration method (default auto).
	Registration Registration `yaml:"registration,omitempty" json:"registration,omitempty"`
	// Issuer binds a pre-registered client to one authorization server:
	// credentials are never sent to another (SEP-2352).
	Issuer string `yaml:"issuer,omitempty" json:"issuer,omitempty"`
	// Scopes are requested instead of those the server advertises. A step-up
	// (403 insufficient_scope) adds the scopes the server asks for.
	Scopes []string `yaml:"scopes,omitempty" json:"scopes,omitempty"`
	// RedirectPort is the port of the loopback redirect
	// (http://127.0.0.1:PORT/callback); 0 picks a free port each time. A
	// pre-registered client needs the port it was registered with.
	RedirectPort int `yaml:"redirect_port,omitempty" json:"redirect_port,omitempty"`
	// TokenEndpointAuthMethod is what a dynamic registration asks for: none,
	// client_secret_basic or client_secret_post (default: the server's
	// choice). The server's answer decides.
	TokenEndpointAuthMethod string `yaml:"token_endpoint_auth_method,omitempty" json:"token_endpoint_auth_method,omitempty"`
	// Assertion is the JWT of the jwt_bearer flow (a workload identity
	// token), or the ID token the enterprise flow exchanges.
	Assertion Secret `yaml:"assertion,omitempty" json:"assertion,omitempty"`
	// IDPTokenEndpoint, IDPClientID and IDPClientSecret are the enterprise
	// flow's identity provider: where the ID token is exchanged for an
	// ID-JAG, as which client (the secret is empty for a public one).
	IDPTokenEndpoint string `yaml:"idp_token_endpoint,omitempty" json:"idp_token_endpoint,omitempty"`
	IDPClientID      string `yaml:"idp_client_id,omitempty" json:"idp_client_id,omitempty"`
	IDPClientSecret  Secret `yaml:"idp_client_secret,omitempty" json:"idp_client_secret,omitempty"`
}

// Secret is a value that must not be seen: every way of printing or
// marshalling it says [redacted]. Use string(s) where the value is needed.
type Secret string

const redacted = "[redacted]"

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString keeps %#v from printing the value.
func (s Secret) GoString() string { return s.String() }

// LogValue keeps slog from printing the value.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON keeps a secret out of JSON: results, run records, events.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// MarshalYAML keeps a secret out of YAML written back.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// FieldError is one problem of a Config, naming the YAML field, so that a
// loader can point at the file and line of that field.
type FieldError struct {
	Field   string // the key in the oauth: block, e.g. "client_id"
	Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// Validate reports every problem of the configuration, each a *FieldError
// (joined with errors.Join).
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	switch c.Flow {
	case "", FlowAuthorizationCode, FlowClientCredentials, FlowJWTBearer, FlowEnterprise:
	default:
		bad("flow", "unknown flow %q (want authorization_code, client_credentials, jwt_bearer or enterprise)", c.Flow)
	}
	if c.Flow == FlowJWTBearer || c.Flow == FlowEnterprise {
		if c.Assertion == "" {
			bad("assertion", "the %s flow needs the token it presents (assertion: ${VAR})", c.Flow)
		}
		if c.ClientMetadataURL != "" || c.RedirectPort != 0 || c.TokenEndpointAuthMethod != "" {
			bad("flow", "the %s flow has no registration and no redirect: remove client_metadata_url, redirect_port and token_endpoint_auth_method", c.Flow)
		}
	} else if c.Assertion != "" {
		bad("assertion", "only the jwt_bearer and enterprise flows present an assertion")
	}
	if c.Flow == FlowEnterprise {
		if c.IDPTokenEndpoint == "" {
			bad("idp_token_endpoint", "the enterprise flow needs the identity provider's token endpoint")
		} else if u, err := url.Parse(c.IDPTokenEndpoint); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad("idp_token_endpoint", "must be the identity provider's token endpoint URL, not %q", c.IDPTokenEndpoint)
		}
		if c.IDPClientID == "" {
			bad("idp_client_id", "the enterprise flow needs the client registered with the identity provider")
		}
		if c.ClientID == "" {
			bad("client_id", "the enterprise flow needs the client registered with the authorization server")
		}
	} else if c.IDPTokenEndpoint != "" || c.IDPClientID != "" || c.IDPClientSecret != "" {
		bad("idp_token_endpoint", "only the enterprise flow asks an identity provider")
	}
	switch c.Registration {
	case "", RegistrationAuto, RegistrationPreregistered, RegistrationDynamic, RegistrationMetadataDocument:
	default:
		bad("registration", "unknown registration %q (want auto, preregistered, dynamic or metadata_document)", c.Registration)
	}
	if c.ClientSecret != "" && c.ClientID == "" {
		bad("client_secret", "a client secret needs its client_id")
	}
	if c.ClientMetadataURL != "" {
		if u, err := url.Parse(c.ClientMetadataURL); err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			bad("client_metadata_url", "must be an https URL with a path (the client ID metadata document), not %q", c.ClientMetadataURL)
		}
	}
	if c.Issuer != "" {
		if u, err := url.Parse(c.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad("issuer", "must be the authorization server's issuer URL, not %q", c.Issuer)
		}
	}
	for i, s := range c.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\n\"\\") {
			bad(fmt.Sprintf("scopes[%d]", i), "a scope is one word without spaces or quotes, not %q", s)
		}
	}
	if c.RedirectPort < 0 || c.RedirectPort > 65535 {
		bad("redirect_port", "%d is not a port (0 picks a free one)", c.RedirectPort)
	}
	switch c.TokenEndpointAuthMethod {
	case "", "none", "client_secret_basic", "client_secret_post":
	default:
		bad("token_endpoint_auth_method", "unknown method %q (want none, client_secret_basic or client_secret_post)", c.TokenEndpointAuthMethod)
	}

	if c.Flow == FlowClientCredentials {
		if c.ClientID == "" {
			bad("client_id", "the client_credentials flow needs a pre-registered client: set client_id and client_secret")
		}
		if c.ClientSecret == "" {
			bad("client_secret", "the client_credentials flow needs the client's secret (client_secret: ${VAR})")
		}
		if c.Registration != "" && c.Registration != RegistrationAuto && c.Registration != RegistrationPreregistered {
			bad("registration", "the client_credentials flow uses a pre-registered client only")
		}
		if c.ClientMetadataURL != "" {
			bad("client_metadata_url", "the client_credentials flow uses a pre-registered client, not a metadata document")
		}
		if c.RedirectPort != 0 {
			bad("redirect_port", "the client_credentials flow has no redirect")
		}
		if len(c.Scopes) > 0 {
			bad("scopes", "the client_credentials flow asks for the scopes the server advertises or demands; remove scopes")
		}
		if c.TokenEndpointAuthMethod != "" {
			bad("token_endpoint_auth_method", "applies to dynamic registration only; a pre-registered client authenticates as the server advertises (client_secret_post first)")
		}
		return errors.Join(errs...)
	}
	switch c.Registration {
	case RegistrationPreregistered:
		if c.ClientID == "" {
			bad("client_id", "registration preregistered needs the client's client_id")
		}
		if c.TokenEndpointAuthMethod != "" {
			bad("token_endpoint_auth_method", "applies to dynamic registration only; a pre-registered client authenticates as the server advertises (client_secret_post first)")
		}
	case RegistrationDynamic:
		if c.ClientID != "" {
			bad("client_id", "a dynamic registration gets its client id from the server; remove client_id or use registration: preregistered")
		}
	case RegistrationMetadataDocument:
		if c.ClientMetadataURL == "" {
			bad("client_metadata_url", "registration metadata_document needs the document's URL")
		}
	}
	return errors.Join(errs...)
}

func (c Config) flow() Flow {
	if c.Flow == "" {
		return FlowAuthorizationCode
	}
	return c.Flow
}

func (c Config) registration() Registration {
	if c.Registration == "" {
		return RegistrationAuto
	}
	return c.Registration
}
