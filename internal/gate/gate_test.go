package gate

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParse(t *testing.T) {
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

		{in: "routing_accuracy >= 0.9", want: Gate{Text: "routing_accuracy >= 0.9", Metric: "routing_accuracy", Op: ">=", Value: 0.9}},
		{in: "recall:tickets__open_ticket >= 0.8", want: Gate{Text: "recall:tickets__open_ticket >= 0.8", Metric: "recall", Arg: "tickets__open_ticket", Op: ">=", Value: 0.8}},
		{in: "precision:no_tool>=baseline", want: Gate{Text: "precision:no_tool>=baseline", Metric: "precision", Arg: "no_tool", Op: ">=", Baseline: true}},
		{in: "confusions <= 3", want: Gate{Text: "confusions <= 3", Metric: "confusions", Op: "<=", Value: 3}},

		{in: "recall >= 0.8", wantErr: `metric recall takes a tool: recall:<tool> (recall:no_tool for the rows that expect none)`},
		{in: "recall: >= 0.8", wantErr: `metric recall takes a tool`},
		{in: "pass_rate:x >= 1", wantErr: `metric pass_rate takes no argument`},
		{in: "recall:a b >= 1", wantErr: `want "<metric> <op> <number>"`},
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
			got, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) err = %v, want it to contain %q", tt.in, err, tt.wantErr)
				}
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("err = %v, want it to wrap ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(sameRegexp)); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, diff)
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

func TestParseUnknownMetricListsAll(t *testing.T) {
	_, err := Parse("nope < 1")
	if err == nil {
		t.Fatal("no error")
	}
	for _, name := range MetricNames() {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not list %s", err, name)
		}
	}
}

func TestLoadErrors(t *testing.T) {
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
			_, err := Load(path)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v, want it to wrap ErrInvalid", err)
			}
			got := strings.TrimPrefix(err.Error(), filepath.Dir(path)+string(filepath.Separator))
			if !strings.HasPrefix(got, tt.wantErr) {
				t.Errorf("err = %q, want prefix %q", got, tt.wantErr)
			}
		})
	}
}

func TestLoadFixture(t *testing.T) {
	gates, err := Load(filepath.Join("testdata", "gates", "ci.yaml"))
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
	if diff := cmp.Diff(Metrics(), rows, cmpopts.IgnoreFields(Metric{}, "Arg", "Routing")); diff != "" {
		t.Errorf("doc.go metric table's meanings (-code +doc):\n%s", diff)
	}
}
