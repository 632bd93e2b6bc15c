package scenario

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
)

func hostElicitRequest() host.ElicitRequest {
	return host.ElicitRequest{Server: "a", Message: "Open it?"}
}

func mustRE(t *testing.T, s string) *regexp.Regexp {
	t.Helper()
	re, err := regexp.Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	return re
}

// loadText loads scenario documents written to a temporary file.
func loadText(t *testing.T, text string) *Suite {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	suite, err := Load(p)
	if err != nil {
		t.Fatalf("Load:\n%v", err)
	}
	return suite
}

const expandSuite = `name: ab
servers: [{name: cmdb, command: cmdb}]
question: q
models:
  - {scripted: [{answer: one}]}
  - {name: other, scripted: [{answer: two}]}
variants: [{name: short}, {name: long}]
repeat: 2
---
name: plain
servers: [{name: cmdb, command: cmdb}]
question: q
model: {scripted: [{answer: three}]}
---
name: ab-more
servers: [{name: cmdb, command: cmdb}]
question: q
model: {scripted: []}
variants: [{name: short}]
`

func caseIDs(cases []*Case) []string {
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = c.ID
	}
	return ids
}

func TestCases(t *testing.T) {
	testEnv(t)
	suite := loadText(t, expandSuite)
	cfg := model.OpenAIConfig{Model: "gpt-oss-120b"}.WithEnv(os.Getenv)
	flagModel := ModelSpec{Name: "openai:gpt-oss-120b", Config: model.Config{OpenAI: &cfg}}
	tests := []struct {
		name string
		opts CaseOptions
		want []string
	}{
		{"all", CaseOptions{}, []string{
			"ab/short/scripted#0", "ab/short/scripted#1", "ab/short/other#0", "ab/short/other#1",
			"ab/long/scripted#0", "ab/long/scripted#1", "ab/long/other#0", "ab/long/other#1",
			"plain#0", "ab-more/short#0",
		}},
		{"run scenario prefix", CaseOptions{Run: mustRE(t, "^ab")}, []string{
			"ab/short/scripted#0", "ab/short/scripted#1", "ab/short/other#0", "ab/short/other#1",
			"ab/long/scripted#0", "ab/long/scripted#1", "ab/long/other#0", "ab/long/other#1",
			"ab-more/short#0",
		}},
		{"run one variant", CaseOptions{Run: mustRE(t, "^ab/long$")}, []string{
			"ab/long/scripted#0", "ab/long/scripted#1", "ab/long/other#0", "ab/long/other#1",
		}},
		{"run variant of any scenario", CaseOptions{Run: mustRE(t, "/short$")}, []string{
			"ab/short/scripted#0", "ab/short/scripted#1", "ab/short/other#0", "ab/short/other#1", "ab-more/short#0",
		}},
		{"repeat override", CaseOptions{Run: mustRE(t, "^plain$"), Repeat: 3}, []string{"plain#0", "plain#1", "plain#2"}},
		{"one model override drops the model from IDs", CaseOptions{Run: mustRE(t, "^ab/short$"), Models: []ModelSpec{flagModel}}, []string{
			"ab/short#0", "ab/short#1",
		}},
		{"two model overrides", CaseOptions{Run: mustRE(t, "^plain$"), Models: []ModelSpec{flagModel, {Config: model.Config{Scripted: []model.ScriptStep{}}}}}, []string{
			"plain/openai:gpt-oss-120b#0", "plain/scripted#0",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cases, err := suite.Cases(tt.opts)
			if err != nil {
				t.Fatalf("Cases: %v", err)
			}
			if diff := cmp.Diff(tt.want, caseIDs(cases)); diff != "" {
				t.Errorf("case IDs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCasesFields(t *testing.T) {
	testEnv(t)
	suite := loadText(t, expandSuite)
	cases, err := suite.Cases(CaseOptions{Run: mustRE(t, "^ab/long$")})
	if err != nil {
		t.Fatal(err)
	}
	c := cases[3] // ab/long/other#1
	got := []any{c.ID, c.Scenario.Name, c.Variant, c.ModelName, c.Repeat, filepath.Base(c.Scenario.File), c.Scenario.Line}
	want := []any{"ab/long/other#1", "ab", "long", "other", 1, "s.yaml", 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("case fields (-want +got):\n%s", diff)
	}
	if c.Timeout() != DefaultTimeout {
		t.Errorf("Timeout() = %v, want %v", c.Timeout(), DefaultTimeout)
	}
	cases, _ = suite.Cases(CaseOptions{Run: mustRE(t, "^plain$")})
	if got := cases[0].Scenario.Line; got != 10 {
		t.Errorf("line of the second document = %d, want 10", got)
	}
}

func TestCasesErrors(t *testing.T) {
	testEnv(t)
	suite := loadText(t, expandSuite)
	tests := []struct {
		name string
		opts CaseOptions
		want string
	}{
		{"nothing matches", CaseOptions{Run: mustRE(t, "^nope$")}, `no scenario, scenario/variant or scenario/row matches "^nope$"`},
		{"empty models", CaseOptions{Models: []ModelSpec{}}, "no models given"},
		{"bad model", CaseOptions{Models: []ModelSpec{{Name: "x", Config: model.Config{OpenAI: &model.OpenAIConfig{}}}}}, "model x: openai.model: required (or set HOSTEVAL_MODEL)"},
		{"same model twice", CaseOptions{Models: []ModelSpec{{Config: model.Config{Scripted: []model.ScriptStep{}}}, {Config: model.Config{Scripted: []model.ScriptStep{}}}}}, "model scripted is given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := suite.Cases(tt.opts)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Cases error = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestVariantOverrides checks how a variant's settings merge over its
// scenario's: scalars and lists replace, descriptions and auto_run merge
// key by key, system replaces.
func TestVariantOverrides(t *testing.T) {
	testEnv(t)
	suite := loadText(t, `name: v
servers: [{name: a, command: a, auto_run: [x]}, {name: b, command: b}]
question: q
model: {scripted: []}
system: base prompt
host:
  tool_timeout: 2s
  max_steps: 4
  allow: [a__x, b__y]
  descriptions: {a__x: "A.", b__y: "B."}
  auto_run: {b: [y]}
variants:
  - name: same
  - name: changed
    system: other prompt
    host:
      max_steps: 9
      max_result_bytes: -1
      allow: []
      deny: [b__y]
      descriptions: {a__x: "A, shorter."}
      auto_run: {a: []}
      elicitation: false
      protocol: legacy
`)
	cases, err := suite.Cases(CaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		System         string
		ToolTimeout    time.Duration
		MaxSteps       int
		MaxResultBytes int
		Allow, Deny    []string
		Descriptions   map[string]string
		AutoRunA       []string
		AutoRunB       []string
		NoElicitation  bool
		Protocol       string
	}
	got := map[string]view{}
	for _, c := range cases {
		o := c.HostOptions()
		got[c.Variant] = view{c.System(), o.ToolTimeout, o.MaxSteps, o.MaxResultBytes, o.Allow, o.Deny, o.Descriptions,
			o.Servers[0].AutoRun, o.Servers[1].AutoRun, o.NoElicitation, string(o.Protocol)}
	}
	want := map[string]view{
		"same": {System: "base prompt", ToolTimeout: 2 * time.Second, MaxSteps: 4, Allow: []string{"a__x", "b__y"},
			Descriptions: map[string]string{"a__x": "A.", "b__y": "B."}, AutoRunA: []string{"x"}, AutoRunB: []string{"y"}},
		"changed": {System: "other prompt", ToolTimeout: 2 * time.Second, MaxSteps: 9, MaxResultBytes: -1, Allow: []string{}, Deny: []string{"b__y"},
			Descriptions: map[string]string{"a__x": "A, shorter.", "b__y": "B."}, AutoRunA: []string{}, AutoRunB: []string{"y"},
			NoElicitation: true, Protocol: "legacy"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("options by variant (-want +got):\n%s", diff)
	}
}

// TestHostOptionsIsolated checks that a case's options are a copy: a
// runner changing them does not change the next case's.
func TestHostOptionsIsolated(t *testing.T) {
	testEnv(t)
	suite := loadText(t, `name: iso
servers: [{name: a, command: a, args: [x], env: {K: v}}]
question: q
model: {scripted: []}
host: {allow: [a__x], descriptions: {a__x: d}}
elicitation: [{content: {k: v}}]
`)
	cases, _ := suite.Cases(CaseOptions{Repeat: 2})
	o := cases[0].HostOptions()
	o.Servers[0].Args[0], o.Servers[0].Env[0], o.Allow[0], o.Descriptions["a__x"] = "changed", "changed", "changed", "changed"
	ctx := context.Background()
	o2 := cases[1].HostOptions()
	if o2.Servers[0].Args[0] != "x" || o2.Servers[0].Env[0] != "K=v" || o2.Allow[0] != "a__x" || o2.Descriptions["a__x"] != "d" {
		t.Errorf("second case's options changed with the first's: %+v", o2)
	}
	ans, err := o2.Elicitor.Elicit(ctx, hostElicitRequest())
	if err != nil || ans.Content["k"] != "v" {
		t.Errorf("canned answer = %+v, %v; want content k=v", ans, err)
	}
}

// TestNewModelFresh checks that every case gets its own model: two
// scripted models built from one scenario keep separate places in the
// script, also when built and run concurrently.
func TestNewModelFresh(t *testing.T) {
	testEnv(t)
	suite := loadText(t, `name: fresh
servers: [{name: cmdb, command: cmdb}]
question: q
model:
  scripted:
    - call: 'cmdb__get_asset {hostname: a}'
    - answer: done here
repeat: 8
`)
	cases, _ := suite.Cases(CaseOptions{})
	var wg sync.WaitGroup
	got := make([]string, len(cases))
	for i, c := range cases {
		wg.Go(func() {
			m, err := c.NewModel()
			if err != nil {
				got[i] = err.Error()
				return
			}
			first, _ := m.Next(context.Background(), model.Request{})
			second, _ := m.Next(context.Background(), model.Request{})
			if len(first.ToolCalls) == 1 {
				got[i] = first.ToolCalls[0].Name + " " + first.ToolCalls[0].Arguments + " then " + second.Text
			}
		})
	}
	wg.Wait()
	for i, g := range got {
		if want := `cmdb__get_asset {"hostname":"a"} then done here`; g != want {
			t.Errorf("case %d: %q, want %q", i, g, want)
		}
	}
}

func TestCheckTools(t *testing.T) {
	testEnv(t)
	suite := loadText(t, `name: names
servers:
  - {name: cmdb, command: cmdb, auto_run: [get_asset, get_aset]}
  - {name: tickets, command: tickets}
  - {name: down, command: down}
question: q
model: {scripted: [{call: delete_everything}]}
host:
  allow: [cmdb__get_asset, cmdb__get_aset, tickets__open_ticket, down__x]
  descriptions: {tickets__list_ticket: x}
  auto_run: {tickets: [list_tickets, open_tiket]}
approvals: [tickets__*, cmdb__find*, "*"]
variants:
  - name: v
    host: {deny: [cmdb__find_assets, cmdb__nope]}
expect:
  - {tool: delete_everything, outcome: unknown_tool}
  - {tool: cmdb__delete_everything, outcome: unknown_tool}
  - {tool: tickets__open_ticket, outcome: ok}
  - {order: [cmdb__get_asset, tickets__open_tickets]}
  - {state: "tickets__list_tickets {}", matches: {total: 1}}
  - {state: "tickets__count {}"}
`)
	cases, err := suite.Cases(CaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tools := []string{"cmdb__get_asset", "cmdb__get_assets", "tickets__open_ticket", "tickets__list_tickets"}
	var got []string
	for _, p := range CheckTools(cases[0], tools) {
		got = append(got, strings.TrimPrefix(p.String(), cases[0].Scenario.File))
	}
	want := []string{
		`:3: servers[0].auto_run[1]: server cmdb offers no tool "get_aset" (did you mean "get_asset"?)`,
		`:9: host.allow[1]: server cmdb offers no tool "cmdb__get_aset" (did you mean "cmdb__get_asset"?)`,
		`:10: host.descriptions: server tickets offers no tool "tickets__list_ticket" (did you mean "tickets__list_tickets"?)`,
		`:11: host.auto_run.tickets[1]: server tickets offers no tool "open_tiket" (did you mean "open_ticket"?)`,
		`:12: approvals[1]: no tool of server cmdb matches "cmdb__find*"`,
		`:15: variants[0].host.deny[0]: server cmdb offers no tool "cmdb__find_assets" (did you mean "cmdb__get_assets"?)`,
		`:15: variants[0].host.deny[1]: server cmdb offers no tool "cmdb__nope"`,
		`:20: expect[3].order[1]: server tickets offers no tool "tickets__open_tickets" (did you mean "tickets__open_ticket"?)`,
		`:22: expect[5].state: server tickets offers no tool "tickets__count"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckTools problems (-want +got):\n%s", diff)
	}
	if ps := CheckTools(cases[0], []string{"cmdb__get_asset", "cmdb__get_aset", "cmdb__find_assets", "cmdb__nope", "cmdb__delete_everything",
		"tickets__open_ticket", "tickets__open_tickets", "tickets__list_tickets", "tickets__list_ticket", "tickets__open_tiket", "tickets__count"}); len(ps) != 0 {
		t.Errorf("CheckTools with every name offered = %v, want none", ps)
	}
}

// A tool that a tools_changed expectation says the server adds may be
// named before the server lists it; any other unlisted name is still a
// problem.
func TestCheckToolsKnowsAddedTools(t *testing.T) {
	testEnv(t)
	suite := loadText(t, `name: grows
servers: [{name: support, command: support}]
question: q
model: {scripted: []}
expect:
  - {tools_changed: support, added: [escalate]}
  - {tool: support__escalate, outcome: ok}
  - {tool: support__escalte, outcome: ok}
`)
	cases, err := suite.Cases(CaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range CheckTools(cases[0], []string{"support__search_knowledge", "support__get_ticket"}) {
		got = append(got, strings.TrimPrefix(p.String(), cases[0].Scenario.File))
	}
	want := []string{`:8: expect[2].tool: server support offers no tool "support__escalte" (did you mean "support__escalate"?)`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckTools problems (-want +got):\n%s", diff)
	}
}

func TestExpectsServerFailure(t *testing.T) {
	testEnv(t)
	suite := loadText(t, `name: fails
servers: [{name: a, command: a}, {name: b, command: b}, {name: c, command: c}, {name: d, command: d}]
question: q
model: {scripted: []}
expect:
  - {server: a, connected: false}
  - {server: b, version_failure: true}
  - {server: c, protocol: 2025-11-25}
  - {server: d, connected: true}
`)
	cases, _ := suite.Cases(CaseOptions{})
	got := map[string]bool{}
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		got[s] = cases[0].ExpectsServerFailure(s)
	}
	want := map[string]bool{"a": true, "b": true, "c": false, "d": false, "e": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ExpectsServerFailure (-want +got):\n%s", diff)
	}
}
