package report

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/table"
)

// DefaultAlpha is the significance level used when a Thresholds leaves
// Alpha zero.
const DefaultAlpha = 0.05

// Thresholds decide which changes between two runs are regressions.
//
// Pass rate and latency vary from run to run with a real model, so a change
// counts only when it is significant: pass rates with Fisher's exact test,
// call latency with the Mann-Whitney U test, both two-sided, and only when
// both runs have at least two cases of the group (a single case can't tell
// noise from change). With one case on either side any pass-rate drop
// counts, since a scripted model makes that case deterministic.
// Tool-definition tokens, result bytes and unknown tools are compared
// exactly: with a scripted model they do not vary at all.
//
// Latency also needs an effect larger than MinEffectPct: with thousands
// of calls a side, the U test finds the few percent by which two runs of
// one commit differ on a machine whose load comes and goes, a difference
// real but not the code's. The effect is the Hodges-Lehmann estimate of
// the ratio new/old ([HodgesLehmannRatio]).
//
// A negative limit turns its check off. The zero Thresholds is the
// strictest: any significant pass-rate drop, any growth of tokens, bytes or
// unknown tools, any significant slowdown of calls.
type Thresholds struct {
	// Alpha is the significance level; zero means DefaultAlpha.
	Alpha float64 `json:"alpha"`
	// PassRateDrop is the drop in pass rate (0.1 = ten points) that a
	// significant drop must exceed to count.
	PassRateDrop float64 `json:"pass_rate_drop"`
	// ToolDefTokensPct and ResultBytesPct are the growth in percent of the
	// per-request tool-definition tokens and of the mean result bytes per
	// case that is tolerated.
	ToolDefTokensPct float64 `json:"tool_def_tokens_pct"`
	ResultBytesPct   float64 `json:"result_bytes_pct"`
	// UnknownTools is the tolerated growth of unknown tools per case.
	UnknownTools float64 `json:"unknown_tools"`
	// MinEffectPct is the least slowdown of calls, in percent, that counts
	// (when significant): the confidence interval of the Hodges-Lehmann
	// ratio must lie wholly above 1 + MinEffectPct/100.
	MinEffectPct float64 `json:"min_effect_pct"`
	// P95LatencyPct is the growth in percent of p95 call latency that a
	// significant slowdown must also show to count (0: any growth); a
	// negative value turns the latency check off.
	P95LatencyPct float64 `json:"p95_latency_pct"`
}

// DefaultMinEffectPct is the least slowdown `hosteval compare` reports,
// chosen from the run-to-run noise of one commit measured on the shared
// 2-core machine it was built on (load average 10 to 22): between runs of
// 300 to 3,000 cases, one after the other, the Hodges-Lehmann ratio of
// call latency ranged from 0.68 to 1.46, the lower end of its interval
// reaching 1.37, while two runs at the same time stayed within 0.93 to
// 1.00. On a machine of one's own, -min-effect 10 is a fair start.
const DefaultMinEffectPct = 50

// DefaultThresholds are the thresholds `hosteval compare` uses unless told
// otherwise: any significant pass-rate drop, tool-definition tokens up more
// than 5%, result bytes up more than 10%, any new unknown tool, calls
// significantly slower by more than DefaultMinEffectPct.
func DefaultThresholds() Thresholds {
	return Thresholds{
		Alpha:            DefaultAlpha,
		ToolDefTokensPct: 5,
		ResultBytesPct:   10,
		MinEffectPct:     DefaultMinEffectPct,
	}
}

func (th Thresholds) alpha() float64 {
	if th.Alpha <= 0 {
		return DefaultAlpha
	}
	return th.Alpha
}

// Change is one metric of one group in two runs.
type Change struct {
	Old float64 `json:"old"`
	New float64 `json:"new"`
	// OldN and NewN count the samples behind each side: cases for pass
	// rate and the exact metrics, calls for latency.
	OldN int `json:"old_n"`
	NewN int `json:"new_n"`
	// Tested is set when a significance test ran; P is its p-value.
	Tested bool    `json:"tested"`
	P      float64 `json:"p,omitempty"`
	// Significant is set when Tested and P < alpha.
	Significant bool `json:"significant"`
	// Exact is set for metrics compared exactly, without a test.
	Exact bool `json:"exact"`
	// Shift is the direction the test found: +1 when new values tend to
	// be larger, -1 when smaller, 0 when untested or balanced.
	Shift int `json:"shift"`
	// Effect is, for latency, by what factor new calls take longer than
	// old ones, with its confidence interval (set when Tested).
	Effect *Ratio `json:"effect,omitempty"`
	// Small is set when the change is significant but its Effect within
	// the thresholds' minimum: noise of the machine, not a change.
	Small bool `json:"small,omitempty"`
}

// GroupChange is one scenario+variant+model in two runs.
type GroupChange struct {
	GroupKey
	InOld bool `json:"in_old"`
	InNew bool `json:"in_new"`
	// OldCases and NewCases count the repeats on each side.
	OldCases      int    `json:"old_cases"`
	NewCases      int    `json:"new_cases"`
	PassRate      Change `json:"pass_rate"`
	ToolDefTokens Change `json:"tool_def_tokens"`
	ResultBytes   Change `json:"result_bytes"`
	UnknownTools  Change `json:"unknown_tools"`
	P50           Change `json:"p50_call_ms"`
	P95           Change `json:"p95_call_ms"`
}

// Regressions are the reasons of c's verdict about the group k.
func (c *Comparison) Regressions(k GroupKey) []string {
	prefix := k.String() + ": "
	var out []string
	for _, r := range c.Verdict.Reasons {
		if strings.HasPrefix(r, prefix) {
			out = append(out, strings.TrimPrefix(r, prefix))
		}
	}
	return out
}

// Vanished reports whether the group ran in the old run only.
func (g *GroupChange) Vanished() bool { return g.InOld && !g.InNew }

// Appeared reports whether the group ran in the new run only.
func (g *GroupChange) Appeared() bool { return g.InNew && !g.InOld }

// Verdict is the outcome of a comparison or a gate check.
type Verdict struct {
	Regressed bool `json:"regressed"`
	// Reasons name each regression, one line each.
	Reasons []string `json:"reasons"`
	// Notes are worth knowing but are not regressions (a group that
	// appeared in the new run, a change within noise).
	Notes []string `json:"notes"`
	// Unchecked name the checks that could not be made because of the
	// run's configuration (a cost gate on a model without a price): a
	// configuration error (exit 2), not a regression alone.
	Unchecked []string `json:"unchecked,omitempty"`
}

// Comparison is two runs side by side, benchstat style. Its groups are
// listed in reading order: those that vanished from the new run first, then
// those that appeared in it, then the rest, each part sorted by scenario,
// variant and model.
type Comparison struct {
	OldID      string        `json:"old_run"`
	NewID      string        `json:"new_run"`
	Thresholds Thresholds    `json:"thresholds"`
	Groups     []GroupChange `json:"groups"`
	// Routing pairs the routing groups of the two runs by row id: the
	// same rows answered in each (see PairRuns).
	Routing []PairedRouting `json:"routing,omitempty"`
	Verdict Verdict         `json:"verdict"`
}

// Compare compares every scenario+variant+model present in either run and
// decides, with th, whether new regressed from old. A group that vanished
// from the new run is a regression (a scenario that stopped running tests
// nothing); one that appeared is a note. Latency is tested only between
// summaries from Aggregate: one read from summary.json has no latency
// samples, and its latency is reported untested.
func Compare(old, new *Summary, th Thresholds) *Comparison {
	c := &Comparison{OldID: old.RunID, NewID: new.RunID, Thresholds: th}
	i, j := 0, 0
	for i < len(old.Groups) || j < len(new.Groups) {
		var o, n *GroupStats
		switch {
		case j >= len(new.Groups):
			o = &old.Groups[i]
			i++
		case i >= len(old.Groups):
			n = &new.Groups[j]
			j++
		default:
			switch d := old.Groups[i].GroupKey.compare(new.Groups[j].GroupKey); {
			case d < 0:
				o = &old.Groups[i]
				i++
			case d > 0:
				n = &new.Groups[j]
				j++
			default:
				o, n = &old.Groups[i], &new.Groups[j]
				i++
				j++
			}
		}
		c.Groups = append(c.Groups, compareGroups(o, n, th))
	}
	// Groups that vanished or appeared lead: they change what is tested.
	slices.SortStableFunc(c.Groups, func(a, b GroupChange) int {
		return cmp.Compare(presence(&a), presence(&b))
	})
	for i := range c.Groups {
		judge(&c.Verdict, &c.Groups[i], th)
	}
	c.Routing = PairRuns(old.Routing, new.Routing, th.alpha())
	for i := range c.Routing {
		judgeRouting(&c.Verdict, &c.Routing[i], th)
	}
	return c
}

// judgeRouting adds a routing group's regression to v: its accuracy on
// the same rows fell, significantly by the paired test. Rows that
// flipped without a significant change are a note.
func judgeRouting(v *Verdict, p *PairedRouting, th Thresholds) {
	// The reason starts with the group's name, as Regressions reads it.
	name := p.Base.GroupKey.String() + ": routing"
	if p.Base.Distractors > 0 {
		name += " with " + strconv.Itoa(p.Base.Distractors) + " distractors"
	}
	if p.BaseLexical || p.OtherLexical {
		name += " (lexical proxy)"
	}
	what := fmt.Sprintf("accuracy %s -> %s on %d rows (difference %s to %s), %d worse, %d better (%s, %s)",
		fmtPct(p.BaseAccuracy), fmtPct(p.OtherAccuracy), p.Rows, fmtPP(p.Diff.Lo), fmtPP(p.Diff.Hi), p.Worse, p.Better, p.Test, FormatP(p.P))
	switch {
	case th.PassRateDrop < 0 || p.Worse == 0:
	case p.Significant && p.Diff.Est < 0 && -p.Diff.Est > th.PassRateDrop:
		v.Regressed = true
		v.Reasons = append(v.Reasons, name+": "+what)
	default:
		v.Notes = append(v.Notes, name+": "+what+": within noise")
	}
}

// presence orders groups for reading: vanished, appeared, in both runs.
func presence(g *GroupChange) int {
	switch {
	case g.Vanished():
		return 0
	case g.Appeared():
		return 1
	}
	return 2
}

func compareGroups(o, n *GroupStats, th Thresholds) GroupChange {
	alpha := th.alpha()
	var gc GroupChange
	if o != nil {
		gc.GroupKey, gc.InOld, gc.OldCases = o.GroupKey, true, o.Cases
	}
	if n != nil {
		gc.GroupKey, gc.InNew, gc.NewCases = n.GroupKey, true, n.Cases
	}
	if o == nil || n == nil {
		return gc
	}
	gc.PassRate = passChange(o.Passed, o.Cases, n.Passed, n.Cases, alpha)
	gc.ToolDefTokens = exactChange(float64(o.ToolDefTokens), float64(n.ToolDefTokens), o.Cases, n.Cases)
	gc.ResultBytes = exactChange(o.MeanResultBytes, n.MeanResultBytes, o.Cases, n.Cases)
	gc.UnknownTools = exactChange(float64(o.UnknownTools)/float64(o.Cases), float64(n.UnknownTools)/float64(n.Cases), o.Cases, n.Cases)
	gc.P50, gc.P95 = latencyChanges(o, n, alpha, th.MinEffectPct)
	return gc
}

// passChange compares pass rates; with two or more cases on each side
// Fisher's exact test decides whether the change is significant.
func passChange(oldPass, oldN, newPass, newN int, alpha float64) Change {
	ch := Change{
		Old: float64(oldPass) / float64(oldN), New: float64(newPass) / float64(newN),
		OldN: oldN, NewN: newN,
	}
	if oldN >= 2 && newN >= 2 {
		ch.Tested = true
		ch.P = FisherExact(oldPass, oldN-oldPass, newPass, newN-newPass)
		ch.Significant = ch.P < alpha
	}
	return ch
}

func exactChange(old, new float64, oldN, newN int) Change {
	return Change{Old: old, New: new, OldN: oldN, NewN: newN, Exact: true}
}

// latencyChanges compares call latency. The test is one Mann-Whitney U test
// over the pooled calls of each side, shared by p50 and p95: it asks
// whether calls in one run tend to take longer, which is what a shift of
// either percentile means; the effect, with its interval, is the
// Hodges-Lehmann ratio. They run only with two or more cases a side. A
// significant effect is Small unless its whole interval lies beyond
// minEffectPct percent (slower) or its inverse (faster).
func latencyChanges(o, n *GroupStats, alpha, minEffectPct float64) (p50, p95 Change) {
	p50 = Change{Old: o.Latency.P50, New: n.Latency.P50, OldN: o.Latency.N, NewN: n.Latency.N}
	p95 = Change{Old: o.Latency.P95, New: n.Latency.P95, OldN: o.Latency.N, NewN: n.Latency.N}
	// A summary read back from summary.json has no samples: no test then.
	if o.Cases >= 2 && n.Cases >= 2 && len(o.callMS) > 0 && len(n.callMS) > 0 {
		// U counts the pairs in which the old call was slower.
		u, p := MannWhitneyU(o.callMS, n.callMS)
		half := float64(len(o.callMS)*len(n.callMS)) / 2
		shift := 0
		switch {
		case u < half:
			shift = 1
		case u > half:
			shift = -1
		}
		effect := HodgesLehmannRatio(o.callMS, n.callMS, alpha)
		// Beyond the minimum means surely beyond it: the whole interval.
		m := math.Log1p(max(minEffectPct, 0) / 100)
		small := math.Log(effect.Lo) <= m && math.Log(effect.Hi) >= -m
		for _, ch := range []*Change{&p50, &p95} {
			ch.Tested = true
			ch.P = p
			ch.Significant = p < alpha
			ch.Shift = shift
			ch.Effect = &effect
			ch.Small = ch.Significant && small
		}
	}
	return p50, p95
}

// judge adds gc's regressions to v.
func judge(v *Verdict, gc *GroupChange, th Thresholds) {
	name := gc.GroupKey.String()
	switch {
	case !gc.InNew:
		v.Regressed = true
		v.Reasons = append(v.Reasons, fmt.Sprintf("%s: vanished: in the old run only (n=%d+0)", name, gc.OldCases))
		return
	case !gc.InOld:
		v.Notes = append(v.Notes, fmt.Sprintf("%s: only in the new run", name))
		return
	}
	regress := func(format string, args ...any) {
		v.Regressed = true
		v.Reasons = append(v.Reasons, name+": "+fmt.Sprintf(format, args...))
	}
	pr := gc.PassRate
	drop := pr.Old - pr.New
	switch {
	case th.PassRateDrop < 0 || drop <= 0:
	case !pr.Tested:
		regress("pass rate %s -> %s (n=%d+%d, untested: any drop counts)", fmtPct(pr.Old), fmtPct(pr.New), pr.OldN, pr.NewN)
	case pr.Significant && drop > th.PassRateDrop:
		regress("pass rate %s -> %s (%s n=%d+%d)", fmtPct(pr.Old), fmtPct(pr.New), FormatP(pr.P), pr.OldN, pr.NewN)
	case !pr.Significant:
		v.Notes = append(v.Notes, fmt.Sprintf("%s: pass rate %s -> %s is within noise (%s n=%d+%d)", name, fmtPct(pr.Old), fmtPct(pr.New), FormatP(pr.P), pr.OldN, pr.NewN))
	}
	if grewBeyond(gc.ToolDefTokens, th.ToolDefTokensPct) {
		regress("tool-definition tokens per request %s -> %s (%s, limit +%s%%)", fmtFloat(gc.ToolDefTokens.Old), fmtFloat(gc.ToolDefTokens.New), fmtRel(gc.ToolDefTokens.Old, gc.ToolDefTokens.New), fmtFloat(th.ToolDefTokensPct))
	}
	if grewBeyond(gc.ResultBytes, th.ResultBytesPct) {
		regress("result bytes per case %s -> %s (%s, limit +%s%%)", fmtFloat(gc.ResultBytes.Old), fmtFloat(gc.ResultBytes.New), fmtRel(gc.ResultBytes.Old, gc.ResultBytes.New), fmtFloat(th.ResultBytesPct))
	}
	if u := gc.UnknownTools; th.UnknownTools >= 0 && u.New-u.Old > th.UnknownTools {
		regress("unknown tools per case %s -> %s", fmtFloat(u.Old), fmtFloat(u.New))
	}
	// Latency regresses when calls got significantly slower overall, by
	// more than the minimum effect, and the p95 grew beyond its limit: a
	// heavier tail on calls that are faster overall is not a slowdown the
	// test has shown, and a slowdown of a few percent is the machine's.
	l := gc.P95
	switch {
	case th.P95LatencyPct < 0 || !l.Significant || l.Shift <= 0 || l.Effect == nil:
	case l.Small:
		v.Notes = append(v.Notes, fmt.Sprintf("%s: call latency %s, %s n=%d+%d calls) is within the minimum effect of %s%%",
			name, fmtEffect(*l.Effect, th.alpha()), FormatP(l.P), l.OldN, l.NewN, fmtFloat(th.MinEffectPct)))
	case grewBeyond(l, th.P95LatencyPct) || (th.P95LatencyPct == 0 && l.New >= l.Old):
		regress("call latency %s, %s n=%d+%d calls, p95 %s ms -> %s ms; limit +%s%%)",
			fmtEffect(*l.Effect, th.alpha()), FormatP(l.P), l.OldN, l.NewN, fmtMS(l.Old), fmtMS(l.New), fmtFloat(th.MinEffectPct))
	}
}

// fmtEffect prints a ratio as a change with its interval at 1-alpha, and
// leaves the parenthesis open: "+23.1% (95% CI +18.0% to +28.4%".
func fmtEffect(r Ratio, alpha float64) string {
	pct := func(x float64) string {
		s := strconv.FormatFloat((x-1)*100, 'f', 1, 64)
		if x >= 1 {
			s = "+" + s
		}
		return s + "%"
	}
	return fmt.Sprintf("%s (%s%% CI %s to %s", pct(r.Est), fmtFloat(100*(1-alpha)), pct(r.Lo), pct(r.Hi))
}

// grewBeyond reports whether ch grew by more than pct percent; pct < 0
// turns the check off. Growth from zero is always beyond.
func grewBeyond(ch Change, pct float64) bool {
	if pct < 0 || ch.New <= ch.Old {
		return false
	}
	if ch.Old == 0 {
		return true
	}
	return (ch.New-ch.Old)/ch.Old*100 > pct
}

// fmtRel prints the relative change from old to new: "+12.5%", "-3%", or
// the absolute change when old is zero.
func fmtRel(old, new float64) string {
	if old == 0 {
		if new == 0 {
			return "0%"
		}
		return signed(new) + " from 0"
	}
	return signed((new-old)/old*100) + "%"
}

func signed(x float64) string {
	s := fmtFloat(x)
	if x > 0 && s != "0" {
		s = "+" + s
	}
	return s
}

// Tables returns the tables of the comparison: one per metric
// (MetricTables), then those of the routing rows both runs answered.
func (c *Comparison) Tables() []*Table {
	return append(c.MetricTables(), pairedTables(c.Routing, "Routing, old -> new", textLimits)...)
}

// MetricTables returns one table per metric, benchstat style, with a row
// per group of c.Groups in their order: each group's old and new value,
// the change, and the test behind it. A change that is not significant
// shows as "~". The columns are named old and new, so that a table fits a
// terminal whatever the run IDs; the first table's note names the runs.
func (c *Comparison) MetricTables() []*Table {
	type metric struct {
		title string
		get   func(*GroupChange) Change
		cell  func(float64) Cell
		delta func(Change) Cell
	}
	metrics := []metric{
		{"pass rate", func(g *GroupChange) Change { return g.PassRate }, pctCell, passDelta},
		{"tool-definition tokens per request", func(g *GroupChange) Change { return g.ToolDefTokens }, floatCell, relDelta},
		{"result bytes per case", func(g *GroupChange) Change { return g.ResultBytes }, floatCell, relDelta},
		{"unknown tools per case", func(g *GroupChange) Change { return g.UnknownTools }, floatCell, absDelta},
		{"call latency p50 (ms)", func(g *GroupChange) Change { return g.P50 }, msCell, relDelta},
		{"call latency p95 (ms)", func(g *GroupChange) Change { return g.P95 }, msCell, relDelta},
	}
	var tables []*Table
	for _, m := range metrics {
		t := &Table{
			Title: m.title,
			Columns: []Column{
				{Name: "scenario"}, {Name: "old", Right: true, Priority: 1}, {Name: "new", Right: true},
				{Name: "vs old", Right: true}, {Name: "test", Priority: 2},
			},
		}
		for i := range c.Groups {
			g := &c.Groups[i]
			row := []Cell{textCell(g.GroupKey.String())}
			if !g.InOld || !g.InNew {
				missing := textCell("-")
				oldCell, newCell, delta := missing, missing, textCell("")
				if g.InOld {
					oldCell = textCell("present")
					delta = textCell("vanished")
					delta.Bad = true
				} else {
					newCell = textCell("present")
					delta = textCell("new")
				}
				row = append(row, oldCell, newCell, delta, noteCell(fmt.Sprintf("(n=%d+%d)", g.OldCases, g.NewCases)))
				t.Rows = append(t.Rows, row)
				continue
			}
			ch := m.get(g)
			oldCell, newCell := m.cell(ch.Old), m.cell(ch.New)
			if !ch.Exact && !ch.Tested && ch.OldN == 0 {
				oldCell = textCell("-")
			}
			if !ch.Exact && !ch.Tested && ch.NewN == 0 {
				newCell = textCell("-")
			}
			row = append(row, oldCell, newCell, m.delta(ch), changeNote(ch))
			t.Rows = append(t.Rows, row)
		}
		tables = append(tables, t)
	}
	tables[0].Notes = append(tables[0].Notes, "old: run "+c.OldID+"; new: run "+c.NewID)
	return tables
}

// changeNote says what stands behind a change: the test and the samples.
func changeNote(ch Change) Cell {
	switch {
	case ch.Exact:
		return noteCell(fmt.Sprintf("(exact n=%d+%d)", ch.OldN, ch.NewN))
	case ch.Tested && ch.Effect != nil:
		e := ch.Effect
		return noteCell(fmt.Sprintf("(%s n=%d+%d, x%s [%s, %s])", FormatP(ch.P), ch.OldN, ch.NewN,
			fmtRatio(e.Est), fmtRatio(e.Lo), fmtRatio(e.Hi)))
	case ch.Tested:
		return noteCell(fmt.Sprintf("(%s n=%d+%d)", FormatP(ch.P), ch.OldN, ch.NewN))
	}
	return noteCell(fmt.Sprintf("(n=%d+%d)", ch.OldN, ch.NewN))
}

// passDelta is the pass-rate change in percentage points, "~" when a test
// found it within noise.
func passDelta(ch Change) Cell {
	d := (ch.New - ch.Old) * 100
	if ch.Tested && !ch.Significant {
		return table.Delta("~", d, table.Noise, false)
	}
	return table.Delta(signed(d)+"pp", d, significance(ch), d < 0)
}

func fmtRatio(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// relDelta is a relative change, "~" when a test found it within noise
// (not significant, or an effect under the minimum).
func relDelta(ch Change) Cell {
	d := ch.New - ch.Old
	switch {
	case ch.Tested && (!ch.Significant || ch.Small):
		return table.Delta("~", d, table.Noise, false)
	case !ch.Tested && !ch.Exact:
		// Latency with too few cases: show the figures, claim nothing.
		return table.Delta("?", d, table.Untested, false)
	}
	return table.Delta(fmtRel(ch.Old, ch.New), d, significance(ch), ch.New > ch.Old)
}

func absDelta(ch Change) Cell {
	d := ch.New - ch.Old
	return table.Delta(signed(d), d, significance(ch), d > 0)
}

// significance says what stands behind ch.
func significance(ch Change) table.Significance {
	switch {
	case ch.Exact:
		return table.Exact
	case !ch.Tested:
		return table.Untested
	case ch.Significant:
		return table.Significant
	}
	return table.Noise
}

// CompareSchema is the version of the JSON that WriteCompareJSON writes.
// Adding a field is compatible; renaming or removing one needs a new version.
const CompareSchema = 1

// WriteCompareJSON writes c as one indented JSON document: schema, old_run,
// new_run, thresholds, groups (in c's order, each with in_old, in_new,
// old_cases, new_cases and a change per metric: old, new, old_n, new_n,
// tested, p, significant, exact, shift) and verdict (regressed, reasons,
// notes).
func WriteCompareJSON(w io.Writer, c *Comparison) error {
	doc := struct {
		Schema int `json:"schema"`
		*Comparison
	}{CompareSchema, c}
	return writeJSON(w, doc, "comparison")
}
