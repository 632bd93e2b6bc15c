package view

import (
	"strconv"
	"strings"
)

// point is one run's value in a trend.
type point struct {
	Label string
	Y     float64
}

// sparkline is a small line chart of a figure across runs, laid out here
// so that the template only places what it is given.
type sparkline struct {
	Title         string
	Width, Height int
	Line          string // the polyline's points
	Dots          []dot
	Last, Min     string
	Max           string
	// Change is the last run against the one before, Worse set when it
	// moved the wrong way.
	Change string
	Worse  bool
	Empty  bool
}

type dot struct {
	X, Y string
	Tip  string
}

const (
	sparkW, sparkH = 220, 46
	sparkPad       = 5
)

// newSparkline draws pts in order; higherIsBetter says which way is good.
func newSparkline(title string, pts []point, format func(float64) string, higherIsBetter bool) sparkline {
	s := sparkline{Title: title, Width: sparkW, Height: sparkH, Empty: len(pts) == 0}
	if s.Empty {
		return s
	}
	lo, hi := pts[0].Y, pts[0].Y
	for _, p := range pts {
		lo, hi = min(lo, p.Y), max(hi, p.Y)
	}
	span := hi - lo
	var line []string
	for i, p := range pts {
		x := float64(sparkPad)
		if len(pts) > 1 {
			x += float64(i) * float64(sparkW-2*sparkPad) / float64(len(pts)-1)
		}
		y := float64(sparkH) / 2
		if span > 0 {
			y = float64(sparkH-sparkPad) - (p.Y-lo)/span*float64(sparkH-2*sparkPad)
		}
		xs, ys := strconv.FormatFloat(x, 'f', 1, 64), strconv.FormatFloat(y, 'f', 1, 64)
		line = append(line, xs+","+ys)
		s.Dots = append(s.Dots, dot{X: xs, Y: ys, Tip: p.Label + ": " + format(p.Y)})
	}
	s.Line = strings.Join(line, " ")
	last := pts[len(pts)-1].Y
	s.Last, s.Min, s.Max = format(last), format(lo), format(hi)
	if len(pts) > 1 {
		prev := pts[len(pts)-2].Y
		switch {
		case last > prev:
			s.Change = "up from " + format(prev)
			s.Worse = !higherIsBetter
		case last < prev:
			s.Change = "down from " + format(prev)
			s.Worse = higherIsBetter
		default:
			s.Change = "unchanged"
		}
	}
	return s
}
