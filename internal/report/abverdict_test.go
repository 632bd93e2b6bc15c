package report

import (
	"strings"
	"testing"
	"time"

	"github.com/hosteval/hosteval/internal/budget"
	"github.com/hosteval/hosteval/internal/record"
)

func TestABVerdict(t *testing.T) {
	base := &GroupStats{GroupKey: GroupKey{Scenario: "s", Variant: "a-terse", Model: "m"}}
	v := &GroupStats{GroupKey: GroupKey{Scenario: "s", Variant: "b-verbose", Model: "m"}}
	tokens := func(old, new float64) Change { return Change{Old: old, New: new, Exact: true} }
	// The figures of the default suite's routing A/B: 66 rows, 12 worse
	// and 1 better; McNemar's exact p = 2 * P(X <= 1), X ~ Bin(13, 0.5)
	// = 2 * 14/8192 = 0.0034.
	paired := func(distractors int, significant bool) *PairedRouting {
		return &PairedRouting{
			Base:  RouteKey{GroupKey: base.GroupKey, Distractors: distractors},
			Other: RouteKey{GroupKey: v.GroupKey, Distractors: distractors},
			Rows:  66, BaseAccuracy: 55.0 / 66, OtherAccuracy: 44.0 / 66,
			Worse: 12, Better: 1, P: 0.0034, Significant: significant,
		}
	}
	tests := []struct {
		name  string
		gc    GroupChange
		route *PairedRouting
		want  string
	}{
		{
			name: "pass rate decides",
			gc: GroupChange{
				PassRate:      Change{Old: 0.4, New: 1, OldN: 10, NewN: 10, Tested: true, P: 0.0108, Significant: true},
				ToolDefTokens: tokens(210, 520),
			},
			want: "verdict: b-verbose is better than a-terse: pass rate 100% (b-verbose) against 40% (a-terse), p=0.011; b-verbose sends 147.62% more tool-definition tokens per request (520 against 210)",
		},
		{
			name: "the baseline better, its calls slower",
			gc: GroupChange{
				PassRate: Change{Old: 1, New: 0.2, OldN: 10, NewN: 10, Tested: true, P: 0.0002, Significant: true},
				P95:      Change{Old: 900, New: 100, Tested: true, P: 0.0004, Significant: true, Shift: -1},
			},
			want: "verdict: a-terse is better than b-verbose: pass rate 20% (b-verbose) against 100% (a-terse), p<0.001; but its calls are slower (p<0.001)",
		},
		{
			name: "latency decides when pass rates do not differ",
			gc: GroupChange{
				PassRate:      Change{Old: 1, New: 1, OldN: 4, NewN: 4, Tested: true, P: 1},
				P95:           Change{Old: 713.9, New: 408.7, Tested: true, P: 0.0002, Significant: true, Shift: -1},
				ToolDefTokens: tokens(210, 210),
			},
			want: "verdict: b-verbose is better than a-terse: its calls are faster, p95 408.7 ms (b-verbose) against 713.9 ms (a-terse), p<0.001",
		},
		{
			name: "a significant latency within the minimum effect is noise",
			gc: GroupChange{
				PassRate: Change{Old: 1, New: 1, OldN: 4, NewN: 4, Tested: true, P: 1},
				P95:      Change{Old: 10, New: 10.5, Tested: true, P: 0.03, Significant: true, Small: true, Shift: 1},
			},
			want: "verdict: no significant difference between b-verbose and a-terse (pass rate p=1.000, call latency p=0.030)",
		},
		{
			name: "too few cases",
			gc: GroupChange{
				PassRate:      Change{Old: 1, New: 0, OldN: 1, NewN: 1},
				ToolDefTokens: tokens(425, 347),
			},
			want: "verdict: no significant difference between b-verbose and a-terse (too few cases to test: n=1+1); b-verbose sends 18.35% fewer tool-definition tokens per request (347 against 425)",
		},
		{
			name: "routing rows: the paired test decides, the pass rate follows",
			gc: GroupChange{
				PassRate:      Change{Old: 1, New: 1, OldN: 198, NewN: 198, Tested: true, P: 1},
				ToolDefTokens: tokens(1102, 691),
			},
			route: paired(0, true),
			want:  "verdict: a-terse routes better than b-verbose: accuracy 66.7% (b-verbose) against 83.3% (a-terse) on the same 66 rows without distractors, p=0.003; cases: no significant difference between b-verbose and a-terse (pass rate p=1.000); b-verbose sends 37.3% fewer tool-definition tokens per request (691 against 1102)",
		},
		{
			name:  "routing rows with distractors only, no difference",
			gc:    GroupChange{PassRate: Change{Old: 1, New: 1, OldN: 66, NewN: 66, Tested: true, P: 1}},
			route: paired(25, false),
			want:  "verdict: no significant difference in routing between b-verbose and a-terse: accuracy 66.7% (b-verbose) against 83.3% (a-terse) on the same 66 rows with 25 distractors, p=0.003; cases: no significant difference between b-verbose and a-terse (pass rate p=1.000)",
		},
	}
	for _, tt := range tests {
		if got := abVerdict(base, v, tt.gc, tt.route); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestABChanges(t *testing.T) {
	long := "Look up one host in the CMDB by its exact hostname."
	edited := "Look up one host in the CMDB by its hostname, briefly."
	other := "Get a host."
	texts := map[string]string{
		record.DescriptionHash(long): long, record.DescriptionHash(edited): edited,
		record.DescriptionHash(other): other, record.DescriptionHash("Be brief."): "Be brief.",
	}
	settings := func(f func(*record.Settings)) *record.Settings {
		s := &record.Settings{Protocol: "auto", Budgets: budget.Budgets{MaxSteps: 8, ToolTimeout: 10 * time.Second}, Elicitation: true,
			Descriptions: map[string]string{"cmdb__get_asset": record.DescriptionHash(long)}}
		if f != nil {
			f(s)
		}
		return s
	}
	group := func(variant string, s *record.Settings) *GroupStats {
		return &GroupStats{GroupKey: GroupKey{Scenario: "s", Variant: variant}, settings: s}
	}
	base := group("a", settings(nil))
	tests := []struct {
		name  string
		v     *GroupStats
		texts map[string]string
		want  string
	}{
		{"a word diff", group("b", settings(func(s *record.Settings) {
			s.Descriptions = map[string]string{"cmdb__get_asset": record.DescriptionHash(edited)}
		})), texts, `b changes: description of cmdb__get_asset: Look up one host in the CMDB by its [-exact hostname.-] {+hostname, briefly.+}`},
		{"a new text, a system prompt, budgets and lists", group("b", settings(func(s *record.Settings) {
			s.Descriptions = map[string]string{"cmdb__get_asset": record.DescriptionHash(other), "cmdb__find_assets": record.DescriptionHash(long)}
			s.System = record.DescriptionHash("Be brief.")
			s.MaxSteps = 4
			s.ToolTimeout = 2 * time.Second
			s.Allow = []string{"cmdb__get_asset"}
			s.Protocol = "legacy"
		})), texts, `b changes: description of cmdb__find_assets: the server's -> "Look up one host in the CMDB by its exact hostname."; ` +
			`description of cmdb__get_asset: "Look up one host in the CMDB by its exact hostname." -> "Get a host."; ` +
			`system prompt: none -> "Be brief."; allow none -> ["cmdb__get_asset"]; max_steps 8 -> 4; protocol "auto" -> "legacy"; tool_timeout_ms 10000 -> 2000`},
		{"texts not kept", group("b", settings(func(s *record.Settings) { s.System = record.DescriptionHash("Be brief.") })), nil,
			"b changes: system prompt (its text is not in run.json)"},
		{"nothing", group("b", settings(nil)), texts, "b changes: nothing the records keep (host settings, descriptions, system prompt)"},
		{"old records", group("b", nil), texts, "b changes: not recorded (records written before settings were)"},
	}
	for _, tt := range tests {
		if got := abChanges(base, tt.v, tt.texts); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestWordDiff(t *testing.T) {
	tests := []struct {
		a, b   string
		want   string
		wantOK bool
	}{
		{"get one host by name", "get one host by its exact name", "get one host by {+its exact+} name", true},
		{"a b c d", "a x c d", "a [-b-] {+x+} c d", true},
		{"a b c d", "a b c", "a b c [-d-]", true},
		{"Look up one host.", "Get a host.", "", false},
	}
	for _, tt := range tests {
		got, ok := wordDiff(tt.a, tt.b)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("wordDiff(%q, %q) = %q, %v; want %q, %v", tt.a, tt.b, got, ok, tt.want, tt.wantOK)
		}
	}
	if _, ok := wordDiff(strings.Repeat("w ", 300), strings.Repeat("w ", 300)); ok {
		t.Error("a diff of 300 x 300 words was tried")
	}
}

func TestPairedVariants(t *testing.T) {
	a := GroupKey{Scenario: "s", Variant: "a", Model: "m"}
	b := GroupKey{Scenario: "s", Variant: "b", Model: "m"}
	other := GroupKey{Scenario: "s", Variant: "a", Model: "n"}
	pair := func(base, other GroupKey, d int, differs string) PairedRouting {
		return PairedRouting{Base: RouteKey{base, d}, Other: RouteKey{other, d}, Differs: differs, Rows: 100 + d}
	}
	r := &Routing{Paired: []PairedRouting{
		pair(a, other, 0, "model"),
		pair(a, b, 50, "variant"),
		pair(a, b, 25, "variant"),
		pair(b, a, 0, "variant"),
	}}
	if got := r.pairedVariants(a, b); got == nil || got.Rows != 125 {
		t.Errorf("pairedVariants(a, b) = %+v, want the pair with 25 distractors (rows 125)", got)
	}
	if got := r.pairedVariants(a, GroupKey{Scenario: "t"}); got != nil {
		t.Errorf("pairedVariants of an unpaired group = %+v, want nil", got)
	}
	if got := (*Routing)(nil).pairedVariants(a, b); got != nil {
		t.Errorf("nil routing: %+v", got)
	}
}
