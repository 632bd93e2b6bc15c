package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/record"
)

// routeSuite is a dataset over the fixtures' cmdb and tickets, answered
// by a rules model; mode is the scenario's mode.
func routeSuite(mode string) string {
	return `name: route
servers: [cmdb, tickets]
mode: ` + mode + `
approvals: [tickets__open_ticket]
elicitation: [{server: tickets, action: accept, content: {priority: P1}}]
model:
  rules:
    rules:
      - {match: 'who owns (\S+?)\?', call: cmdb__get_asset, args: {hostname: '{{index .Groups 1}}'}}
      - {match: 'ticket for (\S+)', call: tickets__open_ticket, args: {host: '{{index .Groups 1}}', summary: x}}
      - {match: 'invent', call: cmdb__delete_all}
dataset:
  - {id: own, question: "who owns jump-prod-02?", tools: [cmdb__get_asset], args: {hostname: jump-prod-02}}
  - {id: own2, question: "who owns db-7?", tools: [cmdb__get_asset], args: {hostname: {re: "^jump"}}}
  - {id: open, question: "open a ticket for jump-prod-02", tools: [tickets__open_ticket]}
  - {id: none, question: "what is the weather?", tools: []}
  - {id: unknown, question: "invent a tool", tools: [cmdb__find_assets]}
`
}

// requestLog reads the servers' request logs (one JSON line a request)
// and counts their methods.
func requestLog(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	methods := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			Operation, Method string
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Operation == "mcp.request" {
			methods[line.Method]++
		}
	}
	return methods
}

// TestRouteModeSendsNothing: route-only cases score the model's first
// answer and send nothing: each server is listed once for the whole run
// (its request log holds one handshake and one tools/list, and no call),
// and the cases that full mode runs make their calls.
func TestRouteModeSendsNothing(t *testing.T) {
	testEnv(t)
	cases := suite(t, routeSuite("route"))
	dir := t.TempDir()
	res, err := Run(context.Background(), cases, Options{Dir: dir, Share: true, Concurrency: 3, Preflight: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed != 5 {
		t.Fatalf("%d of 5 passed", res.Passed)
	}
	methods := requestLog(t, filepath.Join(dir, "shared-servers.jsonl"))
	if methods["tools/call"] != 0 || methods["tools/list"] != 2 {
		t.Errorf("the servers' requests: %v; want one tools/list each and no tools/call", methods)
	}
	recs := readRecords(t, dir)
	type verdict struct {
		Chosen   string
		Proposed []string
		Correct  bool
		ArgsOK   string
		Mode     string
	}
	got := map[string]verdict{}
	for _, rec := range recs {
		rt := rec.Route
		if len(rec.Calls) != 0 || len(rec.ModelRequests) != 1 || rt == nil {
			t.Fatalf("case %s: %d calls, %d model requests, route %v; want no call, one request, a route", rec.CaseID, len(rec.Calls), len(rec.ModelRequests), rt)
		}
		args := "-"
		if rt.ArgsOK != nil {
			args = map[bool]string{true: "ok", false: rt.ArgsDetail}[*rt.ArgsOK]
		}
		got[rt.Row] = verdict{rt.Chosen, rt.Proposed, rt.Correct, args, rt.Mode}
		if rt.Tools != 4 || rt.DefTokens == 0 || rec.ToolDefs.Tools != 4 {
			t.Errorf("case %s: route tools %d, tokens %d; want the 4 tools and their tokens", rec.CaseID, rt.Tools, rt.DefTokens)
		}
		for _, s := range rec.Servers {
			if s.EraReason != "catalog: a listing of server "+s.Name || s.Tools != 2 {
				t.Errorf("case %s: server %+v, want its tools from the run's listing", rec.CaseID, s)
			}
		}
	}
	want := map[string]verdict{
		"own":     {"cmdb__get_asset", []string{"cmdb__get_asset"}, true, "ok", "route"},
		"own2":    {"cmdb__get_asset", []string{"cmdb__get_asset"}, true, `hostname: got "db-7", want {re: "^jump"}`, "route"},
		"open":    {"tickets__open_ticket", []string{"tickets__open_ticket"}, true, "-", "route"},
		"none":    {record.NoTool, []string{}, true, "-", "route"},
		"unknown": {record.UnknownTool, []string{"cmdb__delete_all"}, false, "-", "route"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}

	// The same rows in full mode run the calls, and score them the same.
	cases = suite(t, routeSuite("full"))
	dir = t.TempDir()
	if _, err := Run(context.Background(), cases, Options{Dir: dir, Share: true, Concurrency: 3}); err != nil {
		t.Fatal(err)
	}
	got = map[string]verdict{}
	calls := 0
	for _, rec := range readRecords(t, dir) {
		rt := rec.Route
		args := "-"
		if rt.ArgsOK != nil {
			args = map[bool]string{true: "ok", false: rt.ArgsDetail}[*rt.ArgsOK]
		}
		got[rt.Row] = verdict{rt.Chosen, rt.Proposed, rt.Correct, args, rt.Mode}
		calls += len(rec.Calls)
	}
	for row, v := range want {
		v.Mode = "full"
		want[row] = v
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("full mode's routes (-want +got):\n%s", diff)
	}
	if calls != 4 {
		t.Errorf("full mode made %d calls, want 4", calls)
	}
}
