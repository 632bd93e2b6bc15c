package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hosteval/hosteval/internal/host"
)

type noteIn struct {
	Text string `json:"text" jsonschema:"What to note."`
}

type noteOut struct {
	Noted string `json:"noted"`
}

// init reaches a Streamable HTTP server with a header whose secret stays in
// the environment: the files name the variable, and the suite they make
// runs against the server.
func TestInitURL(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "Web Notes!", Version: "2.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "note", Description: "Note a text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in noteIn) (*mcp.CallToolResult, noteOut, error) {
			return nil, noteOut{Noted: in.Text}, nil
		})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	var refused atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			refused.Add(1)
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	t.Setenv("NOTES_TOKEN", "s3cret")

	dir := filepath.Join(t.TempDir(), "evals")
	hosteval := func(args ...string) (int, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: os.Getenv}
		return runEnv(context.Background(), e, args), errOut.String()
	}
	code, stderr := hosteval("init", "-dir", dir, "-url", srv.URL, "-header", "Authorization: Bearer ${NOTES_TOKEN}")
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, stderr)
	}
	servers, err := os.ReadFile(filepath.Join(dir, "servers.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := "servers:\n  Web-Notes:\n    url: " + srv.URL + "\n    headers:\n      Authorization: Bearer ${NOTES_TOKEN}\n"
	if !strings.HasSuffix(string(servers), want) {
		t.Errorf("servers.yaml:\n%s\nwant it to end with\n%s", servers, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if strings.Contains(string(data), "s3cret") {
			t.Errorf("%s holds the secret:\n%s", e.Name(), data)
		}
	}
	if want := []string{"Web-Notes.yaml", "gates.yaml", "servers.yaml"}; !slices.Equal(names, want) {
		t.Errorf("files %q, want %q", names, want)
	}
	scenarioText, _ := os.ReadFile(filepath.Join(dir, "Web-Notes.yaml"))
	for _, w := range []string{"\napprovals: [Web-Notes__note]\n", "        text: TODO # TODO: string, required: What to note.\n"} {
		if !strings.Contains(string(scenarioText), w) {
			t.Errorf("Web-Notes.yaml has no %q:\n%s", w, scenarioText)
		}
	}

	if code, stderr := hosteval("run", "-out", filepath.Join(t.TempDir(), "results"), dir); code != exitOK {
		t.Errorf("run of the files init wrote: exit %d\n%s", code, stderr)
	}
	if n := refused.Load(); n != 0 {
		t.Errorf("the server refused %d requests without the token", n)
	}
}

func TestInitSpec(t *testing.T) {
	tests := []struct {
		name          string
		command, args string
		rest          []string
		url           string
		headers       headerFlag
		envs          envFlag
		want          host.ServerSpec
		wantErr       string
	}{
		{name: "after --", rest: []string{"npx", "-y", "@modelcontextprotocol/server-memory"}, envs: envFlag{"A=b"},
			want: host.ServerSpec{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}, Env: []string{"A=b"}}},
		{name: "-command and -args", command: "./bin/cmdb", args: `-data "my file.json"`,
			want: host.ServerSpec{Command: "./bin/cmdb", Args: []string{"-data", "my file.json"}}},
		{name: "-url", url: "https://x/mcp", headers: headerFlag{"X-Key": "${K}"},
			want: host.ServerSpec{URL: "https://x/mcp", Headers: map[string]string{"X-Key": "${K}"}}},
		{name: "nothing", wantErr: "give the server: a command after --, -command, or -url"},
		{name: "two", command: "a", url: "https://x", wantErr: "give the server once"},
		{name: "-args without -command", rest: []string{"a"}, args: "b", wantErr: "-args is for -command"},
		{name: "-env for a url", url: "https://x", envs: envFlag{"A=b"}, wantErr: "-args and -env are for a command"},
		{name: "a bad -args", command: "a", args: `"open`, wantErr: "-args:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := initSpec(tt.command, tt.args, tt.rest, tt.url, tt.headers, tt.envs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || exitCode(err) != exitUsage {
					t.Errorf("initSpec: %v (exit %d), want a usage error with %q", err, exitCode(err), tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Command != tt.want.Command || !slices.Equal(got.Args, tt.want.Args) || !slices.Equal(got.Env, tt.want.Env) || got.URL != tt.want.URL || len(got.Headers) != len(tt.want.Headers) {
				t.Errorf("initSpec = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCommandFrom(t *testing.T) {
	tests := []struct{ command, dir, want string }{
		{"npx", "hosteval", "npx"},
		{"/usr/bin/node", "hosteval", "/usr/bin/node"},
		{"./bin/cmdb", "hosteval", "../bin/cmdb"},
		{"bin/cmdb", "evals/suite", "../../bin/cmdb"},
		{"./cmdb", ".", "./cmdb"},
		{"hosteval/cmdb", "hosteval", "./cmdb"},
	}
	for _, tt := range tests {
		if got := commandFrom(tt.command, tt.dir); got != tt.want {
			t.Errorf("commandFrom(%q, %q) = %q, want %q", tt.command, tt.dir, got, tt.want)
		}
	}
}
