package main

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/oauth"
	"github.com/hosteval/hosteval/internal/oauth/oauthtest"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/servers/fixturetest"
)

// protectedNotes is the notes server behind a local authorization server,
// with one more tool: rotate, which makes the authorization server refuse
// every token it issued so far, as if each had expired. A case that calls
// it sees its token expire in the middle of its run.
func protectedNotes(t *testing.T, as *oauthtest.Server, scopes []string) *oauthtest.Resource {
	t.Helper()
	s := oauthtest.NotesServer()
	mcp.AddTool(s, &mcp.Tool{Name: "rotate", Description: "Expire every token.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
			as.ExpireTokens()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "rotated"}}}, struct{}{}, nil
		})
	return oauthtest.NewResource(t, as, s, oauthtest.ResourceOptions{Scopes: scopes})
}

// runInProcess runs hosteval in-process with the given environment (no
// signals), a person who approves at once, and a token cache of its own.
func runInProcess(t *testing.T, dir string, vars map[string]string, seams oauthSeams, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr fixturetest.Buffer
	getenv := func(k string) string { return vars[k] }
	// A guard against a hang, not a budget.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t.Chdir(dir)
	code := runEnv(ctx, &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: getenv, oauth: seams}, args)
	return code, stdout.String(), stderr.String()
}

// oauthScenario calls SERVER's lookup, expires its token, and calls
// lookup again.
const oauthScenario = `name: notes-SERVER
servers: [SERVER]
repeat: 3
model:
  scripted:
    - call: "SERVER__lookup {key: k1}"
    - call: "SERVER__rotate {}"
    - call: "SERVER__lookup {key: k2}"
    - answer: "k2 is value of k2"
question: "what is k2, after a rotation?"
expect:
  - {tool: SERVER__lookup, outcome: ok, count: 2}
  - {tool: SERVER__rotate, outcome: ok}
  - answer_matches: value of k2
`

// TestRunWithOAuth runs scenarios end to end through hosteval run against
// servers behind a local authorization server: one with the client
// credentials flow (the secret from ${VAR}), one with the authorization
// code flow (dynamic registration, a person who approves at once). Every
// case's token expires in the middle of its run. The run passes, each
// server is authorised once for all its cases (logged in before the
// first), and no secret the authorization server issued or knows (client
// secrets, codes, access and refresh tokens) is in anything the run wrote.
func TestRunWithOAuth(t *testing.T) {
	const clientSecret = "ci-secret-3f9a1c"
	as := oauthtest.NewServer(t, oauthtest.Options{Clients: map[string]oauthtest.Client{"ci-bot": {Secret: clientSecret}}})
	cc := protectedNotes(t, as, nil)
	code := protectedNotes(t, as, []string{"notes:read"})
	t.Setenv("HOSTEVAL_TEST_NOTES_SECRET", clientSecret)

	dir := t.TempDir()
	files := map[string]string{
		"suite/servers.yaml": `servers:
  cc:
    url: ` + cc.URL + `
    oauth:
      flow: client_credentials
      client_id: ci-bot
      client_secret: ${HOSTEVAL_TEST_NOTES_SECRET}
  code:
    url: ` + code.URL + `
    shareable: true
    oauth: {registration: dynamic}
`,
		"suite/cc.yaml":   strings.ReplaceAll(oauthScenario, "SERVER", "cc"),
		"suite/code.yaml": strings.ReplaceAll(oauthScenario, "SERVER", "code"),
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cacheDir := filepath.Join(dir, "tokens")
	seams := oauthSeams{open: oauth.FollowRedirects(&http.Client{Timeout: 10 * time.Second}), cache: oauth.NewCache(cacheDir)}
	exit, stdout, stderr := runInProcess(t, dir, map[string]string{}, seams,
		// One case at a time: a case's rotate expires every token, also one
		// another case has just been given and is about to send.
		"run", "-out", "results", "-run-id", "r1", "-wire", "-concurrency", "1", "suite/")
	if exit != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", exit, stdout, stderr)
	}

	f, err := os.Open(filepath.Join(dir, "results/r1", record.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := record.NewReader(f, record.RecordsFile)
	cases := 0
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		cases++
		if rec.Status != record.StatusPass {
			t.Errorf("%s: %s %s", rec.CaseID, rec.Status, rec.Error)
		}
	}
	if cases != 6 {
		t.Errorf("%d records, want 6", cases)
	}

	// One login per server before the run; then every expiry is renewed
	// without a person: the code flow's refresh token, the client's grant.
	c := as.Counts()
	if c.Registrations != 1 || c.Authorizations != 1 || c.CodeExchanges != 1 {
		t.Errorf("registrations %d, authorizations %d, code exchanges %d; want 1 each (one login for all the cases)",
			c.Registrations, c.Authorizations, c.CodeExchanges)
	}
	if c.Refreshes < 1 || c.ClientGrants < 2 || c.Rejected < 2 {
		t.Errorf("refreshes %d, client grants %d, rejected tokens %d; want tokens refused mid-run and renewed", c.Refreshes, c.ClientGrants, c.Rejected)
	}
	if n := strings.Count(stderr, "open this URL to authorise code: "); n != 1 {
		t.Errorf("the person was shown the URL %d times, want once:\n%s", n, stderr)
	}

	// Nothing the run wrote holds a secret; the cache (outside results)
	// holds the current tokens, and only it.
	secrets := as.Secrets()
	if len(secrets) < 6 {
		t.Fatalf("the authorization server knows %d secrets, want at least 6", len(secrets))
	}
	written := map[string][]byte{"stdout": []byte(stdout), "stderr": []byte(stderr)}
	err = filepath.WalkDir(filepath.Join(dir, "results"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		written[path] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for path, data := range written {
		kinds = append(kinds, filepath.Base(path))
		for _, secret := range secrets {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds the secret %q", path, secret)
			}
		}
		if bytes.Contains(data, []byte("Bearer ")) {
			t.Errorf("%s holds an Authorization header", path)
		}
	}
	for _, want := range []string{"records.jsonl", "run.json", "summary.json", "report.md", "report.html", "junit.xml"} {
		if _, ok := written[filepath.Join(dir, "results/r1", want)]; !ok {
			t.Errorf("the run wrote no %s (it wrote %v)", want, kinds)
		}
	}
	wires, _ := filepath.Glob(filepath.Join(dir, "results/r1/cases/*wire*"))
	if len(wires) != 6 {
		t.Errorf("wire traces %v, want one per case", wires)
	}
	cached, _ := filepath.Glob(filepath.Join(cacheDir, "*.json"))
	found := 0
	for _, path := range cached {
		data, _ := os.ReadFile(path)
		for _, secret := range secrets {
			if bytes.Contains(data, []byte(secret)) {
				found++
			}
		}
	}
	if len(cached) != 2 || found == 0 {
		t.Errorf("cache files %v hold %d secrets; want one per server, holding the tokens", cached, found)
	}
}

// In CI no one can open a browser: a server whose flow needs a person
// fails the run at once, before any case, saying what to use instead. Once
// a person has authorised it (here through hosteval tools), the cached
// token serves CI runs.
func TestOAuthInCI(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := protectedNotes(t, as, nil)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"servers.yaml": "servers:\n  notes:\n    url: " + res.URL + "\n    oauth: {}\n",
		"notes.yaml": `name: notes
servers: [notes]
model:
  scripted:
    - call: "notes__lookup {key: k}"
    - answer: "value of k"
question: what is k?
expect:
  - {tool: notes__lookup, outcome: ok}
`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cache := oauth.NewCache(filepath.Join(dir, "tokens"))
	ci := map[string]string{"CI": "true"}

	start := time.Now()
	exit, _, stderr := runInProcess(t, dir, ci, oauthSeams{cache: cache}, "run", "-out", "results", "notes.yaml")
	want := "hosteval: run: authorise notes: no person can authorise it here (CI is set): the authorization_code flow needs a person at a browser; " +
		"use flow: client_credentials, or a cached token (authorise once where a person can: hosteval keeps the token in " + cache.Dir() + ") (not asked again in this run)\n"
	if exit != exitUsage || stderr != want {
		t.Errorf("run in CI: exit %d, stderr:\n%s\nwant exit 2 and\n%s", exit, stderr, want)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the run took %v to fail: it waited for a person", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "results")); err == nil {
		t.Error("the run wrote results: no case should have started")
	}
	if c := as.Counts(); c != (oauthtest.Counts{}) {
		t.Errorf("the authorization server was asked %+v, want nothing", c)
	}

	person := oauthSeams{cache: cache, open: oauth.FollowRedirects(&http.Client{Timeout: 10 * time.Second})}
	exit, stdout, stderr := runInProcess(t, dir, nil, person, "tools", "-servers-file", "servers.yaml")
	if exit != exitOK || !strings.Contains(stdout, "notes__lookup") || !strings.Contains(stderr, "open this URL to authorise notes: ") {
		t.Fatalf("tools: exit %d\nstdout:\n%s\nstderr:\n%s", exit, stdout, stderr)
	}

	exit, stdout, stderr = runInProcess(t, dir, ci, oauthSeams{cache: cache}, "run", "-out", "results", "notes.yaml")
	if exit != exitOK {
		t.Errorf("run in CI with a cached token: exit %d\nstdout:\n%s\nstderr:\n%s", exit, stdout, stderr)
	}
	if c := as.Counts(); c.Authorizations != 1 {
		t.Errorf("authorizations %d, want 1 (the person's)", c.Authorizations)
	}
}

// The first Ctrl-C ends the wait for a person's login, and the run exits
// as interrupted before any case.
func TestOAuthLoginInterrupted(t *testing.T) {
	as := oauthtest.NewServer(t, oauthtest.Options{})
	res := protectedNotes(t, as, nil)
	dir := t.TempDir()
	files := map[string]string{
		"servers.yaml": "servers:\n  notes:\n    url: " + res.URL + "\n    oauth: {}\n",
		"notes.yaml":   "name: notes\nservers: [notes]\nmodel: {scripted: [{answer: a}]}\nquestion: q\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := make(chan struct{})
	// The person reads the URL, and presses Ctrl-C instead.
	seams := oauthSeams{cache: oauth.NewCache(filepath.Join(dir, "tokens")), open: func(context.Context, string) error {
		close(first)
		return nil
	}}
	var stdout, stderr fixturetest.Buffer
	t.Chdir(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" },
		oauth: seams, interrupt: interrupts{first: first}}
	exit := runEnv(ctx, e, []string{"run", "-out", "results", "notes.yaml"})
	if exit != exitSignaled || !strings.Contains(stderr.String(), "hosteval: run: interrupted while authorising notes") {
		t.Errorf("exit %d, stderr:\n%s\nwant 130, interrupted while authorising notes", exit, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "results")); err == nil {
		t.Error("the run wrote results: no case should have started")
	}
}
