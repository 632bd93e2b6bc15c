package report

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hosteval/hosteval/internal/gate"
)

func mustGate(t *testing.T, s string) gate.Gate {
	t.Helper()
	g, err := gate.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestEvaluateGates(t *testing.T) {
	base := fixture(t, "base")
	next := fixture(t, "new")
	scoped := func(g gate.Gate, scenario string) gate.Gate {
		g.Scenario = regexp.MustCompile(`^(?:` + scenario + `)$`)
		return g
	}
	tests := []struct {
		name     string
		gate     gate.Gate
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
			name: "baseline gate without a baseline: one result, passed with a note",
			gate: scoped(mustGate(t, "pass_rate >= baseline"), "cmdb-.*"),
			want: []string{": true no baseline yet: pass_rate >= baseline [scenario~cmdb-.*] not checked"},
		},
		{
			name: "baseline gate without a baseline that matches no group",
			gate: scoped(mustGate(t, "pass_rate >= baseline"), "retired"),
			want: []string{": false no scenario, variant and model match this gate"},
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
			for _, r := range EvaluateGates(next, []gate.Gate{tt.gate}, tt.baseline) {
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
	pass := EvaluateGates(s, []gate.Gate{mustGate(t, "version_failures == 0"), mustGate(t, "cases >= 1")}, nil)
	if v := GateVerdict(pass); v.Regressed || len(v.Reasons) != 0 {
		t.Errorf("verdict = %+v, want no failure", v)
	}
	fail := EvaluateGates(s, []gate.Gate{mustGate(t, "unknown_tools == 0")}, nil)
	v := GateVerdict(fail)
	want := []string{"unknown_tools == 0: unknown-tool/scripted: unknown_tools = 1, want == 0"}
	if !v.Regressed || !cmp.Equal(want, v.Reasons) {
		t.Errorf("verdict = %+v, want regressed with %q", v, want)
	}

	// A suite's first run: a gate on the baseline holds, with a note.
	first := GateVerdict(EvaluateGates(s, []gate.Gate{mustGate(t, "pass_rate >= baseline")}, nil))
	wantNotes := []string{"no baseline yet: pass_rate >= baseline not checked"}
	if first.Regressed || !cmp.Equal(wantNotes, first.Notes) {
		t.Errorf("verdict without a baseline = %+v, want held with the notes %q", first, wantNotes)
	}
}

// TestMetricValues: report has a value for every metric a gate can
// check, and none for a metric gate does not know.
func TestMetricValues(t *testing.T) {
	routing := 0
	for _, m := range gate.Metrics() {
		switch {
		case m.Routing:
			routing++
			if routingValues[m.Base()] == nil {
				t.Errorf("routing metric %s has no value in report", m.Name)
			}
		case metricValues[m.Name] == nil:
			t.Errorf("metric %s has no value in report", m.Name)
		}
	}
	if got, want := len(metricValues)+len(routingValues), len(gate.Metrics()); got != want || len(routingValues) != routing {
		t.Errorf("report has values for %d metrics (%d routing), gate knows %d (%d routing)", got, len(routingValues), want, routing)
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

// A cost under 0.0001 (a bound, a cheap case) keeps its significant
// digits: four decimals would print it 0.0000.
func TestFmtCost(t *testing.T) {
	tests := []struct {
		x    float64
		want string
	}{
		{0, "0.0000"},
		{0.0002, "0.0002"},
		{1.23456, "1.2346"},
		{0.00001, "0.00001"},
		{0.0000123456, "0.00001235"},
		{0.00009999, "0.00009999"},
		{-0.00005, "-0.00005"},
	}
	for _, tt := range tests {
		if got := fmtCost(tt.x); got != tt.want {
			t.Errorf("fmtCost(%g) = %q, want %q", tt.x, got, tt.want)
		}
	}
}
