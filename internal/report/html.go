package report

import (
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
)

// WriteHTML writes a self-contained HTML report of a run: one file with
// inline CSS and inline SVG charts (pass rate, p50/p95 call latency and
// tool-definition tokens per group), the tables of the text report, the
// failures, and gates and a comparison when opts has them. It loads
// nothing from anywhere; every name and message is escaped by html/template.
func WriteHTML(w io.Writer, s *Summary, opts Options) error {
	page := htmlPage{
		RunID:    s.RunID,
		Totals:   s.Totals,
		Warnings: s.Warnings,
		Charts: []chart{
			passRateChart(s), latencyChart(s), toolDefChart(s),
		},
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
	for _, t := range runTables(s) {
		page.Tables = append(page.Tables, htmlTableOf(t))
	}
	for i := range s.Cases {
		c := &s.Cases[i]
		if c.Passed() {
			continue
		}
		f := htmlFailure{Status: c.Status, Name: c.Name, Where: strings.TrimSpace(location(c.File, c.Line)), Error: c.Error}
		for _, e := range c.Failed {
			f.Expectations = append(f.Expectations, strings.TrimSpace(expectationText(e)))
		}
		page.Failures = append(page.Failures, f)
	}
	page.Cases = htmlTableOf(CaseTable(s))
	if len(opts.Gates) > 0 {
		gt := htmlTableOf(GateTable(opts.Gates))
		page.Gates = &gt
		v := GateVerdict(opts.Gates)
		page.GateVerdict = &v
	}
	if c := opts.Comparison; c != nil {
		page.CompareWith = c.OldID
		for _, t := range c.Tables() {
			page.Compare = append(page.Compare, htmlTableOf(t))
		}
		page.CompareVerdict = &c.Verdict
	}
	if err := htmlTemplate.Execute(w, page); err != nil {
		return fmt.Errorf("write html: %w", err)
	}
	return nil
}

type htmlPage struct {
	RunID, Started, Finished, Version, Args string
	Interrupted                             bool
	Totals                                  Totals
	Warnings                                []string
	Charts                                  []chart
	Tables                                  []htmlTable
	Failures                                []htmlFailure
	Cases                                   htmlTable
	Gates                                   *htmlTable
	GateVerdict                             *Verdict
	CompareWith                             string
	Compare                                 []htmlTable
	CompareVerdict                          *Verdict
}

type htmlFailure struct {
	Status, Name, Where, Error string
	Expectations               []string
}

type htmlTable struct {
	Title   string
	Columns []Column
	Rows    [][]htmlCell
	Notes   []string
}

type htmlCell struct {
	Text  string
	Class string
}

func htmlTableOf(t *Table) htmlTable {
	h := htmlTable{Title: t.Title, Columns: t.Columns, Notes: t.Notes}
	for _, row := range t.Rows {
		cells := make([]htmlCell, len(t.Columns))
		for i := range cells {
			if i >= len(row) {
				continue
			}
			c := row[i]
			var class []string
			if t.Columns[i].Right {
				class = append(class, "r")
			}
			switch c.Kind {
			case KindStatus:
				class = append(class, "status-"+c.Text)
			case KindNote:
				class = append(class, "note")
			}
			if c.Bad {
				class = append(class, "bad")
			}
			cells[i] = htmlCell{Text: c.Text, Class: strings.Join(class, " ")}
		}
		h.Rows = append(h.Rows, cells)
	}
	return h
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
}

type chartRow struct {
	Label          string
	LabelY         string
	TrackY, TrackH string // the full-width background of the row
	Bars           []chartBar
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

func newChart(title string, labels []string, scale float64, series []barSeries) chart {
	rowH := chartGap + chartBarH*len(series)
	c := chart{
		Title:  title,
		Width:  chartLabelW + chartBarW + chartValueW,
		LabelX: chartLabelW - 8, BarX: chartLabelW, TrackW: chartBarW,
		Height: chartTop + len(labels)*rowH + chartGap,
		Empty:  len(labels) == 0,
	}
	if c.Empty {
		c.Height += chartBarH
	}
	if scale <= 0 {
		scale = 1
	}
	for i, label := range labels {
		top := chartTop + i*rowH + chartGap/2
		row := chartRow{
			Label:  shorten(label, 44),
			LabelY: strconv.Itoa(top + chartBarH*len(series)/2 + 4),
			TrackY: strconv.Itoa(top), TrackH: strconv.Itoa(chartBarH*len(series) - 1),
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
		labels[i] = s.Groups[i].GroupKey.String()
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

var htmlTemplate = template.Must(template.New("report").Parse(htmlSource))

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
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
svg { background: #fafbfc; border: 1px solid #d0d7de; }
svg text { font: 11px system-ui, sans-serif; fill: #1f2328; }
svg .track { fill: #eaeef2; }
svg .title { font-weight: 600; }
.bar-pass { fill: #2da44e; } .bar-partial { fill: #d4a72c; } .bar-fail { fill: #cf222e; }
.bar-p50 { fill: #54aeff; } .bar-p95 { fill: #0969da; } .bar-tokens { fill: #8250df; }
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
<div class="charts">
{{range $c := .Charts}}<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="{{.Title}}">
<text class="title" x="8" y="18">{{.Title}}</text>
{{range .Legend}}<rect class="{{.Class}}" x="{{.X}}" y="8" width="12" height="12"></rect><text x="{{.TextX}}" y="18">{{.Name}}</text>
{{end}}{{range .Rows}}<text x="{{$c.LabelX}}" y="{{.LabelY}}" text-anchor="end">{{.Label}}</text><rect class="track" x="{{$c.BarX}}" y="{{.TrackY}}" width="{{$c.TrackW}}" height="{{.TrackH}}"></rect>
{{range .Bars}}<rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Tip}}</title></rect><text x="{{.ValueX}}" y="{{.TextY}}">{{.Value}}</text>
{{end}}{{end}}{{if .Empty}}<text x="8" y="40">no cases</text>
{{end}}</svg>
{{end}}</div>
{{range .Tables}}{{template "table" .}}{{end}}
{{if .Failures}}<h2>Failures</h2>
<ul class="failures">
{{range .Failures}}<li><strong class="ko">{{.Status}}</strong> <code>{{.Name}}</code>{{if .Where}} {{.Where}}{{end}}{{if .Error}}<br>{{.Error}}{{end}}{{if .Expectations}}
<ul>{{range .Expectations}}<li>{{.}}</li>{{end}}</ul>{{end}}</li>
{{end}}</ul>
{{end}}
<h2>Cases</h2>
<details><summary>{{.Totals.Cases}} cases</summary>
{{template "table" .Cases}}
</details>
{{with .Gates}}<h2>Gates</h2>
{{template "table" .}}{{end}}
{{with .GateVerdict}}{{template "verdict" .}}{{end}}
{{if .Compare}}<h2>Compared with {{.CompareWith}}</h2>
{{range .Compare}}{{template "table" .}}{{end}}
{{with .CompareVerdict}}{{template "verdict" .}}{{end}}{{end}}
</body>
</html>
{{define "table"}}<h3>{{.Title}}</h3>
<div class="scroll"><table>
<thead><tr>{{range .Columns}}<th{{if .Right}} class="r"{{end}}>{{.Name}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{range .Notes}}<p class="notes">{{.}}</p>
{{end}}{{end}}
{{define "verdict"}}{{range .Notes}}<p class="notes">note: {{.}}</p>
{{end}}{{if .Regressed}}<p class="ko"><strong>Failed:</strong></p>
<ul>{{range .Reasons}}<li>{{.}}</li>{{end}}</ul>{{else}}<p class="ok"><strong>All clear</strong></p>{{end}}
{{end}}`

// shorten cuts s to n runes with an ellipsis, so that a chart label fits
// its column; the bar's tooltip keeps the whole name.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
