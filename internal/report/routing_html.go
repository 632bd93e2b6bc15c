package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// RoutingLinks say where the cells of the confusion heat maps lead.
type RoutingLinks struct {
	// Cell is the address of the cases of one cell of a group's matrix,
	// "" for none (`view` lists them). Without it, an off-diagonal cell
	// leads to a list of its first cases under the heat map, each linked
	// to its transcript by Transcript (the report file).
	Cell func(g *RoutingStats, expected, chosen string) string
	// Transcript is the address of a case's transcript, "" for none.
	Transcript func(caseID string) string
}

// RoutingHTML lays out the routing section of a run for report.html and
// `hosteval view`: the summary table; per group a heat map of its
// confusion matrix (a row per expected class, a column per choice, the
// shade the share of the row, links to the cases of each cell), its
// classes and its tags; the paired A/B tables with every flipped row; and
// accuracy against tool-definition tokens as an inline SVG curve per
// scenario and model, with its table. Every name is escaped by
// html/template; styled by RoutingCSS. "" when r is nil.
func RoutingHTML(r *Routing, links RoutingLinks) (template.HTML, error) {
	if r == nil {
		return "", nil
	}
	var err error
	tbl := func(t *Table) template.HTML {
		if t == nil || err != nil {
			return ""
		}
		var h template.HTML
		h, err = tableHTML(t)
		return h
	}
	page := routingPage{Summary: tbl(RoutingTable(r))}
	for i := range r.Groups {
		g := &r.Groups[i]
		page.Groups = append(page.Groups, routingGroupHTML{
			Label: g.Label(), Heat: heatMapOf(g, i, links),
			Classes: tbl(ClassTable(g)), Tags: tbl(TagTable(g)),
		})
	}
	for _, t := range pairedTables(r.Paired, "Paired A/B", htmlLimits) {
		page.Paired = append(page.Paired, tbl(t))
	}
	if r.hasAxis() {
		for _, pts := range curves(r) {
			page.Curves = append(page.Curves, curveOf(pts))
		}
		page.Tokens = tbl(TokensTable(r))
	}
	if err != nil {
		return "", fmt.Errorf("routing: %w", err)
	}
	var b strings.Builder
	if err := routingTemplate().Execute(&b, page); err != nil {
		return "", fmt.Errorf("routing: %w", err)
	}
	return template.HTML(b.String()), nil
}

type routingPage struct {
	Summary template.HTML
	Groups  []routingGroupHTML
	Paired  []template.HTML
	Curves  []curve
	Tokens  template.HTML
}

type routingGroupHTML struct {
	Label         string
	Heat          heatMap
	Classes, Tags template.HTML
}

// heatMap is a group's confusion matrix laid out for the template.
type heatMap struct {
	Columns []string
	Rows    []heatRow
	// Samples are the cells' lists of cases, for the report file.
	Samples []heatSamples
}

type heatRow struct {
	Class   string
	Support int
	Cells   []heatCell
}

type heatCell struct {
	N     int
	Class string // hm-z, hm-d1..4 on the diagonal, hm-o1..4 off it
	Title string
	URL   string
	// Diagonal marks the cell where the choice was an expected tool.
	Diagonal bool
}

type heatSamples struct {
	ID, Title string
	Cases     []heatCase
	More      int
}

type heatCase struct {
	CaseID, URL string
}

// heatClass shades a cell by its share of the row, in four steps.
func heatClass(n, support int, diagonal bool) string {
	if n == 0 || support == 0 {
		return "hm-z"
	}
	share := float64(n) / float64(support)
	step := 1
	switch {
	case share > 0.5:
		step = 4
	case share > 0.25:
		step = 3
	case share > 0.1:
		step = 2
	}
	if diagonal {
		return "hm-d" + strconv.Itoa(step)
	}
	return "hm-o" + strconv.Itoa(step)
}

func heatMapOf(g *RoutingStats, gi int, links RoutingLinks) heatMap {
	f := &g.RouteFigures
	h := heatMap{Columns: matrixColumns(f)}
	for ri, row := range matrixRows(f) {
		support := f.Class(row).Support
		hr := heatRow{Class: row, Support: support}
		for ci, col := range h.Columns {
			n := cellN(f, row, col)
			c := heatCell{N: n, Class: heatClass(n, support, row == col), Diagonal: row == col,
				Title: fmt.Sprintf("expected %s, chose %s: %d of %d", row, col, n, support)}
			switch {
			case n == 0:
			case links.Cell != nil:
				c.URL = links.Cell(g, row, col)
			case row != col && len(g.samples[matrixKey{row, col}]) > 0:
				id := "rc-" + strconv.Itoa(gi) + "-" + strconv.Itoa(ri) + "-" + strconv.Itoa(ci)
				c.URL = "#" + id
				s := heatSamples{ID: id, Title: "expected " + row + ", chose " + col, More: n - len(g.samples[matrixKey{row, col}])}
				for _, caseID := range g.samples[matrixKey{row, col}] {
					hc := heatCase{CaseID: caseID}
					if links.Transcript != nil {
						hc.URL = links.Transcript(caseID)
					}
					s.Cases = append(s.Cases, hc)
				}
				h.Samples = append(h.Samples, s)
			}
			hr.Cells = append(hr.Cells, c)
		}
		h.Rows = append(h.Rows, hr)
	}
	return h
}

// curve is accuracy against tool-definition tokens of one scenario and
// model, a series per variant, laid out for the template.
type curve struct {
	Title         string
	Width, Height int
	Left, Right   int
	Top, Bottom   int
	// TickEnd is where the x axis's ticks end; LegendX where the legend
	// starts.
	TickEnd, LegendX int
	XTicks, YTicks   []curveTick
	Series           []curveSeries
	Target           *curveTarget
}

type curveTick struct {
	Pos   string // x or y of the tick
	Label string
}

type curveSeries struct {
	Name, Class string
	Points      string // the polyline's points
	Marks       []curveMark
	LegendY     string
}

type curveMark struct {
	X, Y, Lo, Hi string
	Tip          string
}

type curveTarget struct {
	Y, Label string
}

const (
	curveW, curveH                = 640, 300
	curveLeft, curveRight         = 56, 170
	curveTop, curveBottom         = 34, 40
	curveSeriesClasses            = 6
	curveTickCount                = 5
	curveMinTokens        float64 = 1
)

// niceStep is a step of 1, 2 or 5 times a power of ten near x.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	switch f := x / p; {
	case f <= 1:
		return p
	case f <= 2:
		return 2 * p
	case f <= 5:
		return 5 * p
	}
	return 10 * p
}

// curveOf draws the configurations of one scenario and model (pts, fewest
// tokens first): a line per variant through its catalog sizes, each point
// with its Wilson interval as a whisker, and the target as a dashed line.
func curveOf(pts []*RoutingStats) curve {
	first := pts[0]
	title := "Accuracy against tool-definition tokens: " + GroupKey{Scenario: first.Scenario, Model: first.Model}.String()
	if first.Lexical {
		title += " (lexical proxy)"
	}
	c := curve{Title: title, Width: curveW, Height: curveH, Left: curveLeft, Right: curveW - curveRight, Top: curveTop, Bottom: curveH - curveBottom}
	c.TickEnd, c.LegendX = c.Bottom+4, c.Right+56
	maxTok := curveMinTokens
	var target float64
	for _, g := range pts {
		maxTok = max(maxTok, g.DefTokens)
		target = max(target, g.Target)
	}
	step := niceStep(maxTok / curveTickCount)
	top := math.Ceil(maxTok/step) * step
	plotW, plotH := float64(c.Right-c.Left), float64(c.Bottom-c.Top)
	x := func(tok float64) float64 { return float64(c.Left) + tok/top*plotW }
	y := func(acc float64) float64 { return float64(c.Bottom) - acc*plotH }
	for v := 0.0; v <= top+step/2; v += step {
		c.XTicks = append(c.XTicks, curveTick{Pos: px(x(v)), Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	for _, acc := range []float64{0, 0.25, 0.5, 0.75, 1} {
		c.YTicks = append(c.YTicks, curveTick{Pos: px(y(acc)), Label: fmtPct(acc)})
	}
	if target > 0 {
		c.Target = &curveTarget{Y: px(y(target)), Label: "target " + fmtPct(target)}
	}
	var variants []string
	for _, g := range pts {
		if !slices.Contains(variants, g.Variant) {
			variants = append(variants, g.Variant)
		}
	}
	slices.Sort(variants)
	for i, v := range variants {
		s := curveSeries{Name: variantName(v), Class: "cv-" + strconv.Itoa(i%curveSeriesClasses), LegendY: strconv.Itoa(c.Top + 8 + i*18)}
		var points []string
		for _, g := range pts {
			if g.Variant != v {
				continue
			}
			gx, gy := px(x(g.DefTokens)), px(y(g.Accuracy.Value))
			points = append(points, gx+","+gy)
			s.Marks = append(s.Marks, curveMark{
				X: gx, Y: gy, Lo: px(y(g.Accuracy.Lo)), Hi: px(y(g.Accuracy.Hi)),
				Tip: fmt.Sprintf("%s, %d distractors (%d tools): %s tokens/request, accuracy %s (95%% CI %s)",
					variantName(v), g.Distractors, g.Tools, fmtFloat(g.DefTokens), fmtPct(g.Accuracy.Value), fmtCI(g.Accuracy.Lo, g.Accuracy.Hi)),
			})
		}
		s.Points = strings.Join(points, " ")
		c.Series = append(c.Series, s)
	}
	return c
}

// RoutingCSS styles RoutingHTML.
const RoutingCSS = `table.heatmap { width: auto; }
table.heatmap td.hm { text-align: right; min-width: 2.5em; }
table.heatmap td.hm a { color: inherit; display: block; }
table.heatmap th.col { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap; }
.hm-z { color: #8c959f; }
.hm-d1 { background: #dafbe1; } .hm-d2 { background: #aceebb; } .hm-d3 { background: #6fdd8b; } .hm-d4 { background: #2da44e; color: #fff; }
.hm-o1 { background: #ffebe9; } .hm-o2 { background: #ffcecb; } .hm-o3 { background: #ff8182; } .hm-o4 { background: #cf222e; color: #fff; }
.curves svg { background: #fafbfc; border: 1px solid #d0d7de; border-radius: 6px; max-width: 100%; height: auto; }
.curves svg text { font: 11px system-ui, sans-serif; fill: #1f2328; }
.curves svg .title { font-weight: 600; }
.curves svg .axis { stroke: #57606a; } .curves svg .grid { stroke: #eaeef2; }
.curves svg .target { stroke: #cf222e; stroke-dasharray: 6 4; }
.curves svg polyline { fill: none; stroke-width: 2; }
.curves svg .whisker { stroke-width: 1.5; }
.cv-0 { stroke: #0969da; fill: #0969da; } .cv-1 { stroke: #bf3989; fill: #bf3989; } .cv-2 { stroke: #1a7f37; fill: #1a7f37; }
.cv-3 { stroke: #9a6700; fill: #9a6700; } .cv-4 { stroke: #8250df; fill: #8250df; } .cv-5 { stroke: #57606a; fill: #57606a; }
.curves svg polyline.cv-0, .curves svg polyline.cv-1, .curves svg polyline.cv-2, .curves svg polyline.cv-3, .curves svg polyline.cv-4, .curves svg polyline.cv-5 { fill: none; }
`

var routingTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("routing").Parse(`<div class="routing">
{{.Summary}}
{{range $gi, $g := .Groups}}<h3 class="routing-group">{{.Label}}</h3>
<div class="scroll"><table class="heatmap" aria-label="confusion matrix: {{.Label}}">
<thead><tr><th>expected \ chosen</th>{{range .Heat.Columns}}<th class="col">{{.}}</th>{{end}}<th class="r">n</th></tr></thead>
<tbody>{{range .Heat.Rows}}<tr><th>{{.Class}}</th>{{range .Cells}}<td class="hm {{.Class}}{{if .Diagonal}} diag{{end}}" title="{{.Title}}">{{if .URL}}<a href="{{.URL}}">{{.N}}</a>{{else if .N}}{{.N}}{{else}}·{{end}}</td>{{end}}<td class="r">{{.Support}}</td></tr>
{{end}}</tbody></table></div>
{{range .Heat.Samples}}<details class="cell-cases" id="{{.ID}}"><summary>{{.Title}}</summary><ul>{{range .Cases}}<li>{{if .URL}}<a href="{{.URL}}">{{.CaseID}}</a>{{else}}<code>{{.CaseID}}</code>{{end}}</li>{{end}}{{if .More}}<li>and {{.More}} more (records.jsonl)</li>{{end}}</ul></details>
{{end}}{{.Classes}}{{.Tags}}{{end}}
{{range .Paired}}{{.}}{{end}}
{{if .Curves}}<div class="curves">
{{range .Curves}}<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="{{.Title}}">
<text class="title" x="8" y="18">{{.Title}}</text>
{{$c := .}}{{range .YTicks}}<line class="grid" x1="{{$c.Left}}" y1="{{.Pos}}" x2="{{$c.Right}}" y2="{{.Pos}}"></line><text x="{{$c.Left}}" y="{{.Pos}}" dx="-6" dy="4" text-anchor="end">{{.Label}}</text>
{{end}}{{range .XTicks}}<line class="axis" x1="{{.Pos}}" y1="{{$c.Bottom}}" x2="{{.Pos}}" y2="{{$c.TickEnd}}"></line><text x="{{.Pos}}" y="{{$c.Bottom}}" dy="16" text-anchor="middle">{{.Label}}</text>
{{end}}<line class="axis" x1="{{.Left}}" y1="{{.Bottom}}" x2="{{.Right}}" y2="{{.Bottom}}"></line><line class="axis" x1="{{.Left}}" y1="{{.Top}}" x2="{{.Left}}" y2="{{.Bottom}}"></line>
<text x="{{.Right}}" y="{{.Bottom}}" dy="32" text-anchor="end">tool-definition tokens per request</text>
{{with .Target}}<line class="target" x1="{{$c.Left}}" y1="{{.Y}}" x2="{{$c.Right}}" y2="{{.Y}}"></line><text x="{{$c.Left}}" y="{{.Y}}" dx="4" dy="-4">{{.Label}}</text>
{{end}}{{range .Series}}<polyline class="{{.Class}}" points="{{.Points}}"></polyline>
{{$s := .}}{{range .Marks}}<line class="whisker {{$s.Class}}" x1="{{.X}}" y1="{{.Lo}}" x2="{{.X}}" y2="{{.Hi}}"></line><circle class="{{$s.Class}}" cx="{{.X}}" cy="{{.Y}}" r="4"><title>{{.Tip}}</title></circle>
{{end}}<rect class="{{.Class}}" x="{{$c.LegendX}}" y="{{.LegendY}}" width="12" height="12"></rect><text x="{{$c.LegendX}}" y="{{.LegendY}}" dx="18" dy="10">{{.Name}}</text>
{{end}}</svg>
{{end}}</div>
{{.Tokens}}{{end}}
</div>`))
})
