package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/table"

	"github.com/hosteval/hosteval/internal/text"
)

// The routing section's table models. Every layout shows the same
// tables; the text layout bounds the long lists (confusions, flipped
// rows) and HTML adds the heat maps and the curve.

// routingLimits bound the long lists of one layout; < 0 is no bound.
type routingLimits struct {
	confusions, flips int
}

var (
	textLimits     = routingLimits{confusions: 10, flips: 10}
	markdownLimits = routingLimits{confusions: 20, flips: 50}
	htmlLimits     = routingLimits{confusions: -1, flips: -1}
)

// LexicalNote is the note under every table that shows the lexical
// router's figures.
const LexicalNote = "lexical proxy: the lexical router ranks tools by BM25 over their names, descriptions and parameters; it stands in for a model in CI and is not one"

// routingNotes are the notes of the routing summary table.
func routingNotes(r *Routing) []string {
	notes := []string{
		"accuracy: rows whose rule held (match and forbid), with Wilson's 95% interval; F1 and confusions: of the first choice",
		"macro F1: mean over the expected classes (no tool among them); micro F1: first choices right / cases",
	}
	if r.Lexical() {
		notes = append(notes, LexicalNote)
	}
	return notes
}

// optFixed is x with two decimals, "-" when undefined.
func optFixed(x *float64) Cell {
	if x == nil {
		return textCell("-")
	}
	return table.Fixed(*x, 2, "")
}

// optRate is a rate as a percentage, "-" when there is nothing to rate.
func optRate(r *Rate) Cell {
	if r == nil {
		return textCell("-")
	}
	return table.Percent(r.Value)
}

// accCell is an accuracy, bad below the target (when there is one): a
// routing set is not expected to be all right, as a scenario's cases are.
func accCell(x, target float64) Cell {
	c := table.Percent(x)
	c.Bad = target > 0 && x < target
	return c
}

// ciCell is a rate's interval: "25.4–74.6%".
func ciCell(r Rate) Cell {
	if r.N == 0 {
		return textCell("-")
	}
	return noteCell(fmtCI(r.Lo, r.Hi))
}

// fmtCI prints an interval of rates as percentages: "25.4–74.6%".
func fmtCI(lo, hi float64) string {
	return strings.TrimSuffix(fmtPct(lo), "%") + "–" + fmtPct(hi)
}

// RoutingTable has one row per routing group: its accuracy with its
// interval, F1, no-tool and argument accuracy, confusions and what its
// catalog cost.
func RoutingTable(r *Routing) *Table {
	t := &Table{
		Title: "Routing accuracy per group",
		Columns: []Column{
			{Name: "group"}, {Name: "rows", Right: true, Priority: 6},
			{Name: "accuracy", Right: true}, {Name: "95% CI", Right: true, Priority: 3},
			{Name: "macro F1", Right: true, Priority: 1}, {Name: "micro F1", Right: true, Priority: 7},
			{Name: "no tool", Right: true, Priority: 4}, {Name: "args", Right: true, Priority: 5},
			{Name: "confusions", Right: true, Priority: 2},
			{Name: "tools", Right: true, Priority: 9}, {Name: "def tok/req", Right: true, Priority: 8},
		},
		Notes: routingNotes(r),
	}
	// With a catalog axis, its size is a column of its own: the labels
	// stay short enough for a terminal.
	axis := slices.ContainsFunc(r.Groups, func(g RoutingStats) bool { return g.Distractors > 0 })
	if axis {
		t.Columns = slices.Insert(t.Columns, 1, Column{Name: "+tools", Right: true, Priority: 1})
	}
	for i := range r.Groups {
		g := &r.Groups[i]
		label := g.Label()
		if axis {
			short := *g
			short.Distractors = 0
			label = short.Label()
		}
		row := []Cell{
			textCell(label), intCell(g.Rows),
			accCell(g.Accuracy.Value, g.Target), ciCell(g.Accuracy),
			optFixed(g.MacroF1), optFixed(g.MicroF1),
			optRate(g.NoTool), optRate(g.Args),
			intCell(g.Confusions),
			intCell(g.Tools), floatCell(g.DefTokens),
		}
		if axis {
			row = slices.Insert(row, 1, intCell(g.Distractors))
		}
		t.Rows = append(t.Rows, row)
		if g.Errored > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: %s errored, not scored", g.Label(), text.Count(g.Errored, "case")))
		}
	}
	return t
}

// ClassTable has one row per class of a group: support, chosen, hits,
// precision, recall and F1.
func ClassTable(g *RoutingStats) *Table {
	t := &Table{
		Title: "Per tool: " + g.Label(),
		Columns: []Column{
			{Name: "expected tool"}, {Name: "support", Right: true}, {Name: "chosen", Right: true, Priority: 2},
			{Name: "right", Right: true, Priority: 3},
			{Name: "precision", Right: true}, {Name: "recall", Right: true}, {Name: "F1", Right: true, Priority: 1},
		},
		Notes: []string{"- : undefined (precision of a tool never chosen, recall of one never expected)"},
	}
	for _, c := range g.Classes {
		t.Rows = append(t.Rows, []Cell{
			textCell(c.Class), intCell(c.Support), intCell(c.Chosen), intCell(c.Hits),
			optFixed(c.Precision), optFixed(c.Recall), optFixed(c.F1),
		})
	}
	return t
}

// ConfusionTable lists the off-diagonal cells of a group's matrix, the
// largest first, at most limit of them (< 0: all): "expected -> chosen n".
func ConfusionTable(g *RoutingStats, limit int) *Table {
	t := &Table{
		Title: "Confusions: " + g.Label(),
		Columns: []Column{
			{Name: "expected"}, {Name: "chosen"}, {Name: "n", Right: true}, {Name: "of expected", Right: true, Priority: 1},
		},
	}
	cells := offDiagonal(&g.RouteFigures)
	for i, c := range cells {
		if limit >= 0 && i >= limit {
			t.Notes = append(t.Notes, fmt.Sprintf("%d more cells (%d cases); summary.json and report.html have them all", len(cells)-limit, sumCells(cells[limit:])))
			break
		}
		share := textCell("-")
		if cl := g.Class(c.Expected); cl != nil && cl.Support > 0 {
			share = table.Percent(float64(c.N) / float64(cl.Support))
		}
		t.Rows = append(t.Rows, []Cell{textCell(c.Expected), textCell(c.Chosen), intCell(c.N), share})
	}
	if len(cells) == 0 {
		t.Notes = append(t.Notes, "none: every first choice was an expected tool")
	}
	return t
}

// offDiagonal are the cells of f's matrix off its diagonal, the largest
// first, then in the matrix's order.
func offDiagonal(f *RouteFigures) []MatrixCell {
	var cells []MatrixCell
	for _, c := range f.Matrix {
		if c.Expected != c.Chosen {
			cells = append(cells, c)
		}
	}
	slices.SortStableFunc(cells, func(a, b MatrixCell) int { return cmp.Compare(b.N, a.N) })
	return cells
}

func sumCells(cells []MatrixCell) int {
	n := 0
	for _, c := range cells {
		n += c.N
	}
	return n
}

// matrixColumns are the columns of a group's matrix: the classes, then
// an unknown tool when one was chosen.
func matrixColumns(f *RouteFigures) []string {
	var cols []string
	for _, c := range f.Classes {
		cols = append(cols, c.Class)
	}
	if slices.ContainsFunc(f.Matrix, func(c MatrixCell) bool { return c.Chosen == record.UnknownTool }) {
		cols = append(cols, record.UnknownTool)
	}
	return cols
}

// matrixRows are the rows of a group's matrix: the classes with support.
func matrixRows(f *RouteFigures) []string {
	var rows []string
	for _, c := range f.Classes {
		if c.Support > 0 {
			rows = append(rows, c.Class)
		}
	}
	return rows
}

// cellN is the count of one cell of f's matrix.
func cellN(f *RouteFigures, expected, chosen string) int {
	for _, c := range f.Matrix {
		if c.Expected == expected && c.Chosen == chosen {
			return c.N
		}
	}
	return 0
}

// MatrixTable is a group's whole confusion matrix: a row per expected
// class, a column per choice.
func MatrixTable(g *RoutingStats) *Table {
	t := &Table{Title: "Confusion matrix: " + g.Label(), Columns: []Column{{Name: "expected \\ chosen"}}}
	cols := matrixColumns(&g.RouteFigures)
	for _, c := range cols {
		t.Columns = append(t.Columns, Column{Name: c, Right: true})
	}
	for _, row := range matrixRows(&g.RouteFigures) {
		cells := []Cell{textCell(row)}
		for _, col := range cols {
			n := cellN(&g.RouteFigures, row, col)
			c := intCell(n)
			if n == 0 {
				c.Text = "."
			}
			cells = append(cells, c)
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// TagTable has one row per tag of a group's rows; nil when none has tags.
func TagTable(g *RoutingStats) *Table {
	if len(g.Tags) == 0 {
		return nil
	}
	t := &Table{
		Title: "Per tag: " + g.Label(),
		Columns: []Column{
			{Name: "tag"}, {Name: "cases", Right: true, Priority: 4},
			{Name: "accuracy", Right: true}, {Name: "95% CI", Right: true, Priority: 2},
			{Name: "macro F1", Right: true, Priority: 1}, {Name: "no tool", Right: true, Priority: 3},
			{Name: "args", Right: true, Priority: 5}, {Name: "confusions", Right: true, Priority: 6},
		},
	}
	for i := range g.Tags {
		tg := &g.Tags[i]
		t.Rows = append(t.Rows, []Cell{
			textCell(tg.Tag), intCell(tg.Cases), accCell(tg.Accuracy.Value, g.Target), ciCell(tg.Accuracy),
			optFixed(tg.MacroF1), optRate(tg.NoTool), optRate(tg.Args), intCell(tg.Confusions),
		})
	}
	return t
}

// pairLabel names a side of a paired comparison by what differs: its
// variant, its model (marked when it is the lexical router), or its run.
func pairLabel(p *PairedRouting, other bool) string {
	k, lexical := p.Base, p.BaseLexical
	if other {
		k, lexical = p.Other, p.OtherLexical
	}
	switch p.Differs {
	case "variant":
		return variantName(k.Variant)
	case "model":
		if lexical {
			return k.Model + " (lexical proxy)"
		}
		return k.Model
	case "run":
		if other {
			return "new"
		}
		return "old"
	}
	return k.String()
}

// pairTitle names what a paired comparison held fixed, marking the
// lexical router when both sides are its.
func pairTitle(p *PairedRouting) string {
	k := p.Base
	switch p.Differs {
	case "variant":
		k.Variant = ""
	case "model":
		k.Model = ""
	}
	s := k.String()
	if p.Differs != "model" && p.BaseLexical && p.OtherLexical {
		s += " (lexical proxy)"
	}
	return s
}

// fmtPP prints a difference of rates in percentage points, with one
// decimal and its sign: "+16.7pp".
func fmtPP(x float64) string {
	s := strconv.FormatFloat(x*100, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	switch {
	case s == "0" || s == "-0":
		s = "0"
	case x > 0:
		s = "+" + s
	}
	return s + "pp"
}

// diffCell is a paired difference in points with its interval:
// "+16.7pp (-10.2 to +41.0)".
func diffCell(p *PairedRouting) Cell {
	d := p.Diff
	text := fmtPP(d.Est) + " (" + strings.TrimSuffix(fmtPP(d.Lo), "pp") + " to " + fmtPP(d.Hi) + ")"
	sig := table.Noise
	if p.Significant {
		sig = table.Significant
	}
	return table.Delta(text, d.Est, sig, p.Significant && d.Est < 0)
}

// PairedTable has one row per paired comparison: groups that answered
// the same rows, compared row by row.
func PairedTable(ps []PairedRouting, title string) *Table {
	t := &Table{
		Title: title,
		Columns: []Column{
			{Name: "base -> other"},
			{Name: "rows", Right: true, Priority: 2}, {Name: "accuracy", Right: true, Priority: 1},
			{Name: "difference (95% CI)", Right: true},
			{Name: "worse", Right: true}, {Name: "better", Right: true}, {Name: "p", Right: true},
		},
	}
	var methods []string
	runs := len(ps) > 0 && ps[0].Differs == "run"
	if runs {
		t.Columns[0].Name = "group"
	}
	for i := range ps {
		p := &ps[i]
		pc := textCell(FormatP(p.P))
		pc.Bad = p.Significant && p.Diff.Est < 0
		first := textCell(pairLabel(p, false) + " -> " + pairLabel(p, true))
		if runs {
			first = textCell(pairTitle(p))
		}
		t.Rows = append(t.Rows, []Cell{
			first, intCell(p.Rows),
			textCell(fmtPct(p.BaseAccuracy) + " -> " + fmtPct(p.OtherAccuracy)), diffCell(p),
			badInt(p.Worse), intCell(p.Better), pc,
		})
		if !slices.Contains(methods, p.Test) {
			methods = append(methods, p.Test)
		}
		if p.OnlyBase+p.OnlyOther > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: %s -> %s: %d rows answered by one side only, left out", pairTitle(p), pairLabel(p, false), pairLabel(p, true), p.OnlyBase+p.OnlyOther))
		}
	}
	for _, m := range methods {
		switch m {
		case TestMcNemar:
			t.Notes = append(t.Notes, "rows answered once: McNemar's exact test on the rows that flipped; difference with Tango's score interval")
		case TestSign:
			t.Notes = append(t.Notes, "repeated rows: exact sign test on the per-row pass rates; difference with the paired Wald interval")
		}
	}
	t.Notes = append(t.Notes, "worse/better: rows that did worse/better than the base; significant at p < "+fmtFloat(DefaultAlpha))
	return t
}

// FlipTable lists the rows of a paired comparison that flipped, those
// that did worse first, with what each side chose; at most limit (< 0:
// all). Nil when no row flipped.
func FlipTable(p *PairedRouting, limit int) *Table {
	if len(p.Flips) == 0 {
		return nil
	}
	base, other := pairLabel(p, false), pairLabel(p, true)
	t := &Table{
		Title: "Flipped rows: " + pairTitle(p) + ": " + base + " -> " + other,
		Columns: []Column{
			{Name: "row"}, {Name: "flip"}, {Name: "expected", Priority: 1},
			{Name: base + " chose"}, {Name: other + " chose"},
		},
	}
	for i := range p.Flips {
		if limit >= 0 && i >= limit {
			t.Notes = append(t.Notes, fmt.Sprintf("%d more flipped rows; summary.json lists them", p.Worse+p.Better-limit))
			break
		}
		f := &p.Flips[i]
		flip := textCell("worse")
		flip.Bad = true
		if f.Better {
			flip = textCell("better")
		}
		expected := strings.Join(f.Expected, ", ")
		if expected == "" {
			expected = record.NoTool
		}
		t.Rows = append(t.Rows, []Cell{
			textCell(f.Row), flip, textCell(expected), answerCell(f.Base), answerCell(f.Other),
		})
	}
	return t
}

// answerCell is what a side chose, with its passes when it answered more
// than once.
func answerCell(a RowAnswer) Cell {
	s := a.String()
	if a.N > 1 {
		s += " (" + strconv.Itoa(a.Passed) + "/" + strconv.Itoa(a.N) + " right)"
	}
	return textCell(s)
}

// hasAxis reports whether the routing groups make a curve: some scenario
// and model measured in more than one configuration, or a target set.
func (r *Routing) hasAxis() bool {
	for _, t := range r.Targets {
		if t.Target > 0 {
			return true
		}
	}
	type key struct{ scenario, model string }
	n := map[key]int{}
	for i := range r.Groups {
		k := key{r.Groups[i].Scenario, r.Groups[i].Model}
		n[k]++
		if n[k] > 1 {
			return true
		}
	}
	return false
}

// TokensTable is accuracy against tool-definition tokens: one row per
// configuration (variant and catalog size) of each scenario and model,
// fewest tokens first, with the configuration that reaches the target
// named in the notes.
func TokensTable(r *Routing) *Table {
	t := &Table{
		Title: "Accuracy against tool-definition tokens",
		Columns: []Column{
			{Name: "scenario/model"}, {Name: "variant"}, {Name: "distractors", Right: true},
			{Name: "tools", Right: true, Priority: 2}, {Name: "def tok/req", Right: true},
			{Name: "accuracy", Right: true}, {Name: "95% CI", Right: true, Priority: 1},
		},
	}
	for _, pts := range curves(r) {
		for _, g := range pts {
			name := GroupKey{Scenario: g.Scenario, Model: g.Model}.String()
			if g.Lexical {
				name += " (lexical proxy)"
			}
			acc := accCell(g.Accuracy.Value, g.Target)
			t.Rows = append(t.Rows, []Cell{
				textCell(name), textCell(variantName(g.Variant)), intCell(g.Distractors),
				intCell(g.Tools), floatCell(g.DefTokens), acc, ciCell(g.Accuracy),
			})
		}
	}
	for _, tr := range r.Targets {
		t.Notes = append(t.Notes, targetLine(&tr))
	}
	return t
}

// targetLine says which configuration reaches a target with the fewest
// tokens, or that none does.
func targetLine(tr *TargetResult) string {
	name := GroupKey{Scenario: tr.Scenario, Model: tr.Model}.String()
	if tr.Reached == nil {
		return fmt.Sprintf("%s: target %s: none of %d configurations reaches it", name, fmtPct(tr.Target), tr.Configurations)
	}
	return fmt.Sprintf("%s: target %s: smallest configuration reaching it: variant %s with %d distractors (%d tools, %s tokens/request, accuracy %s)",
		name, fmtPct(tr.Target), variantName(tr.Reached.Variant), tr.Reached.Distractors, tr.Tools, fmtFloat(tr.DefTokens), fmtPct(tr.Accuracy))
}

// curves are the groups of each scenario and model, fewest tokens first
// (then by variant and catalog size).
func curves(r *Routing) [][]*RoutingStats {
	var out [][]*RoutingStats
	for i := 0; i < len(r.Groups); {
		j := i
		var pts []*RoutingStats
		for ; j < len(r.Groups) && r.Groups[j].Scenario == r.Groups[i].Scenario; j++ {
			pts = append(pts, &r.Groups[j])
		}
		// Groups sort by scenario, variant, model: split by model.
		byModel := map[string][]*RoutingStats{}
		var models []string
		for _, g := range pts {
			if _, ok := byModel[g.Model]; !ok {
				models = append(models, g.Model)
			}
			byModel[g.Model] = append(byModel[g.Model], g)
		}
		slices.Sort(models)
		for _, m := range models {
			ps := byModel[m]
			slices.SortStableFunc(ps, func(a, b *RoutingStats) int {
				return cmp.Or(cmp.Compare(a.DefTokens, b.DefTokens), cmp.Compare(a.Variant, b.Variant), cmp.Compare(a.Distractors, b.Distractors))
			})
			out = append(out, ps)
		}
		i = j
	}
	return out
}

// routingTables are the routing section's tables in a layout's order:
// the summary, then per group its classes, confusions and tags, the
// paired comparisons with their flipped rows, and accuracy against
// tokens. Nil when the run has no routing cases.
func routingTables(r *Routing, lim routingLimits, matrix bool) []*Table {
	if r == nil {
		return nil
	}
	tables := []*Table{RoutingTable(r)}
	for i := range r.Groups {
		g := &r.Groups[i]
		tables = append(tables, ClassTable(g), ConfusionTable(g, lim.confusions))
		if matrix {
			tables = append(tables, MatrixTable(g))
		}
		if t := TagTable(g); t != nil {
			tables = append(tables, t)
		}
	}
	tables = append(tables, pairedTables(r.Paired, "Paired A/B", lim)...)
	if r.hasAxis() {
		tables = append(tables, TokensTable(r))
	}
	return tables
}

// pairedTables are the paired comparisons, a table for each set of rows
// (what the comparisons held fixed), each followed by its flipped rows.
// Two runs compared make one table of every group, then the flipped rows.
func pairedTables(ps []PairedRouting, title string, lim routingLimits) []*Table {
	var tables []*Table
	if len(ps) > 0 && ps[0].Differs == "run" {
		tables = append(tables, PairedTable(ps, title+", same rows"))
		for k := range ps {
			if t := FlipTable(&ps[k], lim.flips); t != nil {
				tables = append(tables, t)
			}
		}
		return tables
	}
	for i := 0; i < len(ps); {
		j := i + 1
		for j < len(ps) && pairTitle(&ps[j]) == pairTitle(&ps[i]) {
			j++
		}
		tables = append(tables, PairedTable(ps[i:j], title+": "+pairTitle(&ps[i])+", same rows"))
		for k := i; k < j; k++ {
			if t := FlipTable(&ps[k], lim.flips); t != nil {
				tables = append(tables, t)
			}
		}
		i = j
	}
	return tables
}
