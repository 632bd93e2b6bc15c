package host

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/hosteval/hosteval/internal/text"
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

// authorizeFailure is an error of a ServerSpec.OAuth handler's Authorize
// that says whether any later request of the run can be authorised
// (internal/oauth's AuthorizeError): the person said no, did not answer, or
// no person is here. Its text holds no secret.
type authorizeFailure interface {
	error
	Permanent() bool
}

// authRefused turns an authRefusal or a failed authorisation ending a call
// into the text for the model. A refusal, and an authorisation that will
// not be tried again, mark the server dead: every later request would fail
// too, and the model must not be told to try again.
func (h *Host) authRefused(s *serverConn, err error) (string, bool) {
	var refusal *authRefusal
	if errors.As(err, &refusal) {
		s.markDead("it refused the host's credentials")
		h.step("host", "HTTP 401: "+refusal.Error(), nil)
		return fmt.Sprintf("error: the server %s refused the host's credentials (HTTP 401), so its tools can't be used now.", s.spec.Name), true
	}
	var failed authorizeFailure
	if !errors.As(err, &failed) {
		return "", false
	}
	h.step("host", "authorisation failed: "+failed.Error(), nil)
	why := text.Shorten(failed.Error(), 200)
	if failed.Permanent() {
		s.markDead("the host could not be authorised")
		return fmt.Sprintf("error: the host could not be authorised with the server %s (%s), so its tools can't be used in this run.", s.spec.Name, why), true
	}
	return fmt.Sprintf("error: the host could not be authorised with the server %s (%s). It may work later.", s.spec.Name, why), true
}
