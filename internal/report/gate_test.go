package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseGate(t *testing.T) {
	tests := []struct {
		in      string
		want    Gate
		wantErr string
	}{
		{in: "pass_rate >= 1.0", want: Gate{Text: "pass_rate >= 1.0", Metric: "pass_rate", Op: ">=", Value: 1}},
		{in: "  tool_def_tokens<=600 ", want: Gate{Text: "tool_def_tokens<=600", Metric: "tool_def_tokens", Op: "<=", Value: 600}},
		{in: "unknown_tools == 0", want: Gate{Text: "unknown_tools == 0", Metric: "unknown_tools", Op: "==", Value: 0}},
		{in: "p95_call_ms < 50", want: Gate{Text: "p95_call_ms < 50", Metric: "p95_call_ms", Op: "<", Value: 50}},
		{in: "timeouts != 3", want: Gate{Text: "timeouts != 3", Metric: "timeouts", Op: "!=", Value: 3}},
		{in: "cases > 2e0", want: Gate{Text: "cases > 2e0", Metric: "cases", Op: ">", Value: 2}},
		{in: "result_bytes <= -1.5", want: Gate{Text: "result_bytes <= -1.5", Metric: "result_bytes", Op: "<=", Value: -1.5}},
		{in: "pass_rate >= baseline", want: Gate{Text: "pass_rate >= baseline", Metric: "pass_rate", Op: ">=", Baseline: true}},
		{in: "tool_def_tokens <= baseline * 1.05", want: Gate{Text: "tool_def_tokens <= baseline * 1.05", Metric: "tool_def_tokens", Op: "<=", Baseline: true, BaselineOp: '*', Value: 1.05}},
		{in: "pass_rate >= baseline-0.1", want: Gate{Text: "pass_rate >= baseline-0.1", Metric: "pass_rate", Op: ">=", Baseline: true, BaselineOp: '-', Value: 0.1}},
		{in: "steps <= baseline + 2", want: Gate{Text: "steps <= baseline + 2", Metric: "steps", Op: "<=", Baseline: true, BaselineOp: '+', Value: 2}},

		{in: "pas_rate >= 1", wantErr: `unknown metric "pas_rate" (known: cases, passed, failed, errored, pass_rate, steps,`},
		{in: "pass_rate => 1", wantErr: `want "<metric> <op> <number>" with op one of < <= == != >= >`},
		{in: "pass_rate = 1", wantErr: `want "<metric> <op> <number>"`},
		{in: "pass_rate >=", wantErr: `missing a number after >=`},
		{in: "pass_rate >= high", wantErr: `"high" is not a number`},
		{in: "pass_rate >= NaN", wantErr: `"NaN" is not a number`},
		{in: "pass_rate >= 1 2", wantErr: `"1 2" is not a number`},
		{in: "pass_rate >= baseline / 2", wantErr: `after baseline want * + or - and a number, got "/ 2"`},
		{in: "pass_rate >= baseline *", wantErr: `"" is not a number`},
		{in: "", wantErr: `want "<metric> <op> <number>"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseGate(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseGate(%q) err = %v, want it to contain %q", tt.in, err, tt.wantErr)
				}
				if !errors.Is(err, ErrGate) {
					t.Errorf("err = %v, want it to wrap ErrGate", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseGate(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(sameRegexp)); diff != "" {
				t.Errorf("ParseGate(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func sameRegexp(a, b *regexp.Regexp) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.String() == b.String()
}

func TestParseGateUnknownMetricListsAll(t *testing.T) {
	_, err := ParseGate("nope < 1")
	if err == nil {
		t.Fatal("no error")
	}
	for _, name := range MetricNames() {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not list %s", err, name)
		}
	}
}

func TestLoadGatesErrors(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string
	}{
		{"empty file", "", `gates.yaml: invalid gate: empty file, want a "gates:" list`},
		{"not a mapping", "- pass_rate >= 1\n", `gates.yaml:1: invalid gate: want a mapping with a "gates:" list`},
		{"unknown top field", "gates: [pass_rate >= 1]\nbaseline: x\n", `gates.yaml:2: invalid gate: unknown field "baseline" (known: gates)`},
		{"missing gates", "{}\n", `gates.yaml:1: invalid gate: missing "gates:" list`},
		{"gates not a list", "gates: pass_rate >= 1\n", `gates.yaml:1: invalid gate: gates: want a list`},
		{"empty list", "gates: []\n", `gates.yaml:1: invalid gate: gates: the list is empty`},
		{"bad metric on line 4", "# c\ngates:\n  - pass_rate >= 1\n  - pass_rat >= 1\n", `gates.yaml:4: invalid gate "pass_rat >= 1": unknown metric "pass_rat"`},
		{"bad op in mapping", "gates:\n  - scenario: x\n    gate: pass_rate ~ 1\n", `gates.yaml:3: invalid gate "pass_rate ~ 1": want`},
		{"unknown item field", "gates:\n  - gate: pass_rate >= 1\n    scenarios: x\n", `gates.yaml:3: invalid gate: unknown field "scenarios" (known: gate, scenario, variant, model)`},
		{"missing gate", "gates:\n  - scenario: x\n", `gates.yaml:2: invalid gate: missing "gate"`},
		{"null gate", "gates:\n  - gate:\n", `gates.yaml:2: invalid gate: gate: want text like "pass_rate >= 1"`},
		{"bad regex", "gates:\n  - gate: pass_rate >= 1\n    scenario: \"ticket-(\"\n", `gates.yaml:3: invalid gate: scenario: error parsing regexp`},
		{"regex not text", "gates:\n  - gate: pass_rate >= 1\n    model: [a, b]\n", `gates.yaml:3: invalid gate: model: want a regular expression`},
		{"item a list", "gates:\n  - [pass_rate >= 1]\n", `gates.yaml:2: invalid gate: want a gate's text or a mapping with "gate"`},
		{"bad yaml", "gates: [\n", `gates.yaml: invalid gate: yaml:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gates.yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadGates(path)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrGate) {
				t.Errorf("err = %v, want it to wrap ErrGate", err)
			}
			got := strings.TrimPrefix(err.Error(), filepath.Dir(path)+string(filepath.Separator))
			if !strings.HasPrefix(got, tt.wantErr) {
				t.Errorf("err = %q, want prefix %q", got, tt.wantErr)
			}
		})
	}
}

func TestLoadGatesFixture(t *testing.T) {
	gates, err := LoadGates(filepath.Join("testdata", "gates", "ci.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range gates {
		got = append(got, g.Pos+" "+g.String())
	}
	want := []string{
		"testdata/gates/ci.yaml:3 pass_rate >= 1",
		"testdata/gates/ci.yaml:4 unknown_tools == 0",
		"testdata/gates/ci.yaml:5 p95_call_ms <= 900 [scenario~ticket-.*]",
		"testdata/gates/ci.yaml:6 tool_def_tokens <= baseline * 1.05 [scenario~search-desc variant~b-.*]",
		"testdata/gates/ci.yaml:9 pass_rate >= baseline",
		"testdata/gates/ci.yaml:10 cases >= 1 [scenario~retired-.*]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gates (-want +got):\n%s", diff)
	}
	if !gates[2].Scenario.MatchString("ticket-accepted") || gates[2].Scenario.MatchString("old-ticket-accepted") {
		t.Error("scenario scope must match whole names only")
	}
}

func mustGate(t *testing.T, s string) Gate {
	t.Helper()
	g, err := ParseGate(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestEvaluateGates(t *testing.T) {
	base := fixture(t, "base")
	next := fixture(t, "new")
	scoped := func(g Gate, scenario string) Gate {
		re, err := anchor(scenario)
		if err != nil {
			t.Fatal(err)
		}
		g.Scenario = re
		return g
	}
	tests := []struct {
		name     string
		gate     Gate
		baseline *Summary
		want     []string // group: passed detail
	}{
		{
			name: "pass rate on a scope",
			gate: scoped(mustGate(t, "pass_rate >= 1"), "ticket-.*"),
			want: []string{
				"ticket-accepted/scripted: false pass_rate = 66.7%, want >= 100%",
				"ticket-declined/scripted: false pass_rate = 0%, want >= 100%",
			},
		},
		{
			name: "sum of protocol errors",
			gate: scoped(mustGate(t, "protocol_errors <= 2"), "chaos-.*"),
			want: []string{"chaos-failures/scripted: false protocol_errors = 3, want <= 2"},
		},
		{
			name: "p95 latency holds",
			gate: scoped(mustGate(t, "p95_call_ms < 1000"), "search-desc"),
			// a-terse calls sorted: 598.7 612 633.3 640.2 655.3 688.1 701.8 720.4,
			// p95 = 701.8 + 0.65*(720.4-701.8); b-verbose: 402.7 + 0.65*(411.9-402.7).
			want: []string{
				"search-desc/a-terse/openai:gpt-oss-120b: true p95_call_ms = 713.89, want < 1000",
				"search-desc/b-verbose/openai:gpt-oss-120b: true p95_call_ms = 408.68, want < 1000",
			},
		},
		{
			name: "mean over cases",
			gate: scoped(mustGate(t, "total_tokens == 6513"), "search-desc"),
			want: []string{
				"search-desc/a-terse/openai:gpt-oss-120b: true total_tokens = 6513, want == 6513",
				"search-desc/b-verbose/openai:gpt-oss-120b: false total_tokens = 7617, want == 6513",
			},
		},
		{
			name:     "relative to a baseline",
			gate:     scoped(mustGate(t, "tool_def_tokens <= baseline + 50"), "search-desc"),
			baseline: base,
			want: []string{
				"search-desc/a-terse/openai:gpt-oss-120b: true tool_def_tokens = 210, want <= 260",
				"search-desc/b-verbose/openai:gpt-oss-120b: false tool_def_tokens = 520, want <= 518",
			},
		},
		{
			name:     "new group passes a baseline gate",
			gate:     scoped(mustGate(t, "pass_rate >= baseline"), "cmdb-.*"),
			baseline: base,
			want:     []string{"cmdb-find/scripted: true pass_rate = 100%; not in the baseline run, skipped"},
		},
		{
			name: "baseline gate without a baseline",
			gate: scoped(mustGate(t, "pass_rate >= baseline"), "cmdb-.*"),
			want: []string{"cmdb-find/scripted: false needs a baseline run"},
		},
		{
			name: "no match fails",
			gate: scoped(mustGate(t, "cases >= 1"), "retired"),
			want: []string{": false no scenario, variant and model match this gate"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range EvaluateGates(next, []Gate{tt.gate}, tt.baseline) {
				got = append(got, r.Group.String()+": "+map[bool]string{true: "true", false: "false"}[r.Passed]+" "+r.Detail)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHolds(t *testing.T) {
	tests := []struct {
		v     float64
		op    string
		limit float64
		want  bool
	}{
		{1, ">=", 1, true}, {0.999, ">=", 1, false}, {1, ">", 1, false}, {1.5, ">", 1, true},
		{0, "==", 0, true}, {0.1 + 0.2, "==", 0.3, true}, {1, "!=", 1, false}, {2, "!=", 1, true},
		{50, "<=", 50, true}, {50, "<", 50, false}, {49, "<", 50, true}, {51, "<=", 50, false},
		{1, "~", 1, false},
	}
	for _, tt := range tests {
		if got := holds(tt.v, tt.op, tt.limit); got != tt.want {
			t.Errorf("holds(%v %s %v) = %v, want %v", tt.v, tt.op, tt.limit, got, tt.want)
		}
	}
}

func TestGateVerdict(t *testing.T) {
	s := fixture(t, "new")
	pass := EvaluateGates(s, []Gate{mustGate(t, "version_failures == 0"), mustGate(t, "cases >= 1")}, nil)
	if v := GateVerdict(pass); v.Regressed || len(v.Reasons) != 0 {
		t.Errorf("verdict = %+v, want no failure", v)
	}
	fail := EvaluateGates(s, []Gate{mustGate(t, "unknown_tools == 0")}, nil)
	v := GateVerdict(fail)
	want := []string{"unknown_tools == 0: unknown-tool/scripted: unknown_tools = 1, want == 0"}
	if !v.Regressed || !cmp.Equal(want, v.Reasons) {
		t.Errorf("verdict = %+v, want regressed with %q", v, want)
	}
}

// TestMetricsDocumented keeps the metric table in the package
// documentation in step with the metrics gates know.
func TestMetricsDocumented(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	var rows []Metric
	inTable := false
	for _, line := range strings.Split(string(doc), "\n") {
		fields := strings.Fields(strings.TrimPrefix(line, "//"))
		switch {
		case len(fields) > 0 && fields[0] == "metric" && strings.HasPrefix(line, "//\t"):
			inTable = true
		case inTable && strings.HasPrefix(line, "//\t") && len(fields) > 0:
			documented = append(documented, fields[0])
			cols := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(strings.TrimPrefix(line, "//\t")), -1)
			if len(cols) == 3 {
				rows = append(rows, Metric{Name: cols[0], Meaning: cols[1], Aggregation: cols[2]})
			}
		case inTable:
			inTable = false
		}
	}
	if diff := cmp.Diff(MetricNames(), documented); diff != "" {
		t.Errorf("doc.go metric table (-code +doc):\n%s", diff)
	}
	// The meanings too: docs/scenarios.md is generated from Metrics().
	if diff := cmp.Diff(Metrics(), rows); diff != "" {
		t.Errorf("doc.go metric table's meanings (-code +doc):\n%s", diff)
	}
}

func TestGatesJSONRoundTrip(t *testing.T) {
	_, _, opts := fixtureVerdicts(t)
	var buf bytes.Buffer
	if err := WriteGatesJSON(&buf, opts.Gates); err != nil {
		t.Fatal(err)
	}
	got, err := ReadGatesJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(opts.Gates) || len(got) == 0 {
		t.Fatalf("read back %d results, want %d", len(got), len(opts.Gates))
	}
	// The table of what was read back is the table of what was written.
	var want, back bytes.Buffer
	if err := GateTable(opts.Gates).WriteText(&want); err != nil {
		t.Fatal(err)
	}
	if err := GateTable(got).WriteText(&back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), back.String()); diff != "" {
		t.Errorf("gate table after a round trip (-want +got):\n%s", diff)
	}
	if GateVerdict(got).Regressed != GateVerdict(opts.Gates).Regressed {
		t.Errorf("verdict changed in the round trip")
	}
}
