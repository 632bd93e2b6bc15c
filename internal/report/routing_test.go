package report

import (
	"bytes"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hosteval/hosteval/internal/gate"
	"github.com/hosteval/hosteval/internal/record"
)

func TestWilson(t *testing.T) {
	tests := []struct {
		k, n   int
		lo, hi float64
	}{
		// Newcombe, "Two-sided confidence intervals for the single
		// proportion", Statistics in Medicine 1998, 17:857, Table I,
		// method 3 (score): 81/263, 15/148, 0/20, 1/29.
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 20, 0, 0.1611},
		{1, 29, 0.0061, 0.1718},
		// 6/12 by hand: p = 0.5, z² = 3.8415; centre 0.5 + 3.8415/24 =
		// 0.66006; spread 1.96·sqrt(0.25/12 + 3.8415/576) = 0.32504;
		// divided by 1 + 3.8415/12 = 1.32012: 0.25378 and 0.74622.
		{6, 12, 0.25378, 0.74622},
		// All or nothing keeps a width: z²/(n+z²) = 3.8415/13.8415.
		{0, 10, 0, 0.27753},
		{10, 10, 0.72247, 1},
		{0, 0, 0, 1},
	}
	for _, tt := range tests {
		lo, hi := Wilson(tt.k, tt.n)
		if !near(lo, tt.lo, 5e-5) || !near(hi, tt.hi, 5e-5) {
			t.Errorf("Wilson(%d, %d) = (%.5f, %.5f), want (%.4f, %.4f)", tt.k, tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
}

func TestSignTest(t *testing.T) {
	tests := []struct {
		b, c int
		want float64
	}{
		// McNemar's exact test is 2·P(X <= min(b,c)), X ~ Bin(b+c, 1/2).
		// 1 and 8: (C(9,0) + C(9,1))/2^9 = 10/512, doubled 20/512.
		{1, 8, 20.0 / 512},
		{8, 1, 20.0 / 512},
		// 2 and 10: (1 + 12 + 66)/4096 doubled = 158/4096.
		{2, 10, 158.0 / 4096},
		// 0 and 5: 1/32 doubled.
		{0, 5, 2.0 / 32},
		// Balanced or empty: nothing to see.
		{3, 3, 1},
		{0, 0, 1},
		// 0 and 20: 2/2^20 = 1.9073e-6, which prints as p<0.001.
		{0, 20, 2.0 / (1 << 20)},
	}
	for _, tt := range tests {
		if got := SignTest(tt.b, tt.c); !near(got, tt.want, 1e-12) {
			t.Errorf("SignTest(%d, %d) = %.12g, want %.12g", tt.b, tt.c, got, tt.want)
		}
	}
	if got := FormatP(SignTest(0, 20)); got != "p<0.001" {
		t.Errorf("FormatP = %q, want p<0.001", got)
	}
	if got := FormatP(20.0 / 512); got != "p=0.039" {
		t.Errorf("FormatP = %q, want p=0.039", got)
	}
}

func TestTangoPaired(t *testing.T) {
	tests := []struct {
		name          string
		b, c, n       int
		est, lo, hi   float64
		checkBoundsAt bool
	}{
		// The airway example of Fagerland, Lydersen and Laake (2013): 21
		// pairs, 7 passed on side 1 only and 1 on side 2 only. At the
		// lower bound D = -0.51723: A = 42, B = -8 + 48·D = -32.827,
		// C = -7·D·(1-D) = 5.4934, q = (sqrt(1077.6 - 922.9) + 32.827)/84
		// = 0.53887, variance 21·(2q + D(1-D)) = 6.1526, and
		// Z = (1 - 7 + 21·0.51723)/sqrt(6.1526) = 4.8618/2.4804 = 1.960.
		{"airway", 7, 1, 21, -6.0 / 21, -0.51723, -0.02600, true},
		// No discordant pair in 10: Z(D) = -10D/sqrt(10·D(1-D)) for D > 0,
		// so the bound solves 10D/(1-D) = z², D = 3.8415/13.8415.
		{"none discordant", 0, 0, 10, 0, -0.27753, 0.27753, true},
		// All 10 flipped one way (b = 0): B = -10 + 10D < 0, so
		// q = -2B/40 = (1-D)/2 and the variance 10·(1-D)(1+D);
		// Z = sqrt(10(1-D)/(1+D)) = 1.96 at D = (10 - 3.8415)/13.8415.
		// The upper bound is the end of the range.
		{"all flipped", 0, 10, 10, 1, 0.44493, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TangoPaired(tt.b, tt.c, tt.n)
			if !near(got.Est, tt.est, 1e-12) || !near(got.Lo, tt.lo, 5e-5) || !near(got.Hi, tt.hi, 5e-5) {
				t.Errorf("TangoPaired(%d, %d, %d) = %.5f [%.5f, %.5f], want %.5f [%.5f, %.5f]", tt.b, tt.c, tt.n, got.Est, got.Lo, got.Hi, tt.est, tt.lo, tt.hi)
			}
			if got.Method != MethodTango {
				t.Errorf("method %q", got.Method)
			}
			if tt.checkBoundsAt {
				for _, d := range []float64{got.Lo, got.Hi} {
					if z := math.Abs(tangoZ(tt.b, tt.c, tt.n, d)); !near(z, z95, 1e-6) {
						t.Errorf("|Z(%.5f)| = %.6f, want %.6f", d, z, z95)
					}
				}
			}
		})
	}
}

func TestPairedWald(t *testing.T) {
	// Four rows: differences 1, 0.5, 0, -0.5. Mean 0.25; squared
	// deviations 0.5625 + 0.0625 + 0.0625 + 0.5625 = 1.25, s = sqrt(1.25/4)
	// = 0.55902, se = s/2 = 0.27951, interval 0.25 ± 1.96·0.27951 =
	// 0.25 ± 0.54783.
	got := PairedWald([]float64{1, 0.5, 0, -0.5})
	if !near(got.Est, 0.25, 1e-12) || !near(got.Lo, -0.29783, 5e-5) || !near(got.Hi, 0.79783, 5e-5) {
		t.Errorf("PairedWald = %+v, want 0.25 [-0.29783, 0.79783]", got)
	}
}

// route is a scored case's Route for the tests: expected tools, chosen,
// and its verdict.
func route(row string, expected []string, chosen string, correct bool) *record.Route {
	if expected == nil {
		expected = []string{}
	}
	return &record.Route{Row: row, Mode: record.RouteOnly, Match: record.MatchFirst, Expected: expected, Proposed: []string{chosen}, Chosen: chosen, Correct: correct}
}

func boolPtr(b bool) *bool { return &b }

// figureCases is the small dataset of TestRouteFigures: four classes
// (A, B, C and no tool), a tool chosen but never expected (D), an unknown
// name, a row of two expected tools matched by its first choice, and one
// whose first choice was right but whose rule (all) did not hold.
func figureCases() []*record.Route {
	const A, B, C, D = "cmdb__get_asset", "cmdb__find_assets", "tickets__open_ticket", "support__search_knowledge"
	rs := []*record.Route{
		route("1", []string{A}, A, true),
		route("2", []string{A}, A, true),
		route("3", []string{A}, B, false),
		route("4", []string{B}, B, true),
		route("5", []string{B}, A, false),
		route("6", []string{C}, C, true),
		route("7", nil, record.NoTool, true),
		route("8", nil, A, false),
		route("9", []string{A, B}, B, true),
		route("10", []string{C}, record.UnknownTool, false),
		route("11", []string{C}, D, false),
		route("12", []string{A, C}, A, false),
	}
	rs[0].ArgsOK, rs[1].ArgsOK, rs[5].ArgsOK = boolPtr(true), boolPtr(false), boolPtr(true)
	rs[8].Match, rs[11].Match = record.MatchAny, record.MatchAll
	rs[6].Proposed = []string{}
	return rs
}

func TestRouteFigures(t *testing.T) {
	const A, B, C, D = "cmdb__get_asset", "cmdb__find_assets", "tickets__open_ticket", "support__search_knowledge"
	var tally routeTally
	for _, r := range figureCases() {
		tally.add(r)
	}
	got := tally.figures()

	// The matrix by hand. Rows 9 (expects A or B, chose B) counts under
	// B; row 12 (expects A and C, chose A) under A, on the diagonal,
	// although its rule (all) failed.
	wantMatrix := []MatrixCell{
		{B, B, 2}, {B, A, 1}, // rows 4 and 9; 5
		{A, B, 1}, {A, A, 3}, // row 3; rows 1, 2 and 12
		{C, D, 1}, {C, C, 1}, {C, record.UnknownTool, 1}, // rows 11, 6, 10
		{record.NoTool, A, 1}, {record.NoTool, record.NoTool, 1}, // rows 8, 7
	}
	if diff := cmp.Diff(wantMatrix, got.Matrix); diff != "" {
		t.Errorf("matrix (-want +got):\n%s", diff)
	}

	// Per class: support, chosen, hits; precision hits/chosen, recall
	// hits/support, F1 2·hits/(support+chosen).
	// A: 4 rows (1, 2, 3, 12), chosen 5 times (1, 2, 5, 8, 12), 3 hits:
	//    P 3/5, R 3/4, F1 6/9.
	// B: 3 (4, 5, 9), chosen 3 (3, 4, 9), 2 hits: P 2/3, R 2/3, F1 4/6.
	// C: 3 (6, 10, 11), chosen once, 1 hit: P 1, R 1/3, F1 2/4.
	// D: never expected (zero support), chosen once: P 0, R undefined,
	//    F1 0/1 = 0, and left out of the macro average.
	// no tool: 2 (7, 8), chosen once, 1 hit: P 1, R 1/2, F1 2/3.
	f := floatPtr
	wantClasses := []ClassFigures{
		{Class: B, Support: 3, Chosen: 3, Hits: 2, Precision: f(2.0 / 3), Recall: f(2.0 / 3), F1: f(4.0 / 6)},
		{Class: A, Support: 4, Chosen: 5, Hits: 3, Precision: f(3.0 / 5), Recall: f(3.0 / 4), F1: f(6.0 / 9)},
		{Class: D, Support: 0, Chosen: 1, Hits: 0, Precision: f(0), Recall: nil, F1: f(0)},
		{Class: C, Support: 3, Chosen: 1, Hits: 1, Precision: f(1), Recall: f(1.0 / 3), F1: f(2.0 / 4)},
		{Class: record.NoTool, Support: 2, Chosen: 1, Hits: 1, Precision: f(1), Recall: f(1.0 / 2), F1: f(2.0 / 3)},
	}
	if diff := cmp.Diff(wantClasses, got.Classes, cmp.Comparer(func(x, y float64) bool { return near(x, y, 1e-12) })); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
	// Macro: (6/9 + 4/6 + 2/4 + 2/3)/4 = 2.5/4; micro: 7 hits of 12.
	if got.MacroF1 == nil || !near(*got.MacroF1, 0.625, 1e-12) {
		t.Errorf("macro F1 = %v, want 0.625", got.MacroF1)
	}
	if got.MicroF1 == nil || !near(*got.MicroF1, 7.0/12, 1e-12) {
		t.Errorf("micro F1 = %v, want 7/12", got.MicroF1)
	}
	// Accuracy by the rows' verdicts: 1, 2, 4, 6, 7, 9 = 6 of 12, with
	// Wilson's (0.25378, 0.74622) (see TestWilson).
	if a := got.Accuracy; a.K != 6 || a.N != 12 || a.Value != 0.5 || !near(a.Lo, 0.25378, 5e-5) || !near(a.Hi, 0.74622, 5e-5) {
		t.Errorf("accuracy = %+v, want 6/12 [0.25378, 0.74622]", a)
	}
	if got.Hits != 7 || got.Confusions != 5 {
		t.Errorf("hits, confusions = %d, %d; want 7, 5", got.Hits, got.Confusions)
	}
	if nt := got.NoTool; nt == nil || nt.K != 1 || nt.N != 2 {
		t.Errorf("no-tool accuracy = %+v, want 1/2", nt)
	}
	// Arguments checked on rows 1 (held), 2 (not) and 6 (held).
	if ar := got.Args; ar == nil || ar.K != 2 || ar.N != 3 {
		t.Errorf("argument accuracy = %+v, want 2/3", ar)
	}
}

func TestRouteFiguresEmpty(t *testing.T) {
	var tally routeTally
	got := tally.figures()
	if got.MacroF1 != nil || got.MicroF1 != nil || got.NoTool != nil || got.Args != nil || len(got.Classes) != 0 {
		t.Errorf("figures of nothing = %+v, want undefined figures", got)
	}
}

// pairedRecords builds the records of one scenario with two variants
// that answered rows 1..n: pass[v][i] is whether variant v passed row i.
func pairedRecords(t *testing.T, variants []string, outcomes [][]bool) *Summary {
	t.Helper()
	run := &record.Run{Dir: "paired"}
	for v, name := range variants {
		for i, pass := range outcomes[v] {
			row := itoa(i + 1)
			chosen := "cmdb__get_asset"
			if !pass {
				chosen = "cmdb__find_assets"
			}
			status := record.StatusPass
			if !pass {
				status = record.StatusFail
			}
			run.Records = append(run.Records, record.Record{
				RunID: "r", CaseID: "s/" + name + "/m:" + row + "#0", Scenario: "s", Variant: name, Model: "m", Status: status,
				Route: route(row, []string{"cmdb__get_asset"}, chosen, pass),
			})
		}
	}
	return Aggregate(run)
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestPairedRoutingMcNemar(t *testing.T) {
	// 12 rows: both pass rows 1-6; a only rows 7-8 (worse on b); b only
	// rows 9-12 (better on b)... as b = 2, c = 4: p = 2·(1+6+15)/64 =
	// 44/64 = 0.6875.
	a := []bool{true, true, true, true, true, true, true, true, false, false, false, false}
	b := []bool{true, true, true, true, true, true, false, false, true, true, true, true}
	s := pairedRecords(t, []string{"a", "b"}, [][]bool{a, b})
	if s.Routing == nil || len(s.Routing.Paired) != 1 {
		t.Fatalf("paired = %+v, want one comparison", s.Routing)
	}
	p := s.Routing.Paired[0]
	if p.Differs != "variant" || p.Base.Variant != "a" || p.Other.Variant != "b" {
		t.Errorf("paired %s vs %s differing by %s", p.Base, p.Other, p.Differs)
	}
	if p.Rows != 12 || p.Worse != 2 || p.Better != 4 || p.Test != TestMcNemar || p.Repeated {
		t.Errorf("rows %d worse %d better %d test %s repeated %v; want 12, 2, 4, %s, false", p.Rows, p.Worse, p.Better, p.Test, p.Repeated, TestMcNemar)
	}
	if !near(p.P, 44.0/64, 1e-12) || p.Significant {
		t.Errorf("p = %v significant %v, want 0.6875 and not", p.P, p.Significant)
	}
	if !near(p.BaseAccuracy, 8.0/12, 1e-12) || !near(p.OtherAccuracy, 10.0/12, 1e-12) || !near(p.Diff.Est, 2.0/12, 1e-12) {
		t.Errorf("accuracy %v -> %v diff %v, want 8/12 -> 10/12, 2/12", p.BaseAccuracy, p.OtherAccuracy, p.Diff.Est)
	}
	var rows []string
	for _, f := range p.Flips {
		rows = append(rows, f.Row+map[bool]string{true: "+", false: "-"}[f.Better]+f.Base.String()+">"+f.Other.String())
	}
	want := []string{
		"7-cmdb__get_asset>cmdb__find_assets", "8-cmdb__get_asset>cmdb__find_assets",
		"9+cmdb__find_assets>cmdb__get_asset", "10+cmdb__find_assets>cmdb__get_asset",
		"11+cmdb__find_assets>cmdb__get_asset", "12+cmdb__find_assets>cmdb__get_asset",
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("flips (-want +got):\n%s", diff)
	}
}

func TestPairedRoutingSignificant(t *testing.T) {
	// 20 rows, a passes all, b fails rows 1-9 only: b = 9, c = 0,
	// p = 2/2^9 = 0.0039.
	a := make([]bool, 20)
	b := make([]bool, 20)
	for i := range a {
		a[i], b[i] = true, i >= 9
	}
	s := pairedRecords(t, []string{"a", "b"}, [][]bool{a, b})
	p := s.Routing.Paired[0]
	if !near(p.P, 2.0/512, 1e-12) || !p.Significant || p.Worse != 9 || p.Better != 0 {
		t.Errorf("p = %v, significant %v, worse %d better %d; want 2/512, significant, 9, 0", p.P, p.Significant, p.Worse, p.Better)
	}
	want := TangoPaired(9, 0, 20)
	if p.Diff != want || p.Diff.Hi >= 0 {
		t.Errorf("difference = %+v, want %+v below 0", p.Diff, want)
	}
}

// TestSignTestLarge holds the sum in logs (beyond 1,000 pairs) to the
// recurrence at the switch.
func TestSignTestLarge(t *testing.T) {
	// 1,000 and 1,001 pairs, split 460/540 and 460/541: the two ways agree
	// where they meet, and the p-value falls as the split widens.
	a, b := SignTest(460, 540), SignTest(460, 541)
	if !(b < a) || !near(a, b, a*0.2) {
		t.Errorf("SignTest(460, 540) = %g, SignTest(460, 541) = %g: want close and falling", a, b)
	}
	if got := SignTest(1500, 1500); !near(got, 1, 1e-9) {
		t.Errorf("SignTest(1500, 1500) = %g, want 1", got)
	}
}

// routingRun is one scenario's run of the lexical router over rows
// 1..len(pass): pass[i] is whether row i+1 was routed right.
func routingRun(runID string, pass []bool) *Summary {
	run := &record.Run{Dir: runID}
	for i, ok := range pass {
		row := strconv.Itoa(i + 1)
		chosen := "cmdb__get_asset"
		if !ok {
			chosen = "cmdb__find_assets"
		}
		r := route(row, []string{"cmdb__get_asset"}, chosen, ok)
		r.Lexical = true
		run.Records = append(run.Records, record.Record{
			RunID: runID, CaseID: "s/lexical/" + row + "#0", Scenario: "s", Model: "lexical", Status: record.StatusPass, Route: r,
		})
	}
	return Aggregate(run)
}

func TestCompareRoutingRegression(t *testing.T) {
	old := make([]bool, 20)
	worse := make([]bool, 20)
	for i := range old {
		old[i], worse[i] = true, i >= 9
	}
	// Rows 1-9 flipped to wrong, none the other way: McNemar's exact p =
	// 2/2^9 = 0.0039, a regression although every case passed. Tango's
	// bounds: Z(-0.658) = 1.961 and Z(-0.216) = -1.962 (b = 9, c = 0, n = 20).
	c := Compare(routingRun("old", old), routingRun("new", worse), DefaultThresholds())
	if !c.Verdict.Regressed || len(c.Verdict.Reasons) != 1 {
		t.Fatalf("verdict %+v, want one regression", c.Verdict)
	}
	want := "s/lexical: routing (lexical proxy): accuracy 100% -> 55% on 20 rows (difference -65.8pp to -21.6pp), 9 worse, 0 better (mcnemar-exact, p=0.004)"
	if got := c.Verdict.Reasons[0]; got != want {
		t.Errorf("reason\n got %s\nwant %s", got, want)
	}
	if got := c.Regressions(GroupKey{Scenario: "s", Model: "lexical"}); len(got) != 1 {
		t.Errorf("Regressions of the group = %q, want the routing line", got)
	}
	// One row flipped: within noise, a note.
	one := slices.Clone(old)
	one[0] = false
	c = Compare(routingRun("old", old), routingRun("new", one), DefaultThresholds())
	if c.Verdict.Regressed || len(c.Verdict.Notes) != 1 || !strings.Contains(c.Verdict.Notes[0], "1 worse, 0 better (mcnemar-exact, p=1.000): within noise") {
		t.Errorf("one flip: verdict %+v, want a note within noise", c.Verdict)
	}
}

func TestRoutingGates(t *testing.T) {
	base := fixture(t, "routing")
	next := fixture(t, "routing-new")
	parse := func(s, variant string) gate.Gate {
		g, err := gate.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if variant != "" {
			g.Variant = regexp.MustCompile("^(?:" + variant + ")$")
		}
		return g
	}
	gates := []gate.Gate{
		parse("routing_accuracy >= 0.8", ""),
		parse("recall:tickets__list_tickets >= 0.5", "a-terse"),
		// a-terse never chose list_tickets: its precision is undefined in
		// every group the gate matches.
		parse("precision:tickets__list_tickets >= 0.5", "a-terse"),
		parse("recall:no_tool >= 0.5", "b-verbose"),
		parse("confusions <= baseline", "b-verbose"),
		parse("macro_f1 >= 0.5", "c-none"),
	}
	var got []string
	for _, r := range EvaluateGates(next, gates, base) {
		got = append(got, map[bool]string{true: "pass ", false: "FAIL "}[r.Passed]+gateLine(r))
	}
	want := []string{
		"FAIL routing_accuracy >= 0.8: routing/a-terse/lexical: routing_accuracy = 60%, want >= 80%",
		"FAIL routing_accuracy >= 0.8: routing/a-terse/lexical +25 tools: routing_accuracy = 50%, want >= 80%",
		"pass routing_accuracy >= 0.8: routing/b-verbose/lexical: routing_accuracy = 90%, want >= 80%",
		"FAIL routing_accuracy >= 0.8: routing/b-verbose/lexical +25 tools: routing_accuracy = 77.8%, want >= 80%",
		"FAIL recall:tickets__list_tickets >= 0.5 [variant~a-terse]: routing/a-terse/lexical: recall:tickets__list_tickets = 0, want >= 0.5",
		"FAIL recall:tickets__list_tickets >= 0.5 [variant~a-terse]: routing/a-terse/lexical +25 tools: recall:tickets__list_tickets = 0, want >= 0.5",
		"FAIL precision:tickets__list_tickets >= 0.5 [variant~a-terse]: precision:tickets__list_tickets is undefined in every routing group it matches: tickets__list_tickets was never chosen",
		// Rows 6 and 7 expect no tool; the new run answers both right.
		"pass recall:no_tool >= 0.5 [variant~b-verbose]: routing/b-verbose/lexical: recall:no_tool = 1, want >= 0.5",
		"pass recall:no_tool >= 0.5 [variant~b-verbose]: routing/b-verbose/lexical +25 tools: recall:no_tool = 1, want >= 0.5",
		// One flip each way: as many confusions as the baseline's.
		"pass confusions <= baseline [variant~b-verbose]: routing/b-verbose/lexical: confusions = 1, want <= 1",
		"pass confusions <= baseline [variant~b-verbose]: routing/b-verbose/lexical +25 tools: confusions = 2, want <= 2",
		"FAIL macro_f1 >= 0.5 [variant~c-none]: no routing group (cases made from dataset rows) matches this gate",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gate results (-want +got):\n%s", diff)
	}
}

// TestRoutingSummaryJSONRoundTrip: the routing section read back from
// summary.json is the one written (less the per-row state, which only
// the records give), and gates check it the same.
func TestRoutingSummaryJSONRoundTrip(t *testing.T) {
	s := fixture(t, "routing")
	var buf bytes.Buffer
	if err := WriteSummaryJSON(&buf, s); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSummaryJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.Routing, back.Routing, cmpopts.IgnoreUnexported(RoutingStats{})); diff != "" {
		t.Errorf("routing read back (-written +read):\n%s", diff)
	}
	g, err := gate.Parse("recall:cmdb__get_asset >= 0.9")
	if err != nil {
		t.Fatal(err)
	}
	want, got := EvaluateGates(s, []gate.Gate{g}, nil), EvaluateGates(back, []gate.Gate{g}, nil)
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b gate.Gate) bool { return a.Text == b.Text })); diff != "" {
		t.Errorf("gates on the summary read back (-records +summary.json):\n%s", diff)
	}
	// Without rows, two summaries read back pair nothing.
	if ps := PairRuns(back.Routing, back.Routing, DefaultAlpha); len(ps) != 0 {
		t.Errorf("paired %d groups without rows", len(ps))
	}
}

// TestPairedRoutingRepeats: rows answered twice a side are compared by
// their pass rates, with the sign test and the paired Wald interval.
func TestPairedRoutingRepeats(t *testing.T) {
	// Per row, the passes of two repeats: base 2, 2, 1, 0; other 2, 1, 2, 2.
	// Rates 1, 1, .5, 0 and 1, .5, 1, 1: differences 0, -.5, .5, 1; row
	// 2 worse, rows 3 and 4 better; sign test 2·(1+3)/8 = 1; the Wald
	// interval of 0, -.5, .5, 1 is 0.25 ± 0.54783 (as TestPairedWald).
	passes := map[string][]int{"a": {2, 2, 1, 0}, "b": {2, 1, 2, 2}}
	run := &record.Run{Dir: "repeats"}
	for _, v := range []string{"a", "b"} {
		for i, p := range passes[v] {
			row := strconv.Itoa(i + 1)
			for rep := range 2 {
				ok := rep < p
				chosen := map[bool]string{true: "cmdb__get_asset", false: "cmdb__find_assets"}[ok]
				run.Records = append(run.Records, record.Record{
					CaseID: "s/" + v + "/m/" + row + "#" + strconv.Itoa(rep), Scenario: "s", Variant: v, Model: "m", Repeat: rep,
					Status: record.StatusPass, Route: route(row, []string{"cmdb__get_asset"}, chosen, ok),
				})
			}
		}
	}
	s := Aggregate(run)
	p := s.Routing.Paired[0]
	if !p.Repeated || p.Test != TestSign || p.Worse != 1 || p.Better != 2 || p.P != 1 {
		t.Errorf("repeated %v test %s worse %d better %d p %v; want true, %s, 1, 2, 1", p.Repeated, p.Test, p.Worse, p.Better, p.P, TestSign)
	}
	if d := p.Diff; d.Method != MethodWald || !near(d.Est, 0.25, 1e-12) || !near(d.Lo, -0.29783, 5e-5) || !near(d.Hi, 0.79783, 5e-5) {
		t.Errorf("difference = %+v, want 0.25 [-0.29783, 0.79783] by %s", d, MethodWald)
	}
	if len(p.Flips) != 3 || p.Flips[0].Row != "2" || p.Flips[0].Better {
		t.Fatalf("flips = %+v, want row 2 worse first", p.Flips)
	}
	if got := answerCell(p.Flips[0].Other).Text; got != "cmdb__get_asset ×1, cmdb__find_assets ×1 (1/2 right)" {
		t.Errorf("row 2's other answer reads %q", got)
	}
}
