package oauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/oauth"
	"github.com/hosteval/hosteval/internal/oauth/oauthtest"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// newHandler returns a handler for res that approves in the test's stead.
func newHandler(t *testing.T, cfg oauth.Config, res *oauthtest.Resource, cache *oauth.Cache, out *fixturetest.Buffer) *oauth.Handler {
	t.Helper()
	h, err := oauth.New(cfg, oauth.Options{
		Server: "notes", URL: res.URL, Cache: cache, Out: out,
		Open: oauth.FollowRedirects(&http.Client{Timeout: 10 * time.Second}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func connect(t *testing.T, h *oauth.Handler, url string) (*mcp.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, OAuthHandler: h}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// lookup calls the lookup tool and returns its value.
func lookup(t *testing.T, cs *mcp.ClientSession, key string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup", Arguments: map[string]any{"key": key}})
	if err != nil {
		return "", err
	}
	var out oauthtest.NoteOut
	data, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(data, &out)
	return out.Value, nil
}

func TestAuthorizationCodeWithDynamicRegistration(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{ScopesSupported: []string{"notes:read", "offline_access"}})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{Scopes: []string{"notes:read"}})
	var out fixturetest.Buffer
	h := newHandler(t, oauth.Config{}, res, nil, &out)
	cs, err := connect(t, h, res.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := lookup(t, cs, "k1")
	if err != nil || got != "value of k1" {
		t.Fatalf("lookup = %q, %v; want value of k1", got, err)
	}
	want := oauthtest.Counts{Registrations: 1, Authorizations: 1, CodeExchanges: 1}
	if diff := cmp.Diff(want, as.Counts()); diff != "" {
		t.Errorf("authorization server counts (-want +got):\n%s", diff)
	}
	// The scope of the 401's challenge, and offline_access for a refresh
	// token, since the server supports it.
	if diff := cmp.Diff([]string{"notes:read offline_access"}, as.ScopesAsked()); diff != "" {
		t.Errorf("scopes asked (-want +got):\n%s", diff)
	}
	prompt := regexp.MustCompile(`^open this URL to authorise notes: ` + regexp.QuoteMeta(as.URL) + `/authorize\?\S*code_challenge_method=S256\S*\n$`)
	if !prompt.MatchString(out.String()) {
		t.Errorf("what the person saw = %q, want one line matching %s", out.String(), prompt)
	}
	if unauthorized, _ := res.Refusals(); unauthorized != 1 {
		t.Errorf("the server answered 401 %d times, want once (the first request)", unauthorized)
	}
}

func TestRefresh(t *testing.T) {
	tests := []struct {
		name     string
		lifetime time.Duration
		// expire switches the server's tokens off before the second call.
		expire bool
		// what the second call costs
		wantRefreshes, wantUnauthorized int
	}{
		// The server stops accepting the token the client thinks valid:
		// its 401 is answered with a refresh and the call is retried.
		{"revoked mid-run", time.Hour, true, 1, 1},
		// A token that the client thinks still valid is sent as it is.
		{"valid", time.Hour, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := oauthtest.NewServer(t, oauthtest.Options{TokenLifetime: tt.lifetime})
			res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
			h := newHandler(t, oauth.Config{}, res, nil, &fixturetest.Buffer{})
			cs, err := connect(t, h, res.URL)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lookup(t, cs, "before"); err != nil {
				t.Fatal(err)
			}
			if tt.expire {
				as.ExpireTokens()
			}
			before := as.Counts()
			unauthorized, _ := res.Refusals()
			got, err := lookup(t, cs, "after")
			if err != nil || got != "value of after" {
				t.Fatalf("the call after expiry = %q, %v; want value of after", got, err)
			}
			c := as.Counts()
			if c.Authorizations != 1 || c.Refreshes-before.Refreshes != tt.wantRefreshes {
				t.Errorf("authorizations %d, refreshes for the call %d; want 1, %d", c.Authorizations, c.Refreshes-before.Refreshes, tt.wantRefreshes)
			}
			if after, _ := res.Refusals(); after-unauthorized != tt.wantUnauthorized {
				t.Errorf("401 answers to the call = %d, want %d", after-unauthorized, tt.wantUnauthorized)
			}
		})
	}
}

// When the refresh token is gone too, the next 401 runs the whole flow
// again, and the call still succeeds.
func TestReauthorizeWhenRefreshFails(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	h := newHandler(t, oauth.Config{}, res, nil, &fixturetest.Buffer{})
	cs, err := connect(t, h, res.URL)
	if err != nil {
		t.Fatal(err)
	}
	as.ExpireTokens()
	as.RevokeRefreshTokens()
	if got, err := lookup(t, cs, "k"); err != nil || got != "value of k" {
		t.Fatalf("lookup = %q, %v", got, err)
	}
	if c := as.Counts(); c.Authorizations != 2 || c.Refreshes != 0 {
		t.Errorf("authorizations %d, refreshes %d; want 2, 0", c.Authorizations, c.Refreshes)
	}
}

func TestStepUp(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{
		Scopes: []string{"notes:read"}, ToolScopes: map[string][]string{"write_note": {"notes:write"}},
	})
	h := newHandler(t, oauth.Config{}, res, nil, &fixturetest.Buffer{})
	cs, err := connect(t, h, res.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_note", Arguments: map[string]any{"key": "k"}}); err != nil {
		t.Fatalf("write_note after a step-up: %v", err)
	}
	// Read scope granted first; the step-up keeps it and adds write.
	if diff := cmp.Diff([]string{"notes:read", "notes:read notes:write"}, as.ScopesAsked()); diff != "" {
		t.Errorf("scopes asked (-want +got):\n%s", diff)
	}
	if _, forbidden := res.Refusals(); forbidden != 1 {
		t.Errorf("403 answers = %d, want 1", forbidden)
	}
	if got, err := lookup(t, cs, "k"); err != nil || got != "value of k" {
		t.Errorf("lookup after the step-up = %q, %v", got, err)
	}
}

func TestConfiguredScopesReplaceAdvertised(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	h := newHandler(t, oauth.Config{Scopes: []string{"notes:read", "profile"}}, res, nil, &fixturetest.Buffer{})
	if _, err := connect(t, h, res.URL); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"notes:read profile"}, as.ScopesAsked()); diff != "" {
		t.Errorf("scopes asked (-want +got):\n%s", diff)
	}
}

func TestPreregisteredClientOnAGivenPort(t *testing.T) {
	port := freePort(t)
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
	as := oauthtest.NewServer(t, oauthtest.Options{
		NoRegistration: true,
		Clients:        map[string]oauthtest.Client{"hosteval-ci": {Secret: "pre-shared", RedirectURIs: []string{redirect}}},
	})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	cfg := oauth.Config{ClientID: "hosteval-ci", ClientSecret: "pre-shared", RedirectPort: port, Issuer: as.URL}
	cs, err := connect(t, newHandler(t, cfg, res, nil, &fixturetest.Buffer{}), res.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := lookup(t, cs, "k"); err != nil || got != "value of k" {
		t.Fatalf("lookup = %q, %v", got, err)
	}
	if c := as.Counts(); c.Registrations != 0 || c.CodeExchanges != 1 {
		t.Errorf("registrations %d, code exchanges %d; want 0, 1", c.Registrations, c.CodeExchanges)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestClientCredentials(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{Clients: map[string]oauthtest.Client{"ci-bot": {Secret: "s3cret-value"}}})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{Scopes: []string{"notes:read"}})
	cfg := oauth.Config{Flow: oauth.FlowClientCredentials, ClientID: "ci-bot", ClientSecret: "s3cret-value"}
	var out fixturetest.Buffer
	cs, err := connect(t, newHandler(t, cfg, res, nil, &out), res.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := lookup(t, cs, "k"); err != nil || got != "value of k" {
		t.Fatalf("lookup = %q, %v", got, err)
	}
	as.ExpireTokens()
	if got, err := lookup(t, cs, "k2"); err != nil || got != "value of k2" {
		t.Fatalf("lookup after expiry = %q, %v", got, err)
	}
	if diff := cmp.Diff(oauthtest.Counts{ClientGrants: 2, Rejected: 1}, as.Counts()); diff != "" {
		t.Errorf("authorization server counts (-want +got):\n%s", diff)
	}
	if out.String() != "" {
		t.Errorf("the person was told %q; want nothing (no one to ask in CI)", out.String())
	}

	t.Run("wrong secret", func(t *testing.T) {
		cfg := cfg
		cfg.ClientSecret = "not-the-secret-9f3"
		_, err := connect(t, newHandler(t, cfg, res, nil, &fixturetest.Buffer{}), res.URL)
		if err == nil || !strings.Contains(err.Error(), "authorise notes: ") || !strings.Contains(err.Error(), "check client_id and client_secret") {
			t.Errorf("error = %v; want authorise notes: ... check client_id and client_secret", err)
		}
		if err != nil && strings.Contains(err.Error(), "not-the-secret-9f3") {
			t.Errorf("the error %q shows the secret", err)
		}
	})
}

func TestCacheAvoidsASecondAuthorization(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	dir := filepath.Join(t.TempDir(), "tokens")
	// A folder someone made readable by others is made private again.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cache := oauth.NewCache(dir)
	cs, err := connect(t, newHandler(t, oauth.Config{}, res, cache, &fixturetest.Buffer{}), res.URL)
	if err != nil {
		t.Fatal(err)
	}
	lookup(t, cs, "k")

	file, data := cacheFile(t, dir)
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("cache folder mode %v, want 0700", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode %v, want 0600", fi.Mode().Perm())
	}
	if !bytes.Contains(data, []byte(`"refresh_token": "rt-`)) {
		t.Errorf("the cache file holds no refresh token:\n%s", data)
	}

	// Another run: the cached token is sent from the first request.
	before, _ := res.Refusals()
	cs2, err := connect(t, newHandler(t, oauth.Config{}, res, cache, &fixturetest.Buffer{}), res.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := lookup(t, cs2, "k2"); err != nil || got != "value of k2" {
		t.Fatalf("lookup = %q, %v", got, err)
	}
	if c := as.Counts(); c.Authorizations != 1 || c.Registrations != 1 {
		t.Errorf("authorizations %d, registrations %d; want 1, 1 (the cache answered)", c.Authorizations, c.Registrations)
	}
	if after, _ := res.Refusals(); after != before {
		t.Errorf("401 answers went from %d to %d; want none for a cached token", before, after)
	}

	// Another run after the token died: its cached refresh token (and the
	// registration's own client) renew it without asking.
	as.ExpireTokens()
	cs3, err := connect(t, newHandler(t, oauth.Config{}, res, cache, &fixturetest.Buffer{}), res.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := lookup(t, cs3, "k3"); err != nil || got != "value of k3" {
		t.Fatalf("lookup = %q, %v", got, err)
	}
	if c := as.Counts(); c.Authorizations != 1 || c.Refreshes != 1 {
		t.Errorf("authorizations %d, refreshes %d; want 1, 1", c.Authorizations, c.Refreshes)
	}

	// Other scopes are another key: no token of the first is sent.
	if _, err := connect(t, newHandler(t, oauth.Config{Scopes: []string{"other"}}, res, cache, &fixturetest.Buffer{}), res.URL); err != nil {
		t.Fatal(err)
	}
	if c := as.Counts(); c.Authorizations != 2 {
		t.Errorf("authorizations %d, want 2 (other scopes, other token)", c.Authorizations)
	}
}

// cacheFile returns the one file in a cache folder, and what it holds.
func cacheFile(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 1 {
		t.Fatalf("cache files = %v, want one", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return files[0], data
}

// A configured secret stays in the configuration: the cache holds the
// tokens only.
func TestCacheHoldsNoConfiguredSecret(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{Clients: map[string]oauthtest.Client{"pre": {Secret: "configured-secret-value"}}})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	dir := t.TempDir()
	cfg := oauth.Config{ClientID: "pre", ClientSecret: "configured-secret-value"}
	if _, err := connect(t, newHandler(t, cfg, res, oauth.NewCache(dir), &fixturetest.Buffer{}), res.URL); err != nil {
		t.Fatal(err)
	}
	if _, data := cacheFile(t, dir); bytes.Contains(data, []byte("configured-secret-value")) {
		t.Errorf("the cache file holds the configured secret:\n%s", data)
	}
	// And it still refreshes, with the secret from the configuration.
	as.ExpireTokens()
	cs, err := connect(t, newHandler(t, cfg, res, oauth.NewCache(dir), &fixturetest.Buffer{}), res.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lookup(t, cs, "k"); err != nil {
		t.Fatal(err)
	}
	if c := as.Counts(); c.Authorizations != 1 || c.Refreshes != 1 {
		t.Errorf("authorizations %d, refreshes %d; want 1, 1", c.Authorizations, c.Refreshes)
	}
}

func TestCorruptCacheFileAuthorisesAgain(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	dir := t.TempDir()
	if _, err := connect(t, newHandler(t, oauth.Config{}, res, oauth.NewCache(dir), &fixturetest.Buffer{}), res.URL); err != nil {
		t.Fatal(err)
	}
	file, _ := cacheFile(t, dir)
	if err := os.WriteFile(file, []byte(`{"token": {"access_tok`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := connect(t, newHandler(t, oauth.Config{}, res, oauth.NewCache(dir), &fixturetest.Buffer{}), res.URL); err != nil {
		t.Fatal(err)
	}
	if c := as.Counts(); c.Authorizations != 2 {
		t.Errorf("authorizations %d, want 2", c.Authorizations)
	}
}

func TestRefusalIsNotAskedAgain(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	as.Deny(true)
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	h := newHandler(t, oauth.Config{}, res, nil, &fixturetest.Buffer{})
	for i := range 2 {
		_, err := connect(t, h, res.URL)
		if err == nil || !strings.Contains(err.Error(), "authorise notes: the authorization server answered access_denied: the person said no (not asked again in this run)") {
			t.Errorf("connect %d: error = %v; want the refusal, not asked again", i+1, err)
		}
	}
	if n := len(as.ScopesAsked()); n != 1 {
		t.Errorf("the person was asked %d times, want once", n)
	}
}

func TestNoAnswerFromThePerson(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	var out fixturetest.Buffer
	// No browser and no one reading: the wait ends at PersonTimeout.
	h, err := oauth.New(oauth.Config{}, oauth.Options{Server: "notes", URL: res.URL, Out: &out, PersonTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = connect(t, h, res.URL)
	if err == nil || !strings.Contains(err.Error(), "no answer from the browser within 50ms") {
		t.Errorf("error = %v; want no answer within 50ms", err)
	}
	if !strings.HasPrefix(out.String(), "open this URL to authorise notes: ") {
		t.Errorf("the person saw %q, want the URL", out.String())
	}
}

// The redirect listener answers only the redirect of the authorization it
// waits for: a request with another state is refused, and the wait goes on.
func TestRedirectWithAnotherStateIsIgnored(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	follow := oauth.FollowRedirects(http.DefaultClient)
	var forged int
	h, err := oauth.New(oauth.Config{}, oauth.Options{Server: "notes", URL: res.URL, Open: func(ctx context.Context, authURL string) error {
		redirect := regexp.MustCompile(`redirect_uri=([^&]+)`).FindStringSubmatch(authURL)[1]
		redirect = strings.ReplaceAll(strings.ReplaceAll(redirect, "%3A", ":"), "%2F", "/")
		resp, err := http.Get(redirect + "?code=forged&state=not-yours")
		if err != nil {
			return err
		}
		resp.Body.Close()
		forged = resp.StatusCode
		return follow(ctx, authURL)
	}})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := connect(t, h, res.URL)
	if err != nil {
		t.Fatal(err)
	}
	if forged != http.StatusBadRequest {
		t.Errorf("the forged redirect got %d, want 400", forged)
	}
	if got, err := lookup(t, cs, "k"); err != nil || got != "value of k" {
		t.Errorf("lookup = %q, %v", got, err)
	}
}

func TestNoRegistrationSaysWhatToDo(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{NoRegistration: true})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	_, err := connect(t, newHandler(t, oauth.Config{}, res, nil, &fixturetest.Buffer{}), res.URL)
	if err == nil || !strings.Contains(err.Error(), "set client_id (and client_secret) in the oauth: block") {
		t.Errorf("error = %v; want advice to set client_id", err)
	}
}

func TestLogin(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	h := newHandler(t, oauth.Config{}, res, nil, &fixturetest.Buffer{})
	ctx := context.Background()
	for range 2 {
		if err := h.Login(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if c := as.Counts(); c.Authorizations != 1 {
		t.Errorf("authorizations %d, want 1", c.Authorizations)
	}
	before, _ := res.Refusals()
	cs, err := connect(t, h, res.URL)
	if err != nil {
		t.Fatal(err)
	}
	lookup(t, cs, "k")
	if after, _ := res.Refusals(); after != before {
		t.Errorf("401 answers went from %d to %d after Login; want none", before, after)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  oauth.Config
		want []string // the FieldErrors, as text
	}{
		{"zero value: authorization code with dynamic registration", oauth.Config{}, nil},
		{"pre-registered", oauth.Config{ClientID: "id", ClientSecret: "s", Registration: oauth.RegistrationPreregistered, RedirectPort: 8765}, nil},
		{"metadata document", oauth.Config{ClientMetadataURL: "https://example.com/hosteval.json", Registration: oauth.RegistrationMetadataDocument}, nil},
		{"client credentials", oauth.Config{Flow: oauth.FlowClientCredentials, ClientID: "id", ClientSecret: "s"}, nil},
		{"jwt bearer: a workload's token", oauth.Config{Flow: oauth.FlowJWTBearer, ClientID: "workload", Assertion: "eyJ.x.y"}, nil},
		{"enterprise", oauth.Config{Flow: oauth.FlowEnterprise, ClientID: "id", ClientSecret: "s", Assertion: "eyJ.x.y",
			IDPTokenEndpoint: "https://idp.example.com/token", IDPClientID: "idp-client"}, nil},
		{"jwt bearer without its token", oauth.Config{Flow: oauth.FlowJWTBearer, RedirectPort: 8765}, []string{
			"assertion: the jwt_bearer flow needs the token it presents (assertion: ${VAR})",
			"flow: the jwt_bearer flow has no registration and no redirect: remove client_metadata_url, redirect_port and token_endpoint_auth_method",
		}},
		{"enterprise without its identity provider", oauth.Config{Flow: oauth.FlowEnterprise, Assertion: "eyJ.x.y", IDPTokenEndpoint: "idp"}, []string{
			`idp_token_endpoint: must be the identity provider's token endpoint URL, not "idp"`,
			"idp_client_id: the enterprise flow needs the client registered with the identity provider",
			"client_id: the enterprise flow needs the client registered with the authorization server",
		}},
		{"an assertion or an identity provider elsewhere", oauth.Config{Assertion: "eyJ.x.y", IDPClientID: "idp-client"}, []string{
			"assertion: only the jwt_bearer and enterprise flows present an assertion",
			"idp_token_endpoint: only the enterprise flow asks an identity provider",
		}},
		{"unknown words", oauth.Config{Flow: "implicit", Registration: "magic", TokenEndpointAuthMethod: "private_key_jwt"}, []string{
			`flow: unknown flow "implicit" (want authorization_code, client_credentials, jwt_bearer or enterprise)`,
			`registration: unknown registration "magic" (want auto, preregistered, dynamic or metadata_document)`,
			`token_endpoint_auth_method: unknown method "private_key_jwt" (want none, client_secret_basic or client_secret_post)`,
		}},
		{"secret without id", oauth.Config{ClientSecret: "s"}, []string{"client_secret: a client secret needs its client_id"}},
		{"metadata URL not https", oauth.Config{ClientMetadataURL: "http://example.com/x.json"}, []string{
			`client_metadata_url: must be an https URL with a path (the client ID metadata document), not "http://example.com/x.json"`,
		}},
		{"bad scope and port", oauth.Config{Scopes: []string{"a b"}, RedirectPort: 70000}, []string{
			`scopes[0]: a scope is one word without spaces or quotes, not "a b"`,
			"redirect_port: 70000 is not a port (0 picks a free one)",
		}},
		{"client credentials without a client", oauth.Config{Flow: oauth.FlowClientCredentials, Scopes: []string{"x"}, RedirectPort: 1}, []string{
			"client_id: the client_credentials flow needs a pre-registered client: set client_id and client_secret",
			"client_secret: the client_credentials flow needs the client's secret (client_secret: ${VAR})",
			"redirect_port: the client_credentials flow has no redirect",
			"scopes: the client_credentials flow asks for the scopes the server advertises or demands; remove scopes",
		}},
		{"dynamic with a client id", oauth.Config{Registration: oauth.RegistrationDynamic, ClientID: "id"}, []string{
			"client_id: a dynamic registration gets its client id from the server; remove client_id or use registration: preregistered",
		}},
		{"metadata document without its URL", oauth.Config{Registration: oauth.RegistrationMetadataDocument}, []string{
			"client_metadata_url: registration metadata_document needs the document's URL",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			if err := tt.cfg.Validate(); err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var fe *oauth.FieldError
					if !errors.As(e, &fe) {
						t.Errorf("%v is no *FieldError", e)
					}
					got = append(got, e.Error())
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretIsNeverPrinted(t *testing.T) {
	cfg := oauth.Config{ClientID: "id", ClientSecret: "hunter2-secret"}
	var logged bytes.Buffer
	js, _ := json.Marshal(cfg)
	outputs := []string{
		fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%s %q", cfg.ClientSecret, cfg.ClientSecret),
		string(js),
	}
	slogText(&logged, cfg)
	outputs = append(outputs, logged.String())
	for _, o := range outputs {
		if strings.Contains(o, "hunter2") {
			t.Errorf("the secret is in %q", o)
		}
		if !strings.Contains(o, "[redacted]") {
			t.Errorf("%q does not say [redacted]", o)
		}
	}
	if string(cfg.ClientSecret) != "hunter2-secret" {
		t.Errorf("string(secret) = %q, want the value", string(cfg.ClientSecret))
	}
}

func slogText(w *bytes.Buffer, cfg oauth.Config) {
	l := slog.New(slog.NewJSONHandler(w, nil))
	l.Info("config", "secret", cfg.ClientSecret, "config", cfg)
}

// Connections that share a handler share its authorization: however many
// requests get a 401 at once, the person is asked once.
func TestConcurrentConnectionsAuthoriseOnce(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	h := newHandler(t, oauth.Config{}, res, nil, &fixturetest.Buffer{})
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			cs, err := connect(t, h, res.URL)
			if err == nil {
				_, err = lookup(t, cs, "k")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if c := as.Counts(); c.Authorizations != 1 || c.Registrations != 1 {
		t.Errorf("authorizations %d, registrations %d; want 1, 1", c.Authorizations, c.Registrations)
	}
	if n := res.Bearers(); n != 1 {
		t.Errorf("%d distinct tokens reached the server, want 1", n)
	}
}

// writerFunc is an Options.Out that acts on what the person is told.
type writerFunc func(p []byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

// A request that gives up while the person is still away is not followed by
// another question: the next connection fails at once, saying why.
func TestRequestEndsBeforeThePersonAnswers(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var prompts int
	h, err := oauth.New(oauth.Config{}, oauth.Options{Server: "notes", URL: res.URL, Out: writerFunc(func(p []byte) {
		if strings.HasPrefix(string(p), "open this URL") {
			prompts++
			cancel() // the request's deadline passes while the URL is open
		}
	})})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "1"}, nil)
	if _, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: res.URL, OAuthHandler: h}, nil); err == nil {
		t.Fatal("connected without a token")
	}
	_, err = connect(t, h, res.URL)
	want := "authorise notes: no answer from the browser within the request's time limit (context canceled): " +
		"a person needs longer; authorise the server before the run (not asked again in this run)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("second connection: error = %v; want the first failure, not asked again", err)
	}
	if prompts != 1 {
		t.Errorf("the URL was printed %d times, want once", prompts)
	}
}

// Where no person can authorise (CI), the authorization code flow fails at
// once, before registering or listening, says what works instead, and is
// not tried again; a cached token is used as in any other run.
func TestUnattended(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	cache := oauth.NewCache(t.TempDir())
	unattended := func() *oauth.Handler {
		var out fixturetest.Buffer
		h, err := oauth.New(oauth.Config{}, oauth.Options{Server: "notes", URL: res.URL, Cache: cache, Out: &out, Unattended: "CI is set",
			Open: func(context.Context, string) error { t.Error("a browser was opened"); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if out.String() != "" {
				t.Errorf("the person was told %q, want nothing", out.String())
			}
		})
		return h
	}

	h := unattended()
	start := time.Now()
	err := h.Login(context.Background())
	want := "authorise notes: no person can authorise it here (CI is set): the authorization_code flow needs a person at a browser; " +
		"use flow: client_credentials, or a cached token (authorise once where a person can: hosteval keeps the token in " + cache.Dir() + ") (not asked again in this run)"
	if err == nil || err.Error() != want {
		t.Fatalf("Login error = %v\nwant %s", err, want)
	}
	var ae *oauth.AuthorizeError
	if !errors.As(err, &ae) || !ae.Permanent() || !errors.Is(err, oauth.ErrNoPerson) {
		t.Errorf("Login error %#v is not a permanent *AuthorizeError of ErrNoPerson", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Login took %v: it waited for a person", d)
	}
	if _, err := connect(t, h, res.URL); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("connect after the refusal: %v, want the same error", err)
	}
	if c := as.Counts(); c != (oauthtest.Counts{}) {
		t.Errorf("the authorization server was asked %+v, want nothing", c)
	}

	// A person authorises once; then a run in CI uses the cached token.
	if err := newHandler(t, oauth.Config{}, res, cache, &fixturetest.Buffer{}).Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	cs, err := connect(t, unattended(), res.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := lookup(t, cs, "k"); err != nil || got != "value of k" {
		t.Errorf("lookup = %q, %v", got, err)
	}
}

// A token that dies again and again mid-run (no expires_in, a server that
// revokes early) is refreshed each time, never put to the person again.
func TestRepeatedExpiryRefreshes(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	h := newHandler(t, oauth.Config{}, res, nil, &fixturetest.Buffer{})
	cs, err := connect(t, h, res.URL)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		as.ExpireTokens()
		if got, err := lookup(t, cs, "k"); err != nil || got != "value of k" {
			t.Fatalf("lookup after expiry %d = %q, %v", i+1, got, err)
		}
	}
	if c := as.Counts(); c.Authorizations != 1 || c.Refreshes != 3 {
		t.Errorf("authorizations %d, refreshes %d; want 1, 3", c.Authorizations, c.Refreshes)
	}
}

// A refresh that gives a token the server refuses too is no renewal: a new
// authorization follows, within the same request.
func TestRefreshedTokenRefused(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	// The server stops honouring what a refresh gives: each refreshed
	// token dies the moment it is issued.
	client := &http.Client{Timeout: 10 * time.Second, Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		refresh := false
		if r.URL.Path == "/token" && r.Body != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			refresh = strings.Contains(string(body), "grant_type=refresh_token")
		}
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && refresh {
			body, _ := io.ReadAll(resp.Body)
			resp.Body = io.NopCloser(bytes.NewReader(body))
			as.ExpireTokens()
		}
		return resp, err
	})}
	h, err := oauth.New(oauth.Config{}, oauth.Options{Server: "notes", URL: res.URL, HTTPClient: client,
		Open: oauth.FollowRedirects(&http.Client{Timeout: 10 * time.Second})})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := connect(t, h, res.URL)
	if err != nil {
		t.Fatal(err)
	}
	as.ExpireTokens()
	if got, err := lookup(t, cs, "k"); err != nil || got != "value of k" {
		t.Fatalf("lookup = %q, %v", got, err)
	}
	if c := as.Counts(); c.Authorizations != 2 || c.Refreshes != 1 {
		t.Errorf("authorizations %d, refreshes %d; want 2, 1", c.Authorizations, c.Refreshes)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A token that lives a second is renewed shortly before it expires, once,
// with no 401: requests made meanwhile carry it as it is. (The oauth2
// package renews 10 s early, so every request refreshed it: 14 refreshes
// in 4 s for a 3 s token.) TestRenewMargin holds the figures on fake time.
func TestShortLivedTokenRenewedOnce(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{TokenLifetime: time.Second})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	h := newHandler(t, oauth.Config{}, res, nil, &fixturetest.Buffer{})
	begin := time.Now()
	cs, err := connect(t, h, res.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The token came between begin and connect's return: calls from then
	// on until one starts after it expired. A busy machine stretches the
	// window, and may make room for more renewals, one per 0.9 s.
	start := time.Now()
	var last time.Time
	calls := 0
	for last.Sub(start) < 1100*time.Millisecond {
		last = time.Now()
		if _, err := lookup(t, cs, "k"); err != nil {
			t.Fatal(err)
		}
		calls++
	}
	most := max(2, int(last.Sub(begin)/(900*time.Millisecond))+1)
	c := as.Counts()
	if c.Refreshes < 1 || c.Refreshes > most || c.Authorizations != 1 {
		t.Errorf("%d calls over %v of a 1 s token: %d refreshes, %d authorizations; want 1 to %d refreshes, 1 authorization",
			calls, last.Sub(begin), c.Refreshes, c.Authorizations, most)
	}
	if unauthorized, _ := res.Refusals(); unauthorized != 1 {
		t.Errorf("401 answers = %d, want 1 (the first request's)", unauthorized)
	}
}

// The MCP authorization specification requires the server's resource (RFC
// 8707) in every token request: the code exchange, each refresh (a 401's,
// and one from a cached token in a later run), each client credentials
// grant.
func TestResourceInEveryTokenRequest(t *testing.T) {
	t.Run("authorization code and refresh", func(t *testing.T) {
		as := oauthtest.NewServer(t, oauthtest.Options{})
		res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
		cache := oauth.NewCache(filepath.Join(t.TempDir(), "tokens"))
		cs, err := connect(t, newHandler(t, oauth.Config{}, res, cache, &fixturetest.Buffer{}), res.URL)
		if err != nil {
			t.Fatal(err)
		}
		as.ExpireTokens()
		if _, err := lookup(t, cs, "k"); err != nil {
			t.Fatal(err)
		}
		// A later run: the cached token, refreshed after the server's 401.
		as.ExpireTokens()
		cs, err = connect(t, newHandler(t, oauth.Config{}, res, cache, &fixturetest.Buffer{}), res.URL)
		if err != nil {
			t.Fatal(err)
		}
		want := []oauthtest.TokenRequest{
			{Grant: "authorization_code", Resource: res.URL},
			{Grant: "refresh_token", Resource: res.URL},
			{Grant: "refresh_token", Resource: res.URL},
		}
		if diff := cmp.Diff(want, as.TokenRequests()); diff != "" {
			t.Errorf("token requests (-want +got):\n%s", diff)
		}
	})
	t.Run("client credentials", func(t *testing.T) {
		as := oauthtest.NewServer(t, oauthtest.Options{Clients: map[string]oauthtest.Client{"ci-bot": {Secret: "s3cret-value"}}})
		res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
		cfg := oauth.Config{Flow: oauth.FlowClientCredentials, ClientID: "ci-bot", ClientSecret: "s3cret-value"}
		cs, err := connect(t, newHandler(t, cfg, res, nil, &fixturetest.Buffer{}), res.URL)
		if err != nil {
			t.Fatal(err)
		}
		as.ExpireTokens()
		if _, err := lookup(t, cs, "k"); err != nil {
			t.Fatal(err)
		}
		want := []oauthtest.TokenRequest{
			{Grant: "client_credentials", Resource: res.URL},
			{Grant: "client_credentials", Resource: res.URL},
		}
		if diff := cmp.Diff(want, as.TokenRequests()); diff != "" {
			t.Errorf("token requests (-want +got):\n%s", diff)
		}
	})
}

// Protected resource metadata that names another resource is refused (RFC
// 9728 section 3.3), and the error says so, in both flows, before anything
// is asked of the authorization server or the person.
func TestRefusedResourceMetadata(t *testing.T) {
	tests := []struct {
		name string
		cfg  oauth.Config
	}{
		{"authorization code", oauth.Config{}},
		{"client credentials", oauth.Config{Flow: oauth.FlowClientCredentials, ClientID: "ci-bot", ClientSecret: "s3cret-value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := oauthtest.NewServer(t, oauthtest.Options{Clients: map[string]oauthtest.Client{"ci-bot": {Secret: "s3cret-value"}}})
			res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{MetadataResource: "https://other.example/mcp"})
			var out fixturetest.Buffer
			_, err := connect(t, newHandler(t, tt.cfg, res, nil, &out), res.URL)
			want := fmt.Sprintf(`authorise notes: the protected resource metadata at %s names the resource "https://other.example/mcp", not this server's %q: refused (RFC 9728 section 3.3)`,
				res.MetadataURL, res.URL)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error = %v\nwant it to hold %s", err, want)
			}
			if c := as.Counts(); c != (oauthtest.Counts{}) {
				t.Errorf("the authorization server was asked %+v; want nothing", c)
			}
			if out.String() != "" {
				t.Errorf("the person was told %q; want nothing", out.String())
			}
		})
	}
}
