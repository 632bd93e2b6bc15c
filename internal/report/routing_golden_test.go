package report

import (
	"bytes"
	"testing"
)

// TestRoutingGolden holds every layout of the routing fixture: a
// scenario of 10 rows, two description variants, the lexical router, at
// two catalog sizes, with a target of 80%.
func TestRoutingGolden(t *testing.T) {
	base := fixture(t, "routing")
	next := fixture(t, "routing-new")
	tests := []struct {
		name  string
		write func(w *bytes.Buffer) error
	}{
		{"routing.txt", func(w *bytes.Buffer) error { return WriteText(w, base, Options{Width: 80}) }},
		{"routing.md", func(w *bytes.Buffer) error { return WriteMarkdown(w, base, Options{}) }},
		{"routing.summary.json", func(w *bytes.Buffer) error { return WriteSummaryJSON(w, base) }},
		{"routing.junit.xml", func(w *bytes.Buffer) error { return WriteJUnit(w, base) }},
		{"routing.html", func(w *bytes.Buffer) error { return WriteHTML(w, base, Options{}) }},
		{"routing-compare.txt", func(w *bytes.Buffer) error { return WriteCompare(w, Compare(base, next, DefaultThresholds())) }},
		{"routing-compare.md", func(w *bytes.Buffer) error { return WriteCompareMarkdown(w, Compare(base, next, DefaultThresholds())) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.write(&buf); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, buf.Bytes())
		})
	}
}
