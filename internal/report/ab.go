package report

import (
	"cmp"
	"fmt"
	"slices"
)

// ABTables returns, for every scenario and model run with several variants,
// a table of the variants side by side, each compared with the baseline
// with the same rules as Compare: pass rate by Fisher's exact test and
// call latency by the Mann-Whitney U test when both have two or more
// cases ("~" when not significant), tool-definition tokens exactly. Its
// notes give, for each variant, a verdict line naming the better one where
// a difference is significant ("no significant difference" otherwise;
// for dataset rows, routing accuracy by the paired test first) and
// what the variant changes against the baseline: its tool descriptions and
// system prompt (a word diff when run.json has the texts) and its host
// settings, from the records.
//
// The baseline is the variant whose name sorts first: records do not keep
// the order of variants in the scenario file, and a run's output must not
// depend on the order in which cases finished. Name variants so that the
// baseline sorts first (e.g. "a-terse", "b-verbose").
func ABTables(s *Summary) []*Table {
	var texts map[string]string
	if s.Run != nil {
		texts = s.Run.Texts
	}
	type key struct{ scenario, model string }
	byKey := make(map[key][]*GroupStats)
	var keys []key
	for i := range s.Groups {
		g := &s.Groups[i]
		k := key{g.Scenario, g.Model}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], g)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.scenario, b.scenario), cmp.Compare(a.model, b.model))
	})
	var tables []*Table
	for _, k := range keys {
		groups := byKey[k]
		if len(groups) < 2 {
			continue
		}
		// Groups are sorted by variant within a scenario and model already.
		tables = append(tables, abTable(groups, DefaultAlpha, texts, s.Routing))
	}
	return tables
}

// abTable is the A/B table of groups, the baseline first. Its notes say,
// for each other variant, the verdict and what it changes (texts are the
// run's, by hash), then the baseline and the tests.
func abTable(groups []*GroupStats, alpha float64, texts map[string]string, routing *Routing) *Table {
	base := groups[0]
	title := "A/B " + GroupKey{Scenario: base.Scenario, Model: base.Model}.String()
	if base.Lexical {
		title += " (lexical proxy)"
	}
	var verdicts, changes []string
	t := &Table{
		Title: title,
		Columns: []Column{
			// Each change is named for its figure, so that a note on
			// the columns hidden to fit a terminal says which went.
			{Name: "variant"}, {Name: "n", Right: true, Priority: 7},
			{Name: "pass rate", Right: true, Priority: 1}, {Name: "pass vs base", Right: true, Priority: 2},
			{Name: "steps/case", Right: true, Priority: 8},
			{Name: "def tok/req", Right: true, Priority: 5}, {Name: "tok vs base", Right: true, Priority: 6},
			{Name: "unknown/case", Right: true, Priority: 9},
			{Name: "calls", Right: true, Priority: 10}, {Name: "p50 ms", Right: true, Priority: 11}, {Name: "p95 ms", Right: true, Priority: 3},
			{Name: "p95 vs base", Right: true, Priority: 4},
		},
		Notes: []string{"baseline: " + variantName(base.Variant) + ", the variant whose name sorts first",
			"pass rate: Fisher's exact test; latency: Mann-Whitney U over calls; ~ = not significant at alpha " + fmtFloat(alpha) +
				" (latency: or not surely beyond " + fmtFloat(DefaultMinEffectPct) + "%, see compare -min-effect); ? = too few cases to test"},
	}
	for i, g := range groups {
		row := []Cell{
			textCell(variantName(g.Variant)), intCell(g.Cases),
			pctCell(g.PassRate), {},
			floatCell(g.MeanSteps),
			intCell(g.ToolDefTokens), {},
			floatCell(float64(g.UnknownTools) / float64(g.Cases)),
			intCell(g.Latency.N), latCell(g.Latency, g.Latency.P50), latCell(g.Latency, g.Latency.P95),
			{},
		}
		if i == 0 {
			row[3], row[6], row[11] = textCell("base"), textCell("base"), textCell("base")
		} else {
			gc := compareGroups(base, g, Thresholds{Alpha: alpha, MinEffectPct: DefaultMinEffectPct})
			row[3] = withP(passDelta(gc.PassRate), gc.PassRate)
			row[6] = relDelta(gc.ToolDefTokens)
			row[11] = withP(relDelta(gc.P95), gc.P95)
			verdicts = append(verdicts, abVerdict(base, g, gc, routing.pairedVariants(base.GroupKey, g.GroupKey)))
			changes = append(changes, abChanges(base, g, texts))
		}
		t.Rows = append(t.Rows, row)
	}
	t.Notes = append(append(verdicts, changes...), t.Notes...)
	if slices.ContainsFunc(groups, func(g *GroupStats) bool { return g.Usage != nil || g.Cost > 0 }) {
		// A real model: what each variant costs it.
		t.Columns = append(t.Columns, Column{Name: "tokens/case", Right: true, Priority: 12}, Column{Name: "cost/case", Right: true, Priority: 13})
		for i, g := range groups {
			tokens := textCell("-")
			if g.Usage != nil {
				tokens = floatCell(float64(g.Usage.TotalTokens) / float64(g.Cases))
			}
			t.Rows[i] = append(t.Rows[i], tokens, costCell(g.MeanCost))
		}
	}
	return t
}

// withP appends the p-value, or the sample counts when untested, to a delta.
func withP(c Cell, ch Change) Cell {
	if ch.Tested {
		c.Text += " (" + FormatP(ch.P) + ")"
	} else {
		c.Text += fmt.Sprintf(" (n=%d+%d)", ch.OldN, ch.NewN)
	}
	return c
}

func variantName(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}
