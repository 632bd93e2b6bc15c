package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/oauth"
	"github.com/hosteval/hosteval/internal/oauth/oauthtest"
	"github.com/hosteval/hosteval/internal/record"
)

// oauthHandler returns a handler for res whose person approves at once.
func oauthHandler(t *testing.T, cfg oauth.Config, res *oauthtest.Resource, cacheDir string, out *logLines) *oauth.Handler {
	t.Helper()
	h, err := oauth.New(cfg, oauth.Options{
		Server: "notes", URL: res.URL, Cache: oauth.NewCache(cacheDir), Out: out,
		Open: oauth.FollowRedirects(&http.Client{Timeout: 10 * time.Second}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A protected server, through the host: the flow runs on the first 401, the
// tools are listed and called; a token that dies mid-run is refreshed and
// the call succeeds; a tool that needs more scope steps up; and no token or
// secret reaches anything the host writes.
func TestOAuthThroughTheHost(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{
		Scopes: []string{"notes:read"}, ToolScopes: map[string][]string{"write_note": {"notes:write"}},
	})
	cacheDir := t.TempDir()
	var out, hostLog, serverLog, wire logLines
	spec := ServerSpec{Name: "notes", URL: res.URL, AutoRun: []string{"*"},
		OAuth: oauthHandler(t, oauth.Config{}, res, cacheDir, &out)}
	h := startHost(t, Options{Servers: []ServerSpec{spec}, Log: &hostLog, ServerLog: &serverLog, Wire: &wire})

	s := h.Servers()[0]
	if s.Tools != 2 || s.Protocol != Revision20260728 || s.VersionFailure {
		t.Errorf("server = %+v, want 2 tools over 2026-07-28", s)
	}
	var texts []string
	var events []record.Call
	step := func(name, args, want string) {
		t.Helper()
		text, ev := call(t, h, name, args)
		texts, events = append(texts, text), append(events, ev)
		if ev.Outcome != record.OutcomeOK || text != want {
			t.Errorf("%s: outcome %s, text %q; want ok, %q", name, ev.Outcome, text, want)
		}
	}
	step("notes__lookup", `{"key": "k1"}`, `{"key":"k1","value":"value of k1"}`)
	if diff := cmp.Diff(oauthtest.Counts{Registrations: 1, Authorizations: 1, CodeExchanges: 1}, as.Counts()); diff != "" {
		t.Errorf("after connecting (-want +got):\n%s", diff)
	}

	as.ExpireTokens() // mid-run: the server refuses the token the host holds
	step("notes__lookup", `{"key": "k2"}`, `{"key":"k2","value":"value of k2"}`)
	if c := as.Counts(); c.Authorizations != 1 || c.Refreshes != 1 || c.Rejected != 1 {
		t.Errorf("after expiry: %+v; want 1 authorization, 1 refresh, 1 rejected token", c)
	}

	step("notes__write_note", `{"key": "k3"}`, `{"key":"k3","value":"wrote k3"}`)
	if diff := cmp.Diff([]string{"notes:read", "notes:read notes:write"}, as.ScopesAsked()); diff != "" {
		t.Errorf("scopes asked (-want +got):\n%s", diff)
	}
	step("notes__lookup", `{"key": "k4"}`, `{"key":"k4","value":"value of k4"}`)
	if unauthorized, forbidden := res.Refusals(); unauthorized != 2 || forbidden != 1 {
		t.Errorf("the server answered 401 %d and 403 %d times, want 2 and 1", unauthorized, forbidden)
	}

	// Every byte the host and the handler wrote, but the cache.
	h.Close()
	written := map[string][]byte{
		"host log": hostLog.buf.Bytes(), "server log": serverLog.buf.Bytes(), "wire trace": wire.buf.Bytes(),
		"person": out.buf.Bytes(), "texts": []byte(strings.Join(texts, "\n")),
	}
	written["events"], _ = json.Marshal(events)
	written["servers"], _ = json.Marshal(h.Servers())
	// 4 calls, 2 of them sent twice: refused (401, 403), then authorised.
	if n := len(wire.entries(map[string]any{"method": "tools/call", "dir": "->"})); n != 6 {
		t.Errorf("the wire trace holds %d tools/call requests, want 6", n)
	}
	secrets := as.Secrets()
	if len(secrets) < 8 { // 2 client secrets, 2 codes, 3 access tokens (one refreshed), 3 refresh tokens
		t.Fatalf("the authorization server issued %d secrets, want at least 8", len(secrets))
	}
	for what, data := range written {
		for _, secret := range secrets {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("the %s holds the secret %q", what, secret)
			}
		}
		if bytes.Contains(data, []byte("Bearer ")) {
			t.Errorf("the %s holds an Authorization header", what)
		}
	}
	// The grep can fail: the cache holds the current tokens, and only it.
	files, _ := filepath.Glob(filepath.Join(cacheDir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v, want one", files)
	}
	data, _ := os.ReadFile(files[0])
	found := 0
	for _, secret := range secrets {
		if bytes.Contains(data, []byte(secret)) {
			found++
		}
	}
	if found == 0 {
		t.Errorf("the cache file holds none of the issued secrets:\n%s", data)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode: %v, %v; want 0600", fi.Mode().Perm(), err)
	}
}

func TestOAuthClientCredentialsThroughTheHost(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{Clients: map[string]oauthtest.Client{"ci-bot": {Secret: "ci-secret-value"}}})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	var out logLines
	cfg := oauth.Config{Flow: oauth.FlowClientCredentials, ClientID: "ci-bot", ClientSecret: "ci-secret-value"}
	h := startHost(t, Options{Servers: []ServerSpec{{Name: "notes", URL: res.URL, OAuth: oauthHandler(t, cfg, res, t.TempDir(), &out)}}})
	for i, key := range []string{"k1", "k2"} {
		if i == 1 {
			as.ExpireTokens()
		}
		if text, ev := call(t, h, "notes__lookup", `{"key": "`+key+`"}`); ev.Outcome != record.OutcomeOK {
			t.Errorf("call %d: outcome %s, text %q; want ok", i+1, ev.Outcome, text)
		}
	}
	if c := as.Counts(); c.ClientGrants != 2 || c.Authorizations != 0 {
		t.Errorf("counts %+v; want 2 client credentials grants, no authorization", c)
	}
	if out.buf.Len() != 0 {
		t.Errorf("the person was told %q; want nothing", out.buf.String())
	}
}

// Without an oauth: block, a server that asks for a bearer token is told
// as what it is, with what to configure; it is no version failure. A token
// pasted into the headers that dies mid-run ends the server's use.
func TestHTTPServerNeedsOAuth(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})

	for _, mode := range []Mode{ModeAuto, ModePinned, ModeLegacy} {
		t.Run("no config/"+string(mode), func(t *testing.T) {
			h, err := Start(context.Background(), Options{Servers: []ServerSpec{{Name: "notes", URL: res.URL}}, Protocol: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			s := h.Servers()[0]
			want := "server notes needs OAuth (HTTP 401 with a Bearer challenge): add an oauth: block to its entry in the servers file"
			if !strings.HasPrefix(s.Error, "connect notes: ") || !strings.HasSuffix(s.Error, want) || s.VersionFailure || s.Restarted {
				t.Errorf("server = %+v; want a connect error ending %q, no version failure, no restart", s, want)
			}
		})
	}

	t.Run("pasted token expires", func(t *testing.T) {
		login := oauthHandler(t, oauth.Config{}, res, t.TempDir(), &logLines{})
		if err := login.Login(context.Background()); err != nil {
			t.Fatal(err)
		}
		src, _ := login.TokenSource(context.Background())
		tok, err := src.Token()
		if err != nil || tok == nil {
			t.Fatalf("token: %v, %v", tok, err)
		}
		spec := ServerSpec{Name: "notes", URL: res.URL, Headers: map[string]string{"authorization": "Bearer " + tok.AccessToken}}
		h := startHost(t, Options{Servers: []ServerSpec{spec}})
		if _, ev := call(t, h, "notes__lookup", `{"key": "k"}`); ev.Outcome != record.OutcomeOK {
			t.Fatalf("outcome %s with a fresh token, want ok", ev.Outcome)
		}
		as.ExpireTokens()
		wantTexts := []string{
			"error: the server notes refused the host's credentials (HTTP 401), so its tools can't be used now.",
			"error: the server notes has stopped working (it refused the host's credentials), so its tools can't be used now.",
		}
		for i, want := range wantTexts {
			if text, ev := call(t, h, "notes__lookup", `{"key": "k"}`); ev.Outcome != record.OutcomeError || text != want {
				t.Errorf("call %d: outcome %s, text %q; want error, %q", i+1, ev.Outcome, text, want)
			}
		}
	})

	t.Run("header and oauth", func(t *testing.T) {
		spec := ServerSpec{Name: "notes", URL: res.URL, Headers: map[string]string{"Authorization": "Bearer x"},
			OAuth: oauthHandler(t, oauth.Config{}, res, t.TempDir(), &logLines{})}
		h, err := Start(context.Background(), Options{Servers: []ServerSpec{spec}})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		want := "connect notes: header Authorization: the server's oauth: block supplies it; remove one of the two"
		if s := h.Servers()[0]; s.Error != want {
			t.Errorf("error = %q, want %q", s.Error, want)
		}
	})
}

// An authorisation that fails mid-run reaches the model as what it is: a
// refusal that will not be asked again ends the server's use, and the model
// is not told to try later; a failure that can pass (the authorization
// server is down) may work later.
func TestOAuthFailsMidRun(t *testing.T) {
	t.Run("the person says no", func(t *testing.T) {
		as := oauthtest.NewServer(t, oauthtest.Options{})
		res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
		spec := ServerSpec{Name: "notes", URL: res.URL, OAuth: oauthHandler(t, oauth.Config{}, res, t.TempDir(), &logLines{})}
		var mu sync.Mutex
		var steps []string
		h := startHost(t, Options{Servers: []ServerSpec{spec}, Steps: func(s Step) {
			mu.Lock()
			defer mu.Unlock()
			steps = append(steps, s.Text)
		}})
		if _, ev := call(t, h, "notes__lookup", `{"key": "k"}`); ev.Outcome != record.OutcomeOK {
			t.Fatalf("outcome %s, want ok", ev.Outcome)
		}
		// The token dies, it cannot be refreshed, and the person refuses.
		as.ExpireTokens()
		as.RevokeRefreshTokens()
		as.Deny(true)
		wantTexts := []string{
			"error: the host could not be authorised with the server notes (authorise notes: the authorization server answered access_denied: " +
				"the person said no (not asked again in this run)), so its tools can't be used in this run.",
			"error: the server notes has stopped working (the host could not be authorised), so its tools can't be used now.",
		}
		for i, want := range wantTexts {
			if text, ev := call(t, h, "notes__lookup", `{"key": "k"}`); ev.Outcome != record.OutcomeError || text != want {
				t.Errorf("call %d: outcome %s, text %q\nwant error, %q", i+1, ev.Outcome, text, want)
			}
		}
		if n := len(as.ScopesAsked()); n != 2 {
			t.Errorf("the person was asked %d times, want twice (the first authorisation, the refusal)", n)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Contains(steps, "authorisation failed: authorise notes: the authorization server answered access_denied: the person said no (not asked again in this run)") {
			t.Errorf("no step says why: %q", steps)
		}
	})

	t.Run("the authorization server is down", func(t *testing.T) {
		as := oauthtest.NewServer(t, oauthtest.Options{Clients: map[string]oauthtest.Client{"ci-bot": {Secret: "s3cret"}}})
		res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
		// The token endpoint is reached through this client, which fails
		// once the test says so.
		var down atomic.Bool
		client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if down.Load() {
				return nil, errors.New("connection refused")
			}
			return http.DefaultTransport.RoundTrip(r)
		})}
		cfg := oauth.Config{Flow: oauth.FlowClientCredentials, ClientID: "ci-bot", ClientSecret: "s3cret"}
		handler, err := oauth.New(cfg, oauth.Options{Server: "notes", URL: res.URL, HTTPClient: client})
		if err != nil {
			t.Fatal(err)
		}
		h := startHost(t, Options{Servers: []ServerSpec{{Name: "notes", URL: res.URL, OAuth: handler}}})
		as.ExpireTokens()
		down.Store(true)
		text, ev := call(t, h, "notes__lookup", `{"key": "k"}`)
		if ev.Outcome != record.OutcomeError || !strings.HasPrefix(text, "error: the host could not be authorised with the server notes (") ||
			!strings.HasSuffix(text, "). It may work later.") || strings.Contains(text, "s3cret") {
			t.Errorf("outcome %s, text %q; want an error that may pass, without the secret", ev.Outcome, text)
		}
		down.Store(false)
		if text, ev := call(t, h, "notes__lookup", `{"key": "k"}`); ev.Outcome != record.OutcomeOK {
			t.Errorf("once the server is back: outcome %s, text %q; want ok", ev.Outcome, text)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Shared servers with other OAuth handlers hold other tokens: the pool does
// not hand one's connection to the other.
func TestPoolKeepsOAuthHandlersApart(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := oauthtest.NewResource(t, as, oauthtest.NotesServer(), oauthtest.ResourceOptions{})
	pool := NewPool(Options{})
	defer pool.Close()
	first := ServerSpec{Name: "notes", URL: res.URL, Shareable: true, OAuth: oauthHandler(t, oauth.Config{}, res, t.TempDir(), &logLines{})}
	second := first
	second.OAuth = oauthHandler(t, oauth.Config{Scopes: []string{"other"}}, res, t.TempDir(), &logLines{})
	a := startHost(t, Options{Servers: []ServerSpec{first}, Pool: pool})
	b := startHost(t, Options{Servers: []ServerSpec{first}, Pool: pool})
	c := startHost(t, Options{Servers: []ServerSpec{second}, Pool: pool})
	if a.servers["notes"] != b.servers["notes"] {
		t.Error("two hosts with one handler do not share the server")
	}
	if a.servers["notes"] == c.servers["notes"] {
		t.Error("hosts with two handlers share one connection")
	}
	if n := res.Bearers(); n != 2 {
		t.Errorf("%d distinct tokens reached the server, want 2", n)
	}
}
