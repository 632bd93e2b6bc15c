package scenario

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/oauth"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// fakeHandler stands for a command's handler: it remembers what it was
// built from.
type fakeHandler struct{ server OAuthServer }

func (*fakeHandler) TokenSource(context.Context) (oauth2.TokenSource, error) { return nil, nil }
func (*fakeHandler) Authorize(context.Context, *http.Request, *http.Response) error {
	return nil
}

// recorder is a NewOAuth that records every handler it builds.
type recorder struct{ built []*fakeHandler }

func (r *recorder) build(s OAuthServer) (host.OAuthHandler, error) {
	h := &fakeHandler{server: s}
	r.built = append(r.built, h)
	return h, nil
}

// shown is how problems name a file the loader found: relative to the
// working directory.
func shown(t *testing.T, dir, name string) string {
	t.Helper()
	cwd, _ := os.Getwd()
	rel, err := filepath.Rel(cwd, filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

const oauthServers = `servers:
  notes:
    url: http://127.0.0.1:1/mcp
    shareable: true
    oauth:
      flow: client_credentials
      client_id: ci-bot
      client_secret: "${HOSTEVAL_TEST_TOKEN}"
  docs:
    url: http://127.0.0.1:2/mcp
    oauth: {scopes: [docs:read, offline_access], redirect_port: 8765}
  plain:
    url: http://127.0.0.1:3/mcp
`

// One handler per server for the whole run: every case and variant of
// every scenario that uses a server carries the same one, built once from
// the block as written (${VAR} expanded); a server without a block has none.
func TestOAuthHandlerPerServer(t *testing.T) {
	testEnv(t)
	dir := fixturetest.WriteTree(t, map[string]string{
		"servers.yaml": oauthServers,
		"a.yaml": `name: a
servers: [notes, docs, plain]
question: q
model: {scripted: []}
repeat: 2
variants: [{name: v1}, {name: v2}]
`,
		"b.yaml": `name: b
servers: [notes]
question: q
model: {scripted: []}
`,
	})
	suite, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var r recorder
	cases, err := suite.Cases(CaseOptions{OAuth: r.build})
	if err != nil {
		t.Fatal(err)
	}
	want := []OAuthServer{
		{Name: "notes", URL: "http://127.0.0.1:1/mcp", File: shown(t, dir, "servers.yaml"), Line: 2,
			Config: oauth.Config{Flow: oauth.FlowClientCredentials, ClientID: "ci-bot", ClientSecret: "tok"}},
		{Name: "docs", URL: "http://127.0.0.1:2/mcp", File: shown(t, dir, "servers.yaml"), Line: 9,
			Config: oauth.Config{Scopes: []string{"docs:read", "offline_access"}, RedirectPort: 8765}},
	}
	var got []OAuthServer
	for _, h := range r.built {
		got = append(got, h.server)
	}
	// The secret is compared as what it is, not as it prints.
	if diff := cmp.Diff(want, got, cmp.Transformer("secret", func(s oauth.Secret) string { return string(s) })); diff != "" {
		t.Errorf("handlers built (-want +got):\n%s", diff)
	}
	if len(cases) != 5 {
		t.Fatalf("%d cases, want 5", len(cases))
	}
	for _, c := range cases {
		for _, s := range c.HostOptionsIn(t.TempDir()).Servers {
			var wantHandler host.OAuthHandler
			switch s.Name {
			case "notes":
				wantHandler = r.built[0]
			case "docs":
				wantHandler = r.built[1]
			}
			if s.OAuth != wantHandler {
				t.Errorf("%s: server %s has handler %v, want %v", c.ID, s.Name, s.OAuth, wantHandler)
			}
		}
	}

	specs, err := LoadServersAuth(filepath.Join(dir, "servers.yaml"), []string{"plain", "notes"}, r.build)
	if err != nil {
		t.Fatal(err)
	}
	if specs[0].OAuth != nil || specs[1].OAuth == nil || len(r.built) != 3 {
		t.Errorf("LoadServersAuth: handlers %v, %v after %d built; want none for plain, a new one for notes", specs[0].OAuth, specs[1].OAuth, len(r.built))
	}
}

// A command that does not authorise servers says so, naming the server and
// where it is defined, instead of starting it without its tokens.
func TestOAuthWithoutHandlers(t *testing.T) {
	testEnv(t)
	dir := fixturetest.WriteTree(t, map[string]string{"servers.yaml": oauthServers, "a.yaml": "name: a\nservers: [plain, docs]\nquestion: q\nmodel: {scripted: []}\n"})
	suite, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s:9: server docs has an oauth: block, and this command does not authorise servers", shown(t, dir, "servers.yaml"))
	if _, err := suite.Cases(CaseOptions{}); err == nil || err.Error() != want {
		t.Errorf("Cases error = %v, want %s", err, want)
	}
	if _, err := LoadServers(filepath.Join(dir, "servers.yaml"), "docs"); err == nil || !strings.HasSuffix(err.Error(), "server docs has an oauth: block, and this command does not authorise servers") {
		t.Errorf("LoadServers error = %v", err)
	}
	if _, err := LoadServers(filepath.Join(dir, "servers.yaml"), "plain"); err != nil {
		t.Errorf("LoadServers of a server without oauth: %v", err)
	}
	failing := func(OAuthServer) (host.OAuthHandler, error) { return nil, fmt.Errorf("no cache folder") }
	want = fmt.Sprintf("%s:9: server docs: no cache folder", shown(t, dir, "servers.yaml"))
	if _, err := suite.Cases(CaseOptions{OAuth: failing}); err == nil || err.Error() != want {
		t.Errorf("Cases error = %v, want %s", err, want)
	}
}
