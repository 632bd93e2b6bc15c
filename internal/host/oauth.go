package host

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The host's side of OAuth is small: ServerSpec.OAuth is handed to the
// Streamable HTTP transport (http.go), which asks it for tokens and lets it
// answer 401 and 403. What is here is for a server that asks for a bearer
// token when no handler is configured.

// OAuthHandler authorises the host with an HTTP server (ServerSpec.OAuth):
// the go-sdk's interface, which internal/oauth's Handler implements.
type OAuthHandler = auth.OAuthHandler

// bearerChallenge reports whether a response asks for an OAuth bearer token.
func bearerChallenge(h http.Header) bool {
	challenges, err := oauthex.ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range challenges {
		if c.Scheme == "bearer" {
			return true
		}
	}
	return false
}

// authRefusal is a 401 with a Bearer challenge from a server that has no
// OAuth handler: no further request can succeed, and the error says what to
// configure.
type authRefusal struct {
	server     string
	configured bool // the servers file gives an Authorization header
}

func (e *authRefusal) Error() string {
	if e.configured {
		return fmt.Sprintf("server %s refused the Authorization header of its headers: (HTTP 401; the token may have expired or been revoked): "+
			"an oauth: block in its entry of the servers file lets hosteval get and refresh tokens itself", e.server)
	}
	return fmt.Sprintf("server %s needs OAuth (HTTP 401 with a Bearer challenge): add an oauth: block to its entry in the servers file", e.server)
}

// headerValue looks a header up in a configured map, whatever its case.
func headerValue(headers map[string]string, name string) (string, bool) {
	for k, v := range headers {
		if http.CanonicalHeaderKey(k) == name {
			return v, true
		}
	}
	return "", false
}

// authRefused turns an authRefusal ending a call into the text for the
// model, and marks the server dead: every later request would be refused too.
func (h *Host) authRefused(s *serverConn, err error) (string, bool) {
	var refusal *authRefusal
	if !errors.As(err, &refusal) {
		return "", false
	}
	s.markDead("it refused the host's credentials")
	h.step("host", "HTTP 401: "+refusal.Error(), nil)
	return fmt.Sprintf("error: the server %s refused the host's credentials (HTTP 401), so its tools can't be used now.", s.spec.Name), true
}
