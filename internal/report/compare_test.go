package report

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hosteval/hosteval/internal/record"
)

// spec describes the cases of one group for a synthetic run.
type spec struct {
	scenario, variant string
	cases, passed     int
	tokens            int       // tool-definition tokens per request
	resultBytes       int       // per case
	unknown           int       // unknown-tool calls per case
	callMS            []float64 // per case, one call each; cycled
}

func synth(id string, specs ...spec) *Summary {
	run := &record.Run{Dir: id}
	for _, sp := range specs {
		for i := range sp.cases {
			status := record.StatusFail
			if i < sp.passed {
				status = record.StatusPass
			}
			rec := record.Record{
				RunID: id, CaseID: fmt.Sprintf("%s/%s#%d", sp.scenario, sp.variant, i),
				Scenario: sp.scenario, Variant: sp.variant, Model: "scripted", Repeat: i, Status: status,
				ModelRequests: []record.ModelRequest{{ToolDefTokens: sp.tokens}},
			}
			if len(sp.callMS) > 0 || sp.resultBytes > 0 {
				ms := 1.0
				if len(sp.callMS) > 0 {
					ms = sp.callMS[i%len(sp.callMS)]
				}
				rec.Calls = append(rec.Calls, record.Call{Outcome: record.OutcomeOK, MS: ms, ResultBytes: sp.resultBytes})
			}
			for range sp.unknown {
				rec.Calls = append(rec.Calls, record.Call{Outcome: record.OutcomeUnknownTool})
			}
			run.Records = append(run.Records, rec)
		}
	}
	return Aggregate(run)
}

func TestComparePassRate(t *testing.T) {
	tests := []struct {
		name          string
		old, new      spec
		th            Thresholds
		wantRegressed bool
		wantTested    bool
		wantP         float64
		wantReason    string
	}{
		{
			name: "one case each, any drop counts",
			old:  spec{scenario: "s", cases: 1, passed: 1}, new: spec{scenario: "s", cases: 1, passed: 0},
			th: DefaultThresholds(), wantRegressed: true,
			wantReason: "s/scripted: pass rate 100% -> 0% (n=1+1, untested: any drop counts)",
		},
		{
			name: "significant drop",
			old:  spec{scenario: "s", cases: 10, passed: 10}, new: spec{scenario: "s", cases: 10, passed: 3},
			th: DefaultThresholds(), wantRegressed: true, wantTested: true, wantP: 240.0 / 77520,
			wantReason: "s/scripted: pass rate 100% -> 30% (p=0.003 n=10+10)",
		},
		{
			name: "drop within noise",
			old:  spec{scenario: "s", cases: 3, passed: 3}, new: spec{scenario: "s", cases: 3, passed: 2},
			th: DefaultThresholds(), wantTested: true, wantP: 1,
		},
		{
			name: "significant but smaller than the tolerated drop",
			old:  spec{scenario: "s", cases: 10, passed: 10}, new: spec{scenario: "s", cases: 10, passed: 3},
			th: Thresholds{PassRateDrop: 0.8}, wantTested: true, wantP: 240.0 / 77520,
		},
		{
			name: "check turned off",
			old:  spec{scenario: "s", cases: 1, passed: 1}, new: spec{scenario: "s", cases: 1, passed: 0},
			th: Thresholds{PassRateDrop: -1},
		},
		{
			name: "improvement",
			old:  spec{scenario: "s", cases: 10, passed: 3}, new: spec{scenario: "s", cases: 10, passed: 10},
			th: DefaultThresholds(), wantTested: true, wantP: 240.0 / 77520,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(synth("old", tt.old), synth("new", tt.new), tt.th)
			if len(c.Groups) != 1 {
				t.Fatalf("groups = %d, want 1", len(c.Groups))
			}
			pr := c.Groups[0].PassRate
			if pr.Tested != tt.wantTested || (tt.wantTested && !near(pr.P, tt.wantP, 1e-12)) {
				t.Errorf("tested = %v p = %v, want %v %v", pr.Tested, pr.P, tt.wantTested, tt.wantP)
			}
			if c.Verdict.Regressed != tt.wantRegressed {
				t.Errorf("regressed = %v, want %v (reasons %q)", c.Verdict.Regressed, tt.wantRegressed, c.Verdict.Reasons)
			}
			if tt.wantReason != "" && !cmp.Equal([]string{tt.wantReason}, c.Verdict.Reasons) {
				t.Errorf("reasons = %q, want %q", c.Verdict.Reasons, tt.wantReason)
			}
		})
	}
}

func TestCompareExact(t *testing.T) {
	base := spec{scenario: "s", cases: 2, passed: 2, tokens: 100, resultBytes: 1000}
	with := func(f func(*spec)) spec {
		s := base
		f(&s)
		return s
	}
	tests := []struct {
		name       string
		new        spec
		th         Thresholds
		wantReason string // "" for no regression
	}{
		{"unchanged", base, DefaultThresholds(), ""},
		{"tokens within 5%", with(func(s *spec) { s.tokens = 105 }), DefaultThresholds(), ""},
		{"tokens up 6%", with(func(s *spec) { s.tokens = 106 }), DefaultThresholds(),
			"s/scripted: tool-definition tokens per request 100 -> 106 (+6%, limit +5%)"},
		{"tokens check off", with(func(s *spec) { s.tokens = 500 }), Thresholds{ToolDefTokensPct: -1, ResultBytesPct: -1}, ""},
		{"any token growth with zero thresholds", with(func(s *spec) { s.tokens = 101 }), Thresholds{},
			"s/scripted: tool-definition tokens per request 100 -> 101 (+1%, limit +0%)"},
		{"result bytes up 50%", with(func(s *spec) { s.resultBytes = 1500 }), DefaultThresholds(),
			"s/scripted: result bytes per case 1000 -> 1500 (+50%, limit +10%)"},
		{"new unknown tool", with(func(s *spec) { s.unknown = 1 }), DefaultThresholds(),
			"s/scripted: unknown tools per case 0 -> 1"},
		{"unknown tools tolerated", with(func(s *spec) { s.unknown = 1 }), Thresholds{UnknownTools: 1}, ""},
		{"fewer tokens", with(func(s *spec) { s.tokens = 50 }), DefaultThresholds(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(synth("old", base), synth("new", tt.new), tt.th)
			var want []string
			if tt.wantReason != "" {
				want = []string{tt.wantReason}
			}
			if diff := cmp.Diff(want, c.Verdict.Reasons); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
			if c.Verdict.Regressed != (tt.wantReason != "") {
				t.Errorf("regressed = %v", c.Verdict.Regressed)
			}
			if g := c.Groups[0]; !g.ToolDefTokens.Exact || g.ToolDefTokens.Tested {
				t.Errorf("tool-definition tokens: exact=%v tested=%v, want exact and untested", g.ToolDefTokens.Exact, g.ToolDefTokens.Tested)
			}
		})
	}
}

func TestCompareLatency(t *testing.T) {
	fast := []float64{10, 11, 12, 13, 14, 15, 16, 17}
	slow := []float64{20, 22, 24, 26, 28, 30, 32, 34}
	slightly := []float64{10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5}
	tests := []struct {
		name          string
		old, new      spec
		wantTested    bool
		wantSig       bool
		wantRegressed bool
	}{
		{
			name: "significantly slower",
			old:  spec{scenario: "s", cases: 8, passed: 8, callMS: fast}, new: spec{scenario: "s", cases: 8, passed: 8, callMS: slow},
			// 8 against 8 separated: p = 2/C(16,8) = 2/12870.
			wantTested: true, wantSig: true, wantRegressed: true,
		},
		{
			name: "slightly slower",
			old:  spec{scenario: "s", cases: 8, passed: 8, callMS: fast}, new: spec{scenario: "s", cases: 8, passed: 8, callMS: slightly},
			wantTested: true,
		},
		{
			name: "one case each is not tested",
			old:  spec{scenario: "s", cases: 1, passed: 1, callMS: fast}, new: spec{scenario: "s", cases: 1, passed: 1, callMS: slow},
		},
		{
			// Most calls faster (significant), but a slower tail: the test
			// shows a speed-up, so the p95 growth is not a regression.
			name:       "faster overall with a slower tail",
			old:        spec{scenario: "s", cases: 8, passed: 8, callMS: []float64{20, 21, 22, 23, 24, 25, 26, 27}},
			new:        spec{scenario: "s", cases: 8, passed: 8, callMS: []float64{10, 11, 12, 13, 14, 15, 16, 60}},
			wantTested: true, wantSig: true,
		},
		{
			name: "faster",
			old:  spec{scenario: "s", cases: 8, passed: 8, callMS: slow}, new: spec{scenario: "s", cases: 8, passed: 8, callMS: fast},
			wantTested: true, wantSig: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(synth("old", tt.old), synth("new", tt.new), DefaultThresholds())
			p95 := c.Groups[0].P95
			if p95.Tested != tt.wantTested || p95.Significant != tt.wantSig {
				t.Errorf("p95: tested=%v significant=%v (p=%v), want %v %v", p95.Tested, p95.Significant, p95.P, tt.wantTested, tt.wantSig)
			}
			if c.Verdict.Regressed != tt.wantRegressed {
				t.Errorf("regressed = %v, want %v (reasons %q)", c.Verdict.Regressed, tt.wantRegressed, c.Verdict.Reasons)
			}
		})
	}
	c := Compare(synth("old", spec{scenario: "s", cases: 8, passed: 8, callMS: fast}), synth("new", spec{scenario: "s", cases: 8, passed: 8, callMS: slow}), DefaultThresholds())
	if p := c.Groups[0].P95.P; !near(p, 2.0/12870, 1e-12) {
		t.Errorf("p = %v, want 2/12870", p)
	}
}

func TestCompareMissingGroups(t *testing.T) {
	old := synth("old", spec{scenario: "a", cases: 1, passed: 1}, spec{scenario: "gone", cases: 1, passed: 1})
	new := synth("new", spec{scenario: "a", cases: 1, passed: 1}, spec{scenario: "fresh", cases: 1, passed: 0})
	c := Compare(old, new, DefaultThresholds())
	var got []string
	for _, g := range c.Groups {
		got = append(got, fmt.Sprintf("%s old=%v new=%v", g.GroupKey, g.InOld, g.InNew))
	}
	// A group that vanished leads, then one that appeared, then the rest.
	want := []string{"gone/scripted old=true new=false", "fresh/scripted old=false new=true", "a/scripted old=true new=true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	// A group that vanished is a regression: what it tested is no longer
	// tested. One that appeared is a note.
	if !c.Verdict.Regressed {
		t.Error("not regressed, although gone/scripted vanished")
	}
	wantReasons := []string{"gone/scripted: vanished: in the old run only (n=1+0)"}
	if diff := cmp.Diff(wantReasons, c.Verdict.Reasons); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	wantNotes := []string{"fresh/scripted: only in the new run"}
	if diff := cmp.Diff(wantNotes, c.Verdict.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// TestCompareFromSummaryJSON: a summary read back has no latency samples,
// so latency must show as untested, never as "~".
func TestCompareFromSummaryJSON(t *testing.T) {
	fast := []float64{10, 11, 12, 13}
	old := synth("old", spec{scenario: "s", cases: 4, passed: 4, callMS: fast})
	var buf bytes.Buffer
	if err := WriteSummaryJSON(&buf, old); err != nil {
		t.Fatal(err)
	}
	read, err := ReadSummaryJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	c := Compare(read, old, DefaultThresholds())
	if g := c.Groups[0]; g.P95.Tested || !g.PassRate.Tested {
		t.Errorf("p95 tested = %v, pass rate tested = %v; want false, true", g.P95.Tested, g.PassRate.Tested)
	}
	if _, err := ReadSummaryJSON(strings.NewReader(`{"schema": 3}`)); err == nil {
		t.Error("schema 3 read without error")
	}
}

func TestCompareTablesShowNoise(t *testing.T) {
	old := synth("old", spec{scenario: "s", cases: 3, passed: 3, tokens: 100, callMS: []float64{10, 20, 30}})
	new := synth("new", spec{scenario: "s", cases: 3, passed: 2, tokens: 120, callMS: []float64{11, 19, 31}})
	tables := Compare(old, new, DefaultThresholds()).Tables()
	got := map[string][]string{}
	for _, tbl := range tables {
		row := tbl.Rows[0]
		got[tbl.Title] = []string{row[1].Text, row[2].Text, row[3].Text, row[4].Text}
	}
	want := map[string][]string{
		"pass rate":                          {"100%", "66.7%", "~", "(p=1.000 n=3+3)"},
		"tool-definition tokens per request": {"100", "120", "+20%", "(exact n=3+3)"},
		"result bytes per case":              {"0", "0", "0%", "(exact n=3+3)"},
		"unknown tools per case":             {"0", "0", "0", "(exact n=3+3)"},
		"call latency p50 (ms)":              {"20.0", "19.0", "~", "(p=1.000 n=3+3, x1.03 [0.37, 3.10])"},
		"call latency p95 (ms)":              {"29.0", "29.8", "~", "(p=1.000 n=3+3, x1.03 [0.37, 3.10])"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("table cells (-want +got):\n%s", diff)
	}
}

// logNormal draws n latencies, median ms, from one log-normal distribution.
func logNormal(rng *rand.Rand, n int, ms float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = record.RoundMS(ms * math.Exp(rng.NormFloat64()*0.6))
	}
	return out
}

// TestCompareLatencyMinEffect: a significant slowdown counts only when its
// interval lies beyond the minimum effect.
func TestCompareLatencyMinEffect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	old := logNormal(rng, 3000, 10)
	slower := logNormal(rng, 3000, 12) // 20% slower
	tests := []struct {
		minEffect     float64
		wantRegressed bool
		wantNote      string
	}{
		{DefaultMinEffectPct, false, "is within the minimum effect of 50%"},
		{10, true, ""},
		{30, false, "is within the minimum effect of 30%"},
	}
	for _, tt := range tests {
		th := DefaultThresholds()
		th.MinEffectPct = tt.minEffect
		c := Compare(synth("old", spec{scenario: "s", cases: 3000, passed: 3000, callMS: old}),
			synth("new", spec{scenario: "s", cases: 3000, passed: 3000, callMS: slower}), th)
		l := c.Groups[0].P95
		if !l.Significant || l.Effect == nil || l.Effect.Lo > 1.2 || l.Effect.Hi < 1.2 {
			t.Fatalf("min effect %v: %+v, effect %+v; want significant, 1.2 in the interval", tt.minEffect, l, l.Effect)
		}
		if c.Verdict.Regressed != tt.wantRegressed {
			t.Errorf("min effect %v: regressed = %v, want %v (reasons %q)", tt.minEffect, c.Verdict.Regressed, tt.wantRegressed, c.Verdict.Reasons)
		}
		if tt.wantNote != "" && !strings.Contains(strings.Join(c.Verdict.Notes, "\n"), tt.wantNote) {
			t.Errorf("min effect %v: notes %q, want one saying %q", tt.minEffect, c.Verdict.Notes, tt.wantNote)
		}
		if tt.wantRegressed && !strings.Contains(c.Verdict.Reasons[0], "call latency +2") {
			t.Errorf("reason %q, want the effect", c.Verdict.Reasons[0])
		}
	}
}

// TestCompareIdenticalDistributionsNeverRegress: 5,000 cases against
// 1,000 drawn from one distribution, twenty times over, are never called a
// regression, even with a minimum effect of 10%, though the U test alone
// finds "significant" differences about once in twenty.
func TestCompareIdenticalDistributionsNeverRegress(t *testing.T) {
	th := DefaultThresholds()
	th.MinEffectPct = 10
	significant := 0
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 99))
		old := synth("old", spec{scenario: "s", cases: 5000, passed: 5000, callMS: logNormal(rng, 5000, 4)})
		cur := synth("new", spec{scenario: "s", cases: 1000, passed: 1000, callMS: logNormal(rng, 1000, 4)})
		c := Compare(old, cur, th)
		if c.Verdict.Regressed {
			t.Errorf("seed %d: regressed: %q", seed, c.Verdict.Reasons)
		}
		l := c.Groups[0].P95
		if l.Significant {
			significant++
		}
		if e := l.Effect; e == nil || e.Lo > 1.1 || e.Hi < 1/1.1 {
			t.Errorf("seed %d: effect %+v (p=%v), want an interval reaching within 10%% of 1", seed, e, l.P)
		}
	}
	t.Logf("%d of 20 comparisons significant by the U test alone", significant)
}
