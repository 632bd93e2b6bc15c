package report

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/record"
)

// The routing figures of cases made from dataset rows (record.Route),
// per routing group: one scenario, variant and model at one catalog size.
//
// # Conventions
//
// Each scored case is one decision: its class is the tool the row
// expects, or record.NoTool for a row that expects none; its choice is
// Route.Chosen, the first tool the model proposed, record.NoTool when it
// proposed none, record.UnknownTool for a name the host does not have.
// A row that expects several tools counts once, under the expected tool
// the model chose when it chose one of them, else under its first
// expected tool: the matrix sums to the cases and its diagonal is "the
// first choice was one of the expected tools".
//
// Per class: support is the cases of that class, chosen the cases that
// chose it, hits the cases on the diagonal. Precision = hits/chosen is
// undefined (JSON null, "-" in tables) for a class never chosen; recall =
// hits/support is undefined for a class with no support (a tool only ever
// chosen wrongly); F1 = 2·hits/(support+chosen), the harmonic mean of the
// two where both exist, 0 for a class with support that was never chosen
// right. Macro F1 averages F1 over the classes with support (the classes
// the rows ask for, no tool among them), so a rare tool weighs as much as
// a common one. Micro F1 pools the classes: every case has one class and
// one choice (an unknown tool is a choice no row expects), so micro
// precision, recall and F1 are all hits/cases.
//
// Accuracy is the row's own verdict (Route.Correct: the match rule held
// and nothing forbidden was proposed), so it differs from micro F1 where
// the rule asks more than the first choice (any, all, exact, forbid). Its
// interval is Wilson's at 95%. No-tool accuracy is the accuracy of the
// rows that expect no tool; argument accuracy is the share of Route.ArgsOK
// that held among the cases that had their arguments checked (the right
// tool was proposed and the row gives args). A case that errored (it
// could not run) is not scored: it is counted as errored.

// RouteKey names a routing group.
type RouteKey struct {
	GroupKey
	// Distractors is how many other tools the catalog axis added.
	Distractors int `json:"distractors"`
}

// String is the group's name, with "+N tools" when distractors were added.
func (k RouteKey) String() string {
	s := k.GroupKey.String()
	if k.Distractors > 0 {
		s += " +" + strconv.Itoa(k.Distractors) + " tools"
	}
	return s
}

func (k RouteKey) compare(o RouteKey) int {
	return cmp.Or(k.GroupKey.compare(o.GroupKey), cmp.Compare(k.Distractors, o.Distractors))
}

// Rate is k of n with its Wilson interval at 95%.
type Rate struct {
	K     int     `json:"k"`
	N     int     `json:"n"`
	Value float64 `json:"value"`
	Lo    float64 `json:"ci_low"`
	Hi    float64 `json:"ci_high"`
}

func rateOf(k, n int) Rate {
	r := Rate{K: k, N: n}
	if n > 0 {
		r.Value = float64(k) / float64(n)
	}
	r.Lo, r.Hi = Wilson(k, n)
	return r
}

// rateOrNil is rateOf, or nil when there is nothing to rate.
func rateOrNil(k, n int) *Rate {
	if n == 0 {
		return nil
	}
	r := rateOf(k, n)
	return &r
}

// ClassFigures are one class's figures: a tool, or record.NoTool.
type ClassFigures struct {
	Class   string `json:"class"`
	Support int    `json:"support"`
	Chosen  int    `json:"chosen"`
	Hits    int    `json:"hits"`
	// Precision, Recall and F1 are null when undefined (see the
	// conventions above).
	Precision *float64 `json:"precision"`
	Recall    *float64 `json:"recall"`
	F1        *float64 `json:"f1"`
}

// MatrixCell is one cell of the confusion matrix that is not zero.
type MatrixCell struct {
	Expected string `json:"expected"`
	Chosen   string `json:"chosen"`
	N        int    `json:"n"`
}

// RouteFigures are the figures of a set of scored cases.
type RouteFigures struct {
	Cases int `json:"cases"`
	// Accuracy is the rows' verdicts; NoTool that of the rows that expect
	// no tool; Args that of the arguments checked. Null when no case
	// counts.
	Accuracy Rate  `json:"accuracy"`
	NoTool   *Rate `json:"no_tool_accuracy"`
	Args     *Rate `json:"arg_accuracy"`
	// Hits are the cases on the matrix's diagonal; Confusions the rest.
	Hits       int      `json:"hits"`
	Confusions int      `json:"confusions"`
	MacroF1    *float64 `json:"macro_f1"`
	MicroF1    *float64 `json:"micro_f1"`
	// Classes are the classes with support or chosen: tools by name, then
	// no tool.
	Classes []ClassFigures `json:"classes"`
	// Matrix lists the cells that are not zero, by class order, then by
	// choice (tools, no tool, unknown tool).
	Matrix []MatrixCell `json:"matrix"`
}

// Class returns the figures of class, or nil.
func (f *RouteFigures) Class(class string) *ClassFigures {
	for i := range f.Classes {
		if f.Classes[i].Class == class {
			return &f.Classes[i]
		}
	}
	return nil
}

// TagFigures are the figures of the cases of one tag.
type TagFigures struct {
	Tag string `json:"tag"`
	RouteFigures
}

// RoutingStats are the figures of one routing group.
type RoutingStats struct {
	RouteKey
	// Lexical is set when the proposals came from the lexical router: a
	// proxy that reads descriptions, never a model.
	Lexical bool `json:"lexical,omitempty"`
	// Rows counts the distinct rows; Errored the cases not scored.
	Rows    int `json:"rows"`
	Errored int `json:"errored"`
	// Tools is the most tools offered to the model; DefTokens the mean
	// tool-definition tokens per request over the cases.
	Tools     int     `json:"tools"`
	DefTokens float64 `json:"def_tokens"`
	// Target is the accuracy the scenario asks for (0: none).
	Target float64 `json:"target,omitempty"`
	RouteFigures
	Tags []TagFigures `json:"tags"`

	// rows are the outcomes by row, for the paired tests, and samples
	// the first cases of each off-diagonal cell; nil for figures read
	// from summary.json.
	rows    *rowTable
	samples map[matrixKey][]string
}

// Label is the group's name as a report shows it, marking the lexical
// router as the proxy it is.
func (g *RoutingStats) Label() string {
	if g.Lexical {
		return g.RouteKey.String() + " (lexical proxy)"
	}
	return g.RouteKey.String()
}

// Routing is the routing section of a Summary: the figures per routing
// group, the paired comparisons of the groups that answered the same rows,
// and the configuration that reaches each scenario's target.
type Routing struct {
	Groups  []RoutingStats  `json:"groups"`
	Paired  []PairedRouting `json:"paired"`
	Targets []TargetResult  `json:"targets"`
}

// Group returns the routing group with key k, or nil.
func (r *Routing) Group(k RouteKey) *RoutingStats {
	if r == nil {
		return nil
	}
	i, ok := slices.BinarySearchFunc(r.Groups, k, func(g RoutingStats, k RouteKey) int { return g.RouteKey.compare(k) })
	if !ok {
		return nil
	}
	return &r.Groups[i]
}

// Lexical reports whether any group's proposals came from the lexical router.
func (r *Routing) Lexical() bool {
	return r != nil && slices.ContainsFunc(r.Groups, func(g RoutingStats) bool { return g.Lexical })
}

// RouteCell is the cell of the confusion matrix a case counts in: its
// class (the row) and its choice (the column). See the conventions above.
func RouteCell(r *record.Route) (class, chosen string) {
	chosen = r.Chosen
	if chosen == "" {
		chosen = record.NoTool
	}
	switch {
	case len(r.Expected) == 0:
		class = record.NoTool
	case slices.Contains(r.Expected, chosen):
		class = chosen
	default:
		class = r.Expected[0]
	}
	return class, chosen
}

// matrixKey is a cell of the confusion matrix.
type matrixKey struct{ class, chosen string }

// routeTally counts the scored cases of a group or of a tag.
type routeTally struct {
	cases, correct        int
	noTool, noToolCorrect int
	argsChecked, argsOK   int
	cells                 map[matrixKey]int
}

func (t *routeTally) add(r *record.Route) {
	if t.cells == nil {
		t.cells = map[matrixKey]int{}
	}
	t.cases++
	if r.Correct {
		t.correct++
	}
	if len(r.Expected) == 0 {
		t.noTool++
		if r.Correct {
			t.noToolCorrect++
		}
	}
	if r.ArgsOK != nil {
		t.argsChecked++
		if *r.ArgsOK {
			t.argsOK++
		}
	}
	class, chosen := RouteCell(r)
	t.cells[matrixKey{class, chosen}]++
}

// classOrder sorts tools by name, then no tool, then unknown tool.
func classOrder(a, b string) int {
	rank := func(s string) int {
		switch s {
		case record.NoTool:
			return 1
		case record.UnknownTool:
			return 2
		}
		return 0
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
}

func floatPtr(x float64) *float64 { return &x }

// figures computes the figures of what t counted.
func (t *routeTally) figures() RouteFigures {
	f := RouteFigures{
		Cases:    t.cases,
		Accuracy: rateOf(t.correct, t.cases),
		NoTool:   rateOrNil(t.noToolCorrect, t.noTool),
		Args:     rateOrNil(t.argsOK, t.argsChecked),
		Classes:  []ClassFigures{},
		Matrix:   []MatrixCell{},
	}
	byClass := map[string]*ClassFigures{}
	class := func(name string) *ClassFigures {
		c, ok := byClass[name]
		if !ok {
			c = &ClassFigures{Class: name}
			byClass[name] = c
		}
		return c
	}
	for k, n := range t.cells {
		class(k.class).Support += n
		if k.chosen != record.UnknownTool {
			class(k.chosen).Chosen += n
		}
		if k.class == k.chosen {
			class(k.class).Hits += n
			f.Hits += n
		}
	}
	f.Confusions = t.cases - f.Hits
	var macro float64
	var withSupport int
	for _, name := range slices.SortedFunc(maps.Keys(byClass), classOrder) {
		c := byClass[name]
		if c.Chosen > 0 {
			c.Precision = floatPtr(float64(c.Hits) / float64(c.Chosen))
		}
		if c.Support > 0 {
			c.Recall = floatPtr(float64(c.Hits) / float64(c.Support))
			withSupport++
		}
		if c.Support+c.Chosen > 0 {
			c.F1 = floatPtr(2 * float64(c.Hits) / float64(c.Support+c.Chosen))
			if c.Support > 0 {
				macro += *c.F1
			}
		}
		f.Classes = append(f.Classes, *c)
	}
	if withSupport > 0 {
		f.MacroF1 = floatPtr(macro / float64(withSupport))
	}
	if t.cases > 0 {
		f.MicroF1 = floatPtr(float64(f.Hits) / float64(t.cases))
	}
	for k, n := range t.cells {
		f.Matrix = append(f.Matrix, MatrixCell{Expected: k.class, Chosen: k.chosen, N: n})
	}
	slices.SortFunc(f.Matrix, func(a, b MatrixCell) int {
		return cmp.Or(classOrder(a.Expected, b.Expected), classOrder(a.Chosen, b.Chosen))
	})
	return f
}

// cellSamples is how many cases of each off-diagonal cell a group keeps,
// for the report that links a cell to its cases.
const cellSamples = 10

// routeGroup gathers one routing group's cases as they are read.
type routeGroup struct {
	key     RouteKey
	tally   routeTally
	tags    map[string]*routeTally
	rows    *rowTable
	errored int
	lexical bool
	tools   int
	target  float64
	defSum  float64
	defN    int
	// samples are the case IDs of the first cases of each off-diagonal
	// cell.
	samples map[matrixKey][]string
}

// routeAggregator builds the routing section from records given one at a
// time. What it keeps grows with the groups, the classes, the tags and
// the rows (one rowOutcome per row and group, for the paired tests), never
// with the cases.
type routeAggregator struct {
	groups map[RouteKey]*routeGroup
	strs   map[string]string // interned row ids and answers
}

func (a *routeAggregator) intern(s string) string {
	if a.strs == nil {
		a.strs = map[string]string{}
	}
	if v, ok := a.strs[s]; ok {
		return v
	}
	a.strs[s] = s
	return s
}

func (a *routeAggregator) add(rec *record.Record) {
	r := rec.Route
	if r == nil {
		return
	}
	if a.groups == nil {
		a.groups = map[RouteKey]*routeGroup{}
	}
	k := RouteKey{GroupKey: GroupKey{Scenario: rec.Scenario, Variant: rec.Variant, Model: rec.Model}, Distractors: r.Distractors}
	g, ok := a.groups[k]
	if !ok {
		g = &routeGroup{key: k, tags: map[string]*routeTally{}, rows: newRowTable(), samples: map[matrixKey][]string{}}
		a.groups[k] = g
	}
	g.lexical = g.lexical || r.Lexical
	g.tools = max(g.tools, r.Tools)
	g.target = max(g.target, r.Target)
	g.defSum += float64(r.DefTokens)
	g.defN++
	if rec.Status == record.StatusError {
		g.errored++
		return
	}
	g.tally.add(r)
	for _, tag := range r.Tags {
		t, ok := g.tags[tag]
		if !ok {
			t = &routeTally{}
			g.tags[tag] = t
		}
		t.add(r)
	}
	class, chosen := RouteCell(r)
	if class != chosen {
		cell := matrixKey{class, chosen}
		if len(g.samples[cell]) < cellSamples {
			g.samples[cell] = append(g.samples[cell], rec.CaseID)
		}
	}
	g.rows.add(a.intern(r.Row), a.intern(strings.Join(r.Expected, ",")), r.Correct, a.intern(chosen))
}

// routing computes the section; nil when no case came from a dataset row.
func (a *routeAggregator) routing() *Routing {
	if len(a.groups) == 0 {
		return nil
	}
	r := &Routing{Groups: make([]RoutingStats, 0, len(a.groups))}
	for _, k := range slices.SortedFunc(maps.Keys(a.groups), RouteKey.compare) {
		g := a.groups[k]
		st := RoutingStats{
			RouteKey: k, Lexical: g.lexical, Rows: len(g.rows.rows), Errored: g.errored,
			Tools: g.tools, Target: g.target, RouteFigures: g.tally.figures(),
			Tags: []TagFigures{}, rows: g.rows, samples: g.samples,
		}
		if g.defN > 0 {
			st.DefTokens = g.defSum / float64(g.defN)
		}
		for _, tag := range slices.Sorted(maps.Keys(g.tags)) {
			st.Tags = append(st.Tags, TagFigures{Tag: tag, RouteFigures: g.tags[tag].figures()})
		}
		r.Groups = append(r.Groups, st)
	}
	r.Paired = pairedWithin(r.Groups)
	r.Targets = targetsOf(r.Groups)
	return r
}
