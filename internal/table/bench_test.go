package table

import (
	"fmt"
	"io"
	"testing"
)

// large is a report's cases table over n cases: fifteen columns of names,
// statuses and figures, as `hosteval report -cases` lays out.
func large(n int) *Table {
	t := &Table{Title: "Cases"}
	for _, name := range []string{"case", "status", "steps", "requests", "unknown", "timeouts",
		"protocol errors", "asked", "result B", "def tok/req", "def tok", "p50 ms", "p95 ms", "max ms", "tokens"} {
		t.Columns = append(t.Columns, Column{Name: name, Right: name != "case" && name != "status", Priority: len(t.Columns)})
	}
	for i := range n {
		row := []Cell{Text(fmt.Sprintf("lookup/variant-%d/scripted#%d", i%7, i)), Status("pass", false)}
		for j := 2; j < len(t.Columns); j++ {
			row = append(row, Fixed(float64(i*j%9973)/7, 1, "ms"))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// BenchmarkWriteText lays out the cases table of a run of 5,000 cases for
// a terminal, fitted to 80 columns and unfitted (-wide), by tablewriter
// and by the layout WriteText picks (by hand past FastRows rows).
func BenchmarkWriteText(b *testing.B) {
	t := large(5000)
	for _, l := range []Layout{LayoutTablewriter, LayoutAuto} {
		for _, width := range []int{0, 80} {
			b.Run(fmt.Sprintf("layout=%s/width=%d", l, width), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := t.Fit(width, "-wide shows them").WriteTextWith(io.Discard, l); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(t.Rows))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
