package report

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// rowTable holds a routing group's outcomes by row id, for the paired
// tests. Its size is per row, not per case: a rowOutcome and its index
// entry (about 120 bytes, the row id and answers interned across groups)
// for each row of each group, plus 24 bytes for each other answer a
// repeated row got; 10,000 rows in 6 groups keep about 7 MB.
type rowTable struct {
	index map[string]int32
	rows  []rowOutcome
}

// rowOutcome is how one row fared in one group.
type rowOutcome struct {
	row      string
	expected string // the expected tools, joined by ","
	n, pass  int32
	// first is the first choice made and how often; more are the other
	// choices of a repeated row, in the order first seen.
	first choiceCount
	more  []choiceCount
}

type choiceCount struct {
	chosen string
	n      int32
}

func newRowTable() *rowTable { return &rowTable{index: map[string]int32{}} }

// add adds a case of row; expected is the row's tools joined by ",".
func (t *rowTable) add(row, expected string, correct bool, chosen string) {
	i, ok := t.index[row]
	if !ok {
		i = int32(len(t.rows))
		t.index[row] = i
		t.rows = append(t.rows, rowOutcome{row: row, expected: expected})
	}
	o := &t.rows[i]
	o.n++
	if correct {
		o.pass++
	}
	if o.first.n == 0 || o.first.chosen == chosen {
		o.first.chosen = chosen
		o.first.n++
		return
	}
	for j := range o.more {
		if o.more[j].chosen == chosen {
			o.more[j].n++
			return
		}
	}
	o.more = append(o.more, choiceCount{chosen, 1})
}

// PairedRouting compares two routing groups row by row over the rows both
// answered: the difference in accuracy with its 95% interval, the test of
// whether one does better, and the rows that flipped.
//
// Rows answered once on each side are pass/fail pairs: the test is
// McNemar's exact test (the exact binomial test on the discordant rows)
// and the interval Tango's score interval (TangoPaired). Rows answered
// several times (repeats) have a pass rate each side: the test is the
// exact sign test on the rows whose rate differs and the interval the
// paired Wald interval of the per-row differences (PairedWald).
type PairedRouting struct {
	Base  RouteKey `json:"base"`
	Other RouteKey `json:"other"`
	// Differs says what sets the two apart: "variant", "model", or "run"
	// for two runs compared.
	Differs string `json:"differs"`
	// BaseLexical and OtherLexical mark the lexical router's groups.
	BaseLexical  bool `json:"base_lexical,omitempty"`
	OtherLexical bool `json:"other_lexical,omitempty"`
	// Rows are the rows both answered; OnlyBase and OnlyOther those one
	// side alone answered, which the test leaves out.
	Rows      int  `json:"rows"`
	OnlyBase  int  `json:"only_base"`
	OnlyOther int  `json:"only_other"`
	Repeated  bool `json:"repeated"`
	// BaseAccuracy and OtherAccuracy are the mean pass rates over the
	// paired rows; Diff is Other - Base.
	BaseAccuracy  float64  `json:"base_accuracy"`
	OtherAccuracy float64  `json:"other_accuracy"`
	Diff          Interval `json:"difference"`
	// Worse counts the rows that did better on the base side, Better those
	// that did better on the other.
	Worse  int `json:"worse"`
	Better int `json:"better"`
	// Test is TestMcNemar or TestSign; P its two-sided p-value.
	Test        string  `json:"test"`
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
	// Flips are the rows that did worse, then those that did better, each
	// in row order, at most ListedCases of each.
	Flips []Flip `json:"flips"`
}

// Tests of a paired comparison.
const (
	TestMcNemar = "mcnemar-exact"
	TestSign    = "sign-test-exact"
)

// Flip is a row that did better on one side than on the other, with what
// each side chose.
type Flip struct {
	Row      string   `json:"row"`
	Expected []string `json:"expected"`
	// Better is set when the row did better on the other side.
	Better bool      `json:"better"`
	Base   RowAnswer `json:"base"`
	Other  RowAnswer `json:"other"`
}

// RowAnswer is how a row fared on one side: passes of answers, and what
// was chosen, most often first.
type RowAnswer struct {
	Passed int           `json:"passed"`
	N      int           `json:"n"`
	Chosen []ChoiceCount `json:"chosen"`
}

// ChoiceCount is a choice and how often it was made.
type ChoiceCount struct {
	Tool string `json:"tool"`
	N    int    `json:"n"`
}

// String is the choice, or choices with their counts: "a", "a ×2, b ×1".
func (a RowAnswer) String() string {
	if len(a.Chosen) == 1 && a.N == 1 {
		return a.Chosen[0].Tool
	}
	parts := make([]string, len(a.Chosen))
	for i, c := range a.Chosen {
		parts[i] = c.Tool + " ×" + strconv.Itoa(c.N)
	}
	return strings.Join(parts, ", ")
}

func answerOf(o *rowOutcome) RowAnswer {
	a := RowAnswer{Passed: int(o.pass), N: int(o.n), Chosen: make([]ChoiceCount, 0, 1+len(o.more))}
	for _, c := range append([]choiceCount{o.first}, o.more...) {
		a.Chosen = append(a.Chosen, ChoiceCount{Tool: c.chosen, N: int(c.n)})
	}
	slices.SortStableFunc(a.Chosen, func(x, y ChoiceCount) int { return cmp.Compare(y.N, x.N) })
	return a
}

// pairRows compares base and other over the rows both answered.
func pairRows(base, other *RoutingStats, differs string, alpha float64) PairedRouting {
	p := PairedRouting{
		Base: base.RouteKey, Other: other.RouteKey, Differs: differs,
		BaseLexical: base.Lexical, OtherLexical: other.Lexical, Flips: []Flip{},
	}
	bt, ot := base.rows, other.rows
	var diffs []float64
	var worse, better []Flip
	for i := range bt.rows {
		bo := &bt.rows[i]
		j, ok := ot.index[bo.row]
		if !ok {
			p.OnlyBase++
			continue
		}
		oo := &ot.rows[j]
		p.Rows++
		rb := float64(bo.pass) / float64(bo.n)
		ro := float64(oo.pass) / float64(oo.n)
		p.BaseAccuracy += rb
		p.OtherAccuracy += ro
		diffs = append(diffs, ro-rb)
		if bo.n > 1 || oo.n > 1 {
			p.Repeated = true
		}
		if rb == ro {
			continue
		}
		f := Flip{Row: bo.row, Expected: splitTools(bo.expected), Better: ro > rb, Base: answerOf(bo), Other: answerOf(oo)}
		if f.Better {
			p.Better++
			better = append(better, f)
		} else {
			p.Worse++
			worse = append(worse, f)
		}
	}
	for i := range ot.rows {
		if _, ok := bt.index[ot.rows[i].row]; !ok {
			p.OnlyOther++
		}
	}
	if p.Rows > 0 {
		p.BaseAccuracy /= float64(p.Rows)
		p.OtherAccuracy /= float64(p.Rows)
	}
	if p.Repeated {
		p.Test, p.Diff = TestSign, PairedWald(diffs)
	} else {
		p.Test, p.Diff = TestMcNemar, TangoPaired(p.Worse, p.Better, p.Rows)
	}
	p.P = SignTest(p.Worse, p.Better)
	p.Significant = p.P < alpha
	for _, fs := range [][]Flip{worse, better} {
		slices.SortFunc(fs, func(x, y Flip) int { return rowOrder(x.Row, y.Row) })
		p.Flips = append(p.Flips, fs[:min(len(fs), ListedCases)]...)
	}
	return p
}

func splitTools(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

// rowOrder sorts row ids as numbers when both are (a row's default id is
// its line), else as text.
func rowOrder(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return cmp.Compare(a, b)
}

// pairedWithin pairs the groups of one scenario and catalog size that
// answered the same rows: the variants of each model, each against the
// variant whose name sorts first (as in the A/B tables), and the models
// of each variant, each against the model whose name sorts first.
func pairedWithin(groups []RoutingStats) []PairedRouting {
	type arm struct {
		scenario    string
		distractors int
		fixed       string // the model of a variant pair, the variant of a model pair
	}
	byVariant := map[arm][]*RoutingStats{} // arms that differ by variant
	byModel := map[arm][]*RoutingStats{}
	for i := range groups {
		g := &groups[i]
		if g.rows == nil {
			continue
		}
		byVariant[arm{g.Scenario, g.Distractors, g.Model}] = append(byVariant[arm{g.Scenario, g.Distractors, g.Model}], g)
		byModel[arm{g.Scenario, g.Distractors, g.Variant}] = append(byModel[arm{g.Scenario, g.Distractors, g.Variant}], g)
	}
	out := []PairedRouting{}
	pair := func(m map[arm][]*RoutingStats, differs string, order func(a, b *RoutingStats) int) {
		for _, k := range slices.SortedFunc(maps.Keys(m), func(a, b arm) int {
			return cmp.Or(cmp.Compare(a.scenario, b.scenario), cmp.Compare(a.distractors, b.distractors), cmp.Compare(a.fixed, b.fixed))
		}) {
			gs := m[k]
			if len(gs) < 2 {
				continue
			}
			slices.SortFunc(gs, order)
			for _, g := range gs[1:] {
				out = append(out, pairRows(gs[0], g, differs, DefaultAlpha))
			}
		}
	}
	pair(byVariant, "variant", func(a, b *RoutingStats) int { return cmp.Compare(a.Variant, b.Variant) })
	pair(byModel, "model", func(a, b *RoutingStats) int { return cmp.Compare(a.Model, b.Model) })
	slices.SortStableFunc(out, func(a, b PairedRouting) int {
		return cmp.Or(cmp.Compare(a.Base.Scenario, b.Base.Scenario), cmp.Compare(a.Base.Distractors, b.Base.Distractors))
	})
	return out
}

// PairRuns pairs the routing groups of two runs by row id: each group of
// old with the same group of new (scenario, variant, model and catalog
// size), as Compare does. Groups without rows (read from summary.json)
// are left out.
func PairRuns(old, new *Routing, alpha float64) []PairedRouting {
	if old == nil || new == nil {
		return nil
	}
	var out []PairedRouting
	for i := range old.Groups {
		o := &old.Groups[i]
		n := new.Group(o.RouteKey)
		if n == nil || o.rows == nil || n.rows == nil {
			continue
		}
		out = append(out, pairRows(o, n, "run", alpha))
	}
	return out
}

// TargetResult is, for one scenario and model, the configuration (variant
// and catalog size) with the fewest tool-definition tokens per request
// whose accuracy reaches the scenario's target.
type TargetResult struct {
	Scenario string  `json:"scenario"`
	Model    string  `json:"model"`
	Target   float64 `json:"target"`
	// Configurations counts the groups measured.
	Configurations int `json:"configurations"`
	// Reached is that configuration; nil when none reached the target.
	Reached   *RouteKey `json:"reached"`
	Accuracy  float64   `json:"accuracy,omitempty"`
	DefTokens float64   `json:"def_tokens,omitempty"`
	Tools     int       `json:"tools,omitempty"`
}

// targetsOf finds, for each scenario and model whose groups name a
// target, the configuration that reaches it with the fewest tokens (ties:
// the more accurate, then the first by name). A configuration reaches it
// when its measured accuracy (not its interval's lower bound) is at least
// the target.
func targetsOf(groups []RoutingStats) []TargetResult {
	out := []TargetResult{}
	type key struct{ scenario, model string }
	byKey := map[key]*TargetResult{}
	var keys []key
	for i := range groups {
		g := &groups[i]
		k := key{g.Scenario, g.Model}
		t, ok := byKey[k]
		if !ok {
			t = &TargetResult{Scenario: g.Scenario, Model: g.Model}
			byKey[k] = t
			keys = append(keys, k)
		}
		t.Target = max(t.Target, g.Target)
		t.Configurations++
	}
	for i := range groups {
		g := &groups[i]
		t := byKey[key{g.Scenario, g.Model}]
		if t.Target <= 0 || g.Cases == 0 || g.Accuracy.Value < t.Target {
			continue
		}
		if t.Reached == nil || g.DefTokens < t.DefTokens || (g.DefTokens == t.DefTokens && g.Accuracy.Value > t.Accuracy) {
			k := g.RouteKey
			t.Reached, t.Accuracy, t.DefTokens, t.Tools = &k, g.Accuracy.Value, g.DefTokens, g.Tools
		}
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.scenario, b.scenario), cmp.Compare(a.model, b.model)) })
	for _, k := range keys {
		if t := byKey[k]; t.Target > 0 {
			out = append(out, *t)
		}
	}
	return out
}

// pairedVariants is the paired comparison of two variants of one scenario
// and model over the same rows, with the fewest distractors (the catalog
// as the scenario gives it), or nil when they answered no dataset rows.
func (r *Routing) pairedVariants(base, other GroupKey) *PairedRouting {
	if r == nil {
		return nil
	}
	var best *PairedRouting
	for i := range r.Paired {
		p := &r.Paired[i]
		if p.Differs != "variant" || p.Base.GroupKey != base || p.Other.GroupKey != other || p.Base.Distractors != p.Other.Distractors {
			continue
		}
		if best == nil || p.Base.Distractors < best.Base.Distractors {
			best = p
		}
	}
	return best
}
