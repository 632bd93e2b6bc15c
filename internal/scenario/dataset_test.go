package scenario

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/goldenfile"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/record"
)

// rowView is what a row says, for comparing rows read from different
// forms.
type rowView struct {
	ID, Match, Mode     string
	Turns, Tools, Tags  []string
	Forbid, Args, Tests []string
}

func viewOf(r *row) rowView {
	v := rowView{ID: r.id, Match: r.match, Mode: r.mode, Turns: r.turns, Tools: r.tools, Tags: r.tags, Forbid: r.forbid}
	for _, a := range r.args {
		v.Args = append(v.Args, a.name+"="+a.check.String())
	}
	for _, e := range r.expects {
		v.Tests = append(v.Tests, e.check.name())
	}
	return v
}

// TestDatasetFormsEqual: the same rows written inline, in a YAML file, a
// JSONL file and a CSV file load into the same rows.
func TestDatasetFormsEqual(t *testing.T) {
	testEnv(t)
	suite, err := Load("testdata/dataset/forms.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(suite.Scenarios) != 4 {
		t.Fatalf("%d scenarios, want 4", len(suite.Scenarios))
	}
	want := []rowView{
		{ID: "owner-1", Match: "first", Turns: []string{"who owns jump-prod-02?"}, Tools: []string{"cmdb__get_asset"}, Tags: []string{"owner"}, Args: []string{`hostname="jump-prod-02"`}},
		{ID: "find-1", Match: "any", Turns: []string{"list prod hosts"}, Tools: []string{"cmdb__find_assets"}, Args: []string{"limit={near: 10, tol: 5}"}},
		{ID: "open-1", Match: "all", Turns: []string{"open a ticket for db-7"}, Tools: []string{"cmdb__get_asset", "tickets__open_ticket"},
			Forbid: []string{"tickets__list_tickets"}, Args: []string{`host={re: "^db-"}`}},
		{ID: "none-1", Match: "first", Turns: []string{"what's the weather?"}, Tools: []string{}, Tags: []string{"no-tool"}},
		{ID: "prio", Match: "first", Mode: "route", Turns: []string{"P1 incident"}, Tools: []string{"tickets__open_ticket"},
			Args: []string{`priority={one_of: ["P1","P2"]}`, `summary={ci: "Disk Full"}`}, Tests: []string{"steps<=1"}},
	}
	for _, sc := range suite.Scenarios {
		var got []rowView
		for _, r := range sc.rows {
			got = append(got, viewOf(r))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("scenario %s: rows (-want +got):\n%s", sc.Name, diff)
		}
	}
	// Where each row was read, for the record.
	for i, want := range []string{"testdata/dataset/forms.yaml:6", "testdata/dataset/rows.yaml:1", "testdata/dataset/rows.jsonl:1", "testdata/dataset/rows.csv:2"} {
		if got := suite.Scenarios[i].rows[0].source; got != want {
			t.Errorf("scenario %s: first row's source = %q, want %q", suite.Scenarios[i].Name, got, want)
		}
	}
	// The dataset files are part of what identifies the suite.
	var files []string
	for _, s := range suite.Sources {
		files = append(files, filepath.Base(s.File))
	}
	if diff := cmp.Diff([]string{"forms.yaml", "servers.yaml", "beta.json", "rows.yaml", "rows.jsonl", "rows.csv"}, files); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
}

// TestDatasetBroken: every bad input of a dataset is reported at once,
// with file:line (and the column of a CSV).
func TestDatasetBroken(t *testing.T) {
	testEnv(t)
	_, err := Load("testdata/dataset/broken/broken.yaml", "testdata/dataset/broken/catalogs.yaml", "testdata/dataset/broken/distractors.yaml")
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Load error = %v, want *LoadError", err)
	}
	goldenfile.Check(t, "testdata/dataset/broken.golden", []byte(err.Error()+"\n"))
}

// TestDatasetFolderSkipsRows: a folder's YAML list is a dataset, not a
// scenario file, and is read only by the scenario that names it.
func TestDatasetFolderSkipsRows(t *testing.T) {
	testEnv(t)
	dir := t.TempDir()
	writeFile(t, dir, "servers.yaml", "servers:\n  cmdb: {command: cmdb}\n")
	writeFile(t, dir, "rows.yaml", "- {id: a, question: q, tools: []}\n")
	writeFile(t, dir, "s.yaml", "name: s\nservers: [cmdb]\nmodel: {scripted: []}\ndataset: rows.yaml\n")
	suite, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(suite.Scenarios) != 1 || len(suite.Scenarios[0].rows) != 1 {
		t.Fatalf("got %d scenarios, want 1 with 1 row", len(suite.Scenarios))
	}
	// Named on the command line, the list is a scenario file, and wrong.
	if _, err := Load(filepath.Join(dir, "rows.yaml")); err == nil || !strings.Contains(err.Error(), "want a mapping") {
		t.Errorf("Load(rows.yaml) error = %v, want it read as a scenario", err)
	}
}

// TestDatasetCases: rows x variants x models x repeat, the row's id in
// the case ID, and -run selecting rows.
func TestDatasetCases(t *testing.T) {
	testEnv(t)
	dir := t.TempDir()
	writeFile(t, dir, "servers.yaml", "servers:\n  cmdb: {command: cmdb}\n")
	writeFile(t, dir, "s.yaml", `name: route
servers: [cmdb]
models: [{name: a, scripted: []}, {name: b, scripted: []}]
variants: [{name: long}, {name: short}]
repeat: 2
dataset:
  - {id: r1, question: q1, tools: [cmdb__get_asset]}
  - {id: r2, question: q2, tools: [], mode: route}
`)
	suite, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(run string) []string {
		t.Helper()
		opts := CaseOptions{}
		if run != "" {
			opts.Run = regexp.MustCompile(run)
		}
		cases, err := suite.Cases(opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cases {
			out = append(out, c.ID+" "+c.Row+" "+c.Mode()+" "+strings.Join(c.Turns(), ","))
		}
		return out
	}
	want := []string{}
	for _, v := range []string{"long", "short"} {
		for _, r := range []string{"r1 full q1", "r2 route q2"} {
			id := strings.Fields(r)[0]
			for _, m := range []string{"a", "b"} {
				for rep := range 2 {
					want = append(want, "route/"+v+"/"+m+"/"+id+"#"+string(rune('0'+rep))+" "+r)
				}
			}
		}
	}
	if diff := cmp.Diff(want, ids("")); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"route/short/a/r2#0 r2 route q2", "route/short/a/r2#1 r2 route q2", "route/short/b/r2#0 r2 route q2", "route/short/b/r2#1 r2 route q2"},
		ids("^route/short/r2$")); diff != "" {
		t.Errorf("-run route/short/r2 (-want +got):\n%s", diff)
	}
	if got := len(ids("route/r1")); got != 8 {
		t.Errorf("-run route/r1: %d cases, want 8", got)
	}
	if got := len(ids("^route$")); got != 16 {
		t.Errorf("-run route: %d cases, want 16", got)
	}
	if _, err := suite.Cases(CaseOptions{Run: regexp.MustCompile("r3")}); err == nil || !strings.Contains(err.Error(), "scenario/row") {
		t.Errorf("-run r3 error = %v, want no match", err)
	}
}

// TestDatasetUnknownTool: a row's tool that no server offers is found
// once the servers are listed, with the row's line and column.
func TestDatasetUnknownTool(t *testing.T) {
	testEnv(t)
	suite, err := Load("testdata/dataset/forms.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := suite.Cases(CaseOptions{Run: regexp.MustCompile("^csv-file$")})
	if err != nil {
		t.Fatal(err)
	}
	tools := []string{"cmdb__get_asset", "cmdb__find_assets", "tickets__open_ticket", "tickets__list_tickets"}
	if ps := CheckTools(cases[0], tools); len(ps) != 0 {
		t.Errorf("CheckTools with every tool: %v, want none", ps)
	}
	var got []string
	for _, p := range CheckTools(cases[0], tools[:3]) {
		got = append(got, p.String())
	}
	want := []string{`testdata/dataset/rows.csv:4: forbid (column 5): server tickets offers no tool "tickets__list_tickets" (did you mean "tickets__open_ticket"?)`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckTools (-want +got):\n%s", diff)
	}
}

// TestRouteVerdict: a row's verdict by its match rule, forbid and args,
// by hand.
func TestRouteVerdict(t *testing.T) {
	testEnv(t)
	suite, err := Load("testdata/dataset/forms.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := suite.Cases(CaseOptions{Run: regexp.MustCompile("^inline$")})
	if err != nil {
		t.Fatal(err)
	}
	byRow := map[string]*Case{}
	for _, c := range cases {
		byRow[c.Row] = c
	}
	call := func(name, args string) Proposal { return ProposalOf(name, args, name != "nope__x") }
	yes, no := true, false
	tests := []struct {
		row      string
		proposed []Proposal
		chosen   string
		correct  bool
		argsOK   *bool
		detail   string
	}{
		{"owner-1", []Proposal{call("cmdb__get_asset", `{"hostname":"jump-prod-02"}`)}, "cmdb__get_asset", true, &yes, ""},
		{"owner-1", []Proposal{call("cmdb__get_asset", `{"hostname":"jump-prod-2"}`)}, "cmdb__get_asset", true, &no, `hostname: got "jump-prod-2", want "jump-prod-02"`},
		{"owner-1", []Proposal{call("cmdb__get_asset", `{}`)}, "cmdb__get_asset", true, &no, "hostname: missing"},
		{"owner-1", []Proposal{call("cmdb__get_asset", `hostname=a`)}, "cmdb__get_asset", true, &no, `the arguments are not a JSON object: "hostname=a"`},
		// first: the first call decides; the args of the right call are
		// still checked.
		{"owner-1", []Proposal{call("cmdb__find_assets", `{}`), call("cmdb__get_asset", `{"hostname":"jump-prod-02"}`)}, "cmdb__find_assets", false, &yes, ""},
		{"owner-1", nil, record.NoTool, false, nil, ""},
		{"owner-1", []Proposal{call("nope__x", `{}`)}, record.UnknownTool, false, nil, ""},
		// any, with a tolerance.
		{"find-1", []Proposal{call("cmdb__get_asset", `{}`), call("cmdb__find_assets", `{"limit": 14}`)}, "cmdb__get_asset", true, &yes, ""},
		{"find-1", []Proposal{call("cmdb__find_assets", `{"limit": 16}`)}, "cmdb__find_assets", true, &no, "limit: got 16, want {near: 10, tol: 5}"},
		{"find-1", []Proposal{call("cmdb__find_assets", `{"limit": "ten"}`)}, "cmdb__find_assets", true, &no, `limit: got "ten", want {near: 10, tol: 5}`},
		// all, with forbid and a regular expression.
		{"open-1", []Proposal{call("tickets__open_ticket", `{"host":"db-7"}`), call("cmdb__get_asset", `{}`)}, "tickets__open_ticket", true, &yes, ""},
		{"open-1", []Proposal{call("tickets__open_ticket", `{}`), call("cmdb__get_asset", `{"host":"db-7"}`)}, "tickets__open_ticket", true, &no, "host: missing"},
		{"open-1", []Proposal{call("cmdb__get_asset", `{"host":"db-7"}`), call("tickets__open_ticket", `{}`)}, "cmdb__get_asset", true, &yes, ""},
		{"open-1", []Proposal{call("cmdb__get_asset", `{"host":"x-db-7"}`)}, "cmdb__get_asset", false, &no, `host: got "x-db-7", want {re: "^db-"}`},
		{"open-1", []Proposal{call("cmdb__get_asset", `{"host":"db-7"}`), call("tickets__open_ticket", `{}`), call("tickets__list_tickets", `{}`)}, "cmdb__get_asset", false, &yes, ""},
		// no tool: only proposing nothing is right.
		{"none-1", nil, record.NoTool, true, nil, ""},
		{"none-1", []Proposal{call("cmdb__get_asset", `{}`)}, "cmdb__get_asset", false, nil, ""},
		// one_of and ci.
		{"prio", []Proposal{call("tickets__open_ticket", `{"priority":"P2","summary":"disk FULL"}`)}, "tickets__open_ticket", true, &yes, ""},
		{"prio", []Proposal{call("tickets__open_ticket", `{"priority":"P3","summary":"disk"}`)}, "tickets__open_ticket", true, &no,
			`priority: got "P3", want {one_of: ["P1","P2"]}; summary: got "disk", want {ci: "Disk Full"}`},
	}
	for i, tt := range tests {
		c := byRow[tt.row]
		rec := &record.Record{ToolDefs: record.ToolDefs{Tools: 4, Tokens: 321}}
		rt := c.Route(rec, tt.proposed)
		if rt.Chosen != tt.chosen || rt.Correct != tt.correct || rt.ArgsDetail != tt.detail || !cmp.Equal(rt.ArgsOK, tt.argsOK) {
			okText := func(b *bool) string {
				if b == nil {
					return "nil"
				}
				return map[bool]string{true: "true", false: "false"}[*b]
			}
			t.Errorf("#%d %s: chosen %q correct %t args %s %q; want %q %t %s %q", i, tt.row, rt.Chosen, rt.Correct, okText(rt.ArgsOK), rt.ArgsDetail,
				tt.chosen, tt.correct, okText(tt.argsOK), tt.detail)
		}
		if rt.Row != tt.row || rt.Tools != 4 || rt.DefTokens != 321 || len(rt.Proposed) != len(tt.proposed) {
			t.Errorf("#%d: route %+v: want row %s, 4 tools, 321 tokens, %d proposed", i, rt, tt.row, len(tt.proposed))
		}
	}
	if got := byRow["prio"].Route(nil, nil).Mode; got != record.RouteOnly {
		t.Errorf("prio's mode = %q, want route", got)
	}
	if got := byRow["none-1"].Route(nil, nil).Mode; got != record.RouteFull {
		t.Errorf("none-1's mode = %q, want full", got)
	}
}

// TestDistractorsDeterministic: the tools of each size are the same on
// every load with one seed (pinned here: the permutation is the
// package's own, not the Go release's), nested, never a row's expected
// tool, and never a task-only tool; another seed draws others.
func TestDistractorsDeterministic(t *testing.T) {
	testEnv(t)
	sets := func(seed string) map[string][]string {
		t.Helper()
		path := "testdata/dataset/distractors.yaml"
		if seed != "" {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			path = writeFile(t, t.TempDir(), "d.yaml", strings.Replace(string(data), "seed: 7", "seed: "+seed, 1))
			for _, f := range []string{"catalogs/alpha.json", "catalogs/beta.json", "servers.yaml"} {
				data, _ := os.ReadFile(filepath.Join("testdata/dataset", f))
				writeFile(t, filepath.Dir(path), f, string(data))
			}
		}
		suite, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		cases, err := suite.Cases(CaseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]string{}
		for _, c := range cases {
			out[strings.TrimSuffix(c.ID, "#0")] = c.DistractorTools()
			if rt := c.Route(nil, nil); rt.Distractors != c.Distractors || rt.Target != 0.9 {
				t.Errorf("%s: route distractors %d, target %g", c.ID, rt.Distractors, rt.Target)
			}
		}
		return out
	}
	first := sets("")
	want := map[string][]string{
		"distracted/d0/r1": nil,
		"distracted/d0/r2": nil,
		"distracted/d3/r1": {"alpha__a4", "gamma__b2", "gamma__b3"},
		"distracted/d3/r2": {"alpha__a4", "gamma__b2", "gamma__b3"},
		"distracted/d9/r1": {"alpha__a1", "alpha__a2", "alpha__a3", "alpha__a4", "alpha__a5", "gamma__b1", "gamma__b2", "gamma__b3", "gamma__b4"},
		"distracted/d9/r2": {"alpha__a1", "alpha__a2", "alpha__a3", "alpha__a4", "alpha__a5", "gamma__b1", "gamma__b2", "gamma__b3", "gamma__b4"},
	}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("distractors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(first, sets("")); diff != "" {
		t.Errorf("a second load drew other tools (-first +second):\n%s", diff)
	}
	if other := sets("8"); cmp.Equal(other["distracted/d3/r1"], first["distracted/d3/r1"]) {
		t.Errorf("seeds 7 and 8 drew the same 3 tools: %v", other["distracted/d3/r1"])
	}
	// The permutation itself: every index once, pinned for one seed (an
	// independent PCG32 gives the same).
	p := permutation(10, 7)
	if diff := cmp.Diff([]int{1, 8, 4, 7, 5, 0, 6, 9, 3, 2}, p); diff != "" {
		t.Errorf("permutation(10, 7) (-want +got):\n%s", diff)
	}
}

// TestDistractorsExcludeExpected: a row never gets its own expected tool
// as a distractor, and rows that expect the same get the same catalogs.
func TestDistractorsExcludeExpected(t *testing.T) {
	ds := &distractors{sets: map[string][]host.ServerSpec{}}
	cat, err := host.NewCatalog("x.json", []json.RawMessage{json.RawMessage(`{"name":"a"}`), json.RawMessage(`{"name":"b"}`), json.RawMessage(`{"name":"c"}`)})
	if err != nil {
		t.Fatal(err)
	}
	ds.sources = []distractorSource{{server: "x", catalog: cat}}
	for i, name := range cat.Names() {
		ds.pool = append(ds.pool, distractorTool{source: 0, index: i, name: "x__" + name})
	}
	ds.order = []int{1, 0, 2}
	names := func(specs []host.ServerSpec) []string {
		var out []string
		for _, s := range specs {
			out = append(out, s.Catalog.Names()...)
		}
		return out
	}
	if got := names(ds.servers(2, []string{"cmdb__get_asset"})); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("2 for another tool's row: %v, want [a b]", got)
	}
	if got := names(ds.servers(2, []string{"x__b"})); !cmp.Equal(got, []string{"a", "c"}) {
		t.Errorf("2 for x__b's row: %v, want [a c]", got)
	}
	one, two := ds.servers(2, []string{"y"}), ds.servers(2, nil)
	if &one[0] != &two[0] {
		t.Error("two rows with the same distractors got two catalogs, want one")
	}
}
