package report

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"sync"

	"github.com/hosteval/hosteval/internal/text"
)

// ChartsHTML draws the charts of a run as inline SVG, one <div
// class="charts"> for report.html and `hosteval view` alike: pass rate,
// p50/p95 call latency and tool-definition tokens per group, then the
// latency distribution and the result bytes of each tool. Styled by
// ChartCSS; every label is escaped by html/template.
func ChartsHTML(s *Summary) (template.HTML, error) {
	charts := []chart{passRateChart(s), latencyChart(s), toolDefChart(s), toolLatencyChart(s), toolBytesChart(s)}
	var b strings.Builder
	if err := chartTemplate().Execute(&b, charts); err != nil {
		return "", fmt.Errorf("charts: %w", err)
	}
	return template.HTML(b.String()), nil
}

// ChartCSS styles ChartsHTML.
const ChartCSS = `.charts { display: flex; flex-wrap: wrap; gap: 16px; }
.charts svg { background: #fafbfc; border: 1px solid #d0d7de; border-radius: 6px; max-width: 100%; height: auto; }
.charts svg text { font: 11px system-ui, sans-serif; fill: #1f2328; }
.charts svg .track { fill: #eaeef2; }
.charts svg .title { font-weight: 600; }
.charts svg .whisker { stroke: #57606a; stroke-width: 1.5; }
.bar-pass { fill: #2da44e; } .bar-partial { fill: #d4a72c; } .bar-fail { fill: #cf222e; }
.bar-p50 { fill: #54aeff; } .bar-p95 { fill: #0969da; } .bar-tokens { fill: #8250df; }
.bar-box { fill: #54aeff; } .bar-median { fill: #0a3069; } .bar-bytes { fill: #1a7f37; } .bar-clipped { fill: #d4a72c; }
`

var chartTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("charts").Parse(`<div class="charts">
{{range $c := .}}<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="{{.Title}}">
<text class="title" x="8" y="18">{{.Title}}</text>
{{range .Legend}}<rect class="{{.Class}}" x="{{.X}}" y="8" width="12" height="12"></rect><text x="{{.TextX}}" y="18">{{.Name}}</text>
{{end}}{{range .Rows}}<text x="{{$c.LabelX}}" y="{{.LabelY}}" text-anchor="end">{{.Label}}</text><rect class="track" x="{{$c.BarX}}" y="{{.TrackY}}" width="{{$c.TrackW}}" height="{{.TrackH}}"></rect>
{{range .Lines}}<line class="whisker" x1="{{.X1}}" y1="{{.Y}}" x2="{{.X2}}" y2="{{.Y}}"></line>
{{end}}{{range .Bars}}<rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Tip}}</title></rect>{{if .Value}}<text x="{{.ValueX}}" y="{{.TextY}}">{{.Value}}</text>{{end}}
{{end}}{{end}}{{if .Empty}}<text x="8" y="40">{{.EmptyText}}</text>
{{end}}</svg>
{{end}}</div>`))
})

// chartFiguresW widens the charts whose figures are long.
const chartFiguresW = 130

// toolLabels are the tools' names.
func toolLabels(s *Summary) []string {
	labels := make([]string, len(s.Tools))
	for i := range s.Tools {
		labels[i] = s.Tools[i].Name()
	}
	return labels
}

// toolLatencyChart draws each tool's call latency as a distribution: a
// whisker from the fastest to the slowest call, a box from p50 to p95, a
// mark at p50, and the figures after it.
func toolLatencyChart(s *Summary) chart {
	var scale float64
	for i := range s.Tools {
		scale = max(scale, s.Tools[i].Latency.Max)
	}
	c := newChart("Call latency per tool: min–max, p50–p95", toolLabels(s), scale, nil)
	c.EmptyText = "no calls"
	// The figures stand in a column after the track, so that a slow
	// tool's do not run off the chart.
	c.Width += chartFiguresW
	figuresX := px(chartLabelW + chartBarW + 6)
	if scale <= 0 {
		scale = 1
	}
	x := func(ms float64) float64 { return chartLabelW + ms/scale*chartBarW }
	for i := range s.Tools {
		l := s.Tools[i].Latency
		row := &c.Rows[i]
		top, _ := strconv.Atoi(row.TrackY)
		mid := top + chartBarH/2
		if l.N == 0 {
			row.Bars = append(row.Bars, chartBar{X: px(chartLabelW), Y: strconv.Itoa(top), W: "0", H: "0",
				Value: "no call sent", ValueX: px(chartLabelW + 4), TextY: strconv.Itoa(top + chartBarH - 3)})
			continue
		}
		row.Lines = append(row.Lines, chartLine{X1: px(x(l.Min)), X2: px(x(l.Max)), Y: strconv.Itoa(mid)})
		tip := fmt.Sprintf("%s: %d calls, min %s, p50 %s, p95 %s, max %s ms", s.Tools[i].Name(), l.N, fmtMS(l.Min), fmtMS(l.P50), fmtMS(l.P95), fmtMS(l.Max))
		row.Bars = append(row.Bars,
			chartBar{Class: "bar-box", X: px(x(l.P50)), Y: strconv.Itoa(top + 2), W: px(max(x(l.P95)-x(l.P50), 1)), H: strconv.Itoa(chartBarH - 5), Tip: tip},
			chartBar{Class: "bar-median", X: px(x(l.P50) - 1), Y: strconv.Itoa(top), W: "2", H: strconv.Itoa(chartBarH - 1), Tip: tip,
				Value: "p50 " + fmtMS(l.P50) + " · p95 " + fmtMS(l.P95) + " · max " + fmtMS(l.Max) + " ms", ValueX: figuresX, TextY: strconv.Itoa(top + chartBarH - 3)},
		)
	}
	return c
}

// toolBytesChart draws the mean result bytes of each tool's calls, with
// the largest and how many the budget cut.
func toolBytesChart(s *Summary) chart {
	values := make([]float64, len(s.Tools))
	var scale float64
	for i := range s.Tools {
		values[i] = s.Tools[i].MeanResultBytes
		scale = max(scale, values[i])
	}
	c := newChart("Result bytes per call, per tool (mean)", toolLabels(s), scale, []barSeries{{
		name: "mean bytes", values: values,
		text:  func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) + " B" },
		class: func(float64) string { return "bar-bytes" },
	}})
	c.EmptyText = "no calls"
	c.Width += chartFiguresW
	for i := range s.Tools {
		t := &s.Tools[i]
		bar := &c.Rows[i].Bars[0]
		bar.Value += " (max " + strconv.Itoa(t.MaxResultBytes) + " B"
		if t.Clipped > 0 {
			bar.Value += ", " + strconv.Itoa(t.Clipped) + " cut"
			bar.Class = "bar-clipped"
		}
		bar.Value += ")"
		bar.Tip = fmt.Sprintf("%s: %d calls, mean %s B, max %d B, %d cut by the budget", t.Name(), t.Calls, fmtFloat(t.MeanResultBytes), t.MaxResultBytes, t.Clipped)
	}
	return c
}

// shortLabel cuts a chart's label to what its column holds.
func shortLabel(s string) string { return text.Shorten(s, 44) }
