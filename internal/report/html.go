package report

import (
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/hosteval/hosteval/internal/text"
)

// WriteHTML writes a self-contained HTML report of a run: one file with
// inline CSS and inline SVG charts (pass rate, p50/p95 call latency and
// tool-definition tokens per group), the tables of the text report, the
// routing section (RoutingHTML: heat maps whose off-diagonal cells lead
// to their first cases and those to their transcripts, the curve of
// accuracy against tokens), the failures, and gates and a comparison when opts has them, with their
// verdict lines. It loads nothing from anywhere; every name and message is
// escaped by html/template.
func WriteHTML(w io.Writer, s *Summary, opts Options) error {
	page := htmlPage{
		RunID:    s.RunID,
		Totals:   s.Totals,
		Warnings: s.Warnings,
		Failures: opts.failures(s),
	}
	if s.Run != nil {
		if !s.Run.Started.IsZero() {
			page.Started = fmtTime(s.Run.Started)
		}
		if !s.Run.Finished.IsZero() {
			page.Finished = fmtTime(s.Run.Finished)
		}
		page.Interrupted = s.Run.Interrupted
		page.Version = s.Run.Version
		page.Args = strings.Join(s.Run.Args, " ")
	}
	charts, err := ChartsHTML(s)
	if err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	page.Charts = charts
	page.Routing, err = RoutingHTML(s.Routing, RoutingLinks{Transcript: func(caseID string) string {
		if stem := opts.Transcripts[caseID]; stem != "" {
			return stem + ".html"
		}
		return ""
	}})
	if err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	add := func(dst *[]template.HTML, t *Table) {
		if err == nil {
			var h template.HTML
			h, err = tableHTML(t)
			*dst = append(*dst, h)
		}
	}
	for _, t := range runTables(s) {
		add(&page.Tables, t)
	}
	cases, title := filesCaseTable(s)
	page.CasesTitle = title
	if s.caseCount() <= ListedCases {
		page.CasesTitle = text.Count(s.Totals.Cases, "case")
	}
	add(&page.Cases, cases)
	if len(opts.Gates) > 0 {
		add(&page.Gates, GateTable(opts.Gates))
	}
	if c := opts.Comparison; c != nil {
		page.CompareWith = c.OldID
		for _, t := range c.Tables() {
			add(&page.Compare, t)
		}
	}
	if err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	if checks := opts.Checks(); len(checks) > 0 {
		v := Lines(checks...)
		page.Verdict = &v
	}
	if err := htmlTemplate().Execute(w, page); err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	return nil
}

// tableHTML is t's HTML layout, escaped by html/template already.
func tableHTML(t *Table) (template.HTML, error) {
	var b strings.Builder
	if err := t.WriteHTML(&b); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

type htmlPage struct {
	RunID, Started, Finished, Version, Args string
	Interrupted                             bool
	Totals                                  Totals
	Warnings                                []string
	Charts                                  template.HTML
	Tables                                  []template.HTML
	Routing                                 template.HTML
	Failures                                []Failure
	CasesTitle                              string
	Cases                                   []template.HTML
	Gates                                   []template.HTML
	CompareWith                             string
	Compare                                 []template.HTML
	Verdict                                 *VerdictLines
}

// ChartCSS is the stylesheet of the charts, for the page that templates
// it (with html/template's CSS escaping nothing: it is a constant).
// With a routing section, the heat maps' and the curve's styles follow.
func (p htmlPage) ChartCSS() template.CSS {
	if p.Routing != "" {
		return template.CSS(ChartCSS + RoutingCSS)
	}
	return template.CSS(ChartCSS)
}

// A chart is a horizontal bar chart with one row per group, laid out here
// so that the template only places what it is given.
type chart struct {
	Title string
	// LabelX is where labels end; BarX where bars start; TrackW the
	// width of a full bar.
	LabelX, BarX, TrackW int
	Width                int
	Height               int
	Rows                 []chartRow
	Legend               []legendItem
	Empty                bool
	EmptyText            string
}

type chartRow struct {
	Label          string
	LabelY         string
	TrackY, TrackH string // the full-width background of the row
	Bars           []chartBar
	Lines          []chartLine
}

// chartLine is a horizontal line across a row (a whisker).
type chartLine struct {
	X1, X2, Y string
}

type chartBar struct {
	X, Y, W, H string
	Class      string
	Value      string // shown after the bar
	ValueX     string
	TextY      string
	Tip        string
}

type legendItem struct {
	X, TextX string
	Class    string
	Name     string
}

const (
	chartLabelW = 300
	chartBarW   = 340
	chartValueW = 110
	chartBarH   = 15 // one series' bar, text included
	chartGap    = 8  // between rows
	chartTop    = 28
)

// barSeries is one value per group drawn as a bar of one class.
type barSeries struct {
	name   string
	class  func(v float64) string
	values []float64
	text   func(v float64) string
}

// newChart lays out one row per label with a bar per series; a chart
// with no series gets rows of one bar's height, for its caller to fill.
func newChart(title string, labels []string, scale float64, series []barSeries) chart {
	rowH := chartGap + chartBarH*max(len(series), 1)
	c := chart{
		Title:  title,
		Width:  chartLabelW + chartBarW + chartValueW,
		LabelX: chartLabelW - 8, BarX: chartLabelW, TrackW: chartBarW,
		Height: chartTop + len(labels)*rowH + chartGap,
		Empty:  len(labels) == 0, EmptyText: "no cases",
	}
	if c.Empty {
		c.Height += chartBarH
	}
	if scale <= 0 {
		scale = 1
	}
	for i, label := range labels {
		top := chartTop + i*rowH + chartGap/2
		n := max(len(series), 1)
		row := chartRow{
			Label:  shortLabel(label),
			LabelY: strconv.Itoa(top + chartBarH*n/2 + 4),
			TrackY: strconv.Itoa(top), TrackH: strconv.Itoa(chartBarH*n - 1),
		}
		for j, s := range series {
			v := s.values[i]
			w := max(v/scale*chartBarW, 0)
			y := top + j*chartBarH
			row.Bars = append(row.Bars, chartBar{
				X: strconv.Itoa(chartLabelW), Y: strconv.Itoa(y), W: px(w), H: strconv.Itoa(chartBarH - 1),
				Class: s.class(v), Value: s.text(v), ValueX: px(chartLabelW + w + 4),
				TextY: strconv.Itoa(y + chartBarH - 3), Tip: label + " " + s.name + ": " + s.text(v),
			})
		}
		c.Rows = append(c.Rows, row)
	}
	if len(series) > 1 {
		for j, s := range series {
			x := chartLabelW + j*120
			c.Legend = append(c.Legend, legendItem{X: strconv.Itoa(x), TextX: strconv.Itoa(x + 16), Class: s.class(0), Name: s.name})
		}
	}
	return c
}

// px prints a coordinate with one decimal, the same on every machine.
func px(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

func groupLabels(s *Summary) []string {
	labels := make([]string, len(s.Groups))
	for i := range s.Groups {
		labels[i] = s.Groups[i].Label()
	}
	return labels
}

func passRateChart(s *Summary) chart {
	values := make([]float64, len(s.Groups))
	for i := range s.Groups {
		values[i] = s.Groups[i].PassRate
	}
	return newChart("Pass rate per scenario", groupLabels(s), 1, []barSeries{{
		name: "pass rate", values: values, text: fmtPct,
		class: func(v float64) string {
			switch {
			case v >= 1:
				return "bar-pass"
			case v > 0:
				return "bar-partial"
			}
			return "bar-fail"
		},
	}})
}

func latencyChart(s *Summary) chart {
	p50 := make([]float64, len(s.Groups))
	p95 := make([]float64, len(s.Groups))
	var scale float64
	for i := range s.Groups {
		p50[i], p95[i] = s.Groups[i].Latency.P50, s.Groups[i].Latency.P95
		scale = max(scale, p95[i], p50[i])
	}
	ms := func(v float64) string { return fmtMS(v) + " ms" }
	return newChart("Call latency p50 / p95 per scenario", groupLabels(s), scale, []barSeries{
		{name: "p50", values: p50, text: ms, class: func(float64) string { return "bar-p50" }},
		{name: "p95", values: p95, text: ms, class: func(float64) string { return "bar-p95" }},
	})
}

func toolDefChart(s *Summary) chart {
	values := make([]float64, len(s.Groups))
	var scale float64
	for i := range s.Groups {
		values[i] = float64(s.Groups[i].ToolDefTokens)
		scale = max(scale, values[i])
	}
	return newChart("Tool-definition tokens per request", groupLabels(s), scale, []barSeries{{
		name: "tokens", values: values, text: func(v float64) string { return fmtFloat(v) + " tok" },
		class: func(float64) string { return "bar-tokens" },
	}})
}

// The report's templates (this one, the charts', the routing section's
// and the transcript's) are parsed on their first use, not when the
// program starts: parsed at init they cost every command about a
// millisecond of CPU before its first line of work, and run that long
// later to start its servers.
var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"expectation": expectationText,
		"capitalize":  capitalize,
	}).Parse(htmlSource))
})

const htmlSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hosteval run {{.RunID}}</title>
<style>
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1f2328; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.meta { color: #57606a; margin: 0 0 12px; }
.totals { font-size: 16px; margin: 12px 0; }
.ok { color: #1a7f37; } .ko { color: #cf222e; }
.warn { background: #fff8c5; border: 1px solid #d4a72c; padding: 6px 10px; margin: 4px 0; }
table { border-collapse: collapse; margin: 6px 0 4px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; white-space: nowrap; }
th { background: #f6f8fa; font-weight: 600; }
td.r, th.r { text-align: right; }
td.bad { color: #cf222e; font-weight: 600; }
td.status-pass { color: #1a7f37; font-weight: 600; }
td.note { color: #57606a; }
.notes { color: #57606a; margin: 2px 0 10px; }
{{.ChartCSS}}
ul.failures li { margin: 4px 0; }
.scroll { overflow-x: auto; }
details summary { cursor: pointer; }
</style>
</head>
<body>
<h1>hosteval run {{.RunID}}</h1>
<p class="meta">{{if .Started}}started {{.Started}}{{end}}{{if .Finished}}, finished {{.Finished}}{{end}}{{if .Interrupted}} <strong class="ko">(interrupted)</strong>{{end}}{{if .Version}} · hosteval {{.Version}}{{end}}{{if .Args}} · <code>{{.Args}}</code>{{end}}</p>
<p class="totals {{if eq .Totals.Passed .Totals.Cases}}ok{{else}}ko{{end}}"><strong>{{.Totals.Cases}} cases</strong>: {{.Totals.Passed}} passed, {{.Totals.Failed}} failed, {{.Totals.Errored}} errored</p>
{{range .Warnings}}<div class="warn">warning: {{.}}</div>
{{end}}
<h2>Charts</h2>
{{.Charts}}
{{range .Tables}}{{.}}{{end}}
{{with .Routing}}<h2>Routing</h2>
{{.}}
{{end}}{{if .Failures}}<h2>Failures</h2>
{{template "failures" .Failures}}
{{end}}
<h2>Cases</h2>
<details><summary>{{.CasesTitle}}</summary>
{{range .Cases}}{{.}}{{end}}
</details>
{{with .Gates}}<h2>Gates</h2>
{{range .}}{{.}}{{end}}{{end}}
{{if .Compare}}<h2>Compared with {{.CompareWith}}</h2>
{{range .Compare}}{{.}}{{end}}{{end}}
{{with .Verdict}}<h2>Verdict</h2>
{{template "verdict" .}}{{end}}
</body>
</html>
{{define "failures"}}<ul class="failures">
{{range .}}<li><strong class="ko">{{.Status}}</strong> <code>{{.Case}}</code>{{if .Where}} ({{.Where}}){{end}}{{with .Transcript}} · <a href="{{.}}.html">transcript</a>{{end}}{{if .Error}}<br>{{.Error}}{{end}}{{if .Expectations}}
<ul>{{range .Expectations}}<li>{{expectation .}}</li>{{end}}</ul>{{end}}</li>
{{end}}</ul>{{end}}
{{define "verdict"}}{{range .Notes}}<p class="notes">note: {{.}}</p>
{{end}}{{range .Held}}<p class="ok"><strong>{{capitalize .}}</strong></p>
{{end}}{{range .Failed}}<p class="ko"><strong>{{capitalize .Headline}}:</strong></p>
<ul>{{range .Reasons}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{end}}`
