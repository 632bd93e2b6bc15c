package report

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/hosteval/hosteval/internal/gate"
	"github.com/hosteval/hosteval/internal/goldenfile"
	"github.com/hosteval/hosteval/internal/record"
)

// golden compares got with testdata/golden/name, or rewrites the file
// with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "golden", name), got)
}

// fixture reads and aggregates a run under testdata/runs.
func fixture(t testing.TB, name string) *Summary {
	t.Helper()
	run, err := record.ReadRun(filepath.Join("testdata", "runs", name))
	if err != nil {
		t.Fatal(err)
	}
	return Aggregate(run)
}

// fixtureVerdicts reads the base and new runs and judges new: by the gates
// of testdata/gates/ci.yaml (with base as the baseline) and by a comparison
// with base.
func fixtureVerdicts(t *testing.T) (base, next *Summary, opts Options) {
	t.Helper()
	base = fixture(t, "base")
	next = fixture(t, "new")
	gates, err := gate.Load(filepath.Join("testdata", "gates", "ci.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	opts = Options{Gates: EvaluateGates(next, gates, base), Comparison: Compare(base, next, DefaultThresholds())}
	return base, next, opts
}

// withDir is opts with the run folder set, for the failures' show command.
func withDir(opts Options, dir string) Options {
	opts.Dir = dir
	return opts
}

func TestGolden(t *testing.T) {
	base, next, opts := fixtureVerdicts(t)
	gateResults, comparison := opts.Gates, opts.Comparison

	tests := []struct {
		name  string
		write func(w *bytes.Buffer) error
	}{
		{"base.txt", func(w *bytes.Buffer) error { return WriteText(w, base, Options{Dir: "testdata/runs/base"}) }},
		{"new.txt", func(w *bytes.Buffer) error { return WriteText(w, next, withDir(opts, "testdata/runs/new")) }},
		{"base.summary.json", func(w *bytes.Buffer) error { return WriteSummaryJSON(w, base) }},
		{"base.junit.xml", func(w *bytes.Buffer) error { return WriteJUnit(w, base) }},
		{"base.md", func(w *bytes.Buffer) error { return WriteMarkdown(w, base, Options{}) }},
		{"new.md", func(w *bytes.Buffer) error { return WriteMarkdown(w, next, opts) }},
		{"base.html", func(w *bytes.Buffer) error { return WriteHTML(w, base, Options{}) }},
		{"new.html", func(w *bytes.Buffer) error { return WriteHTML(w, next, opts) }},
		{"base.cases.csv", func(w *bytes.Buffer) error { return CaseTable(base).WriteCSV(w) }},
		{"compare.txt", func(w *bytes.Buffer) error { return WriteCompare(w, comparison) }},
		{"gates.txt", func(w *bytes.Buffer) error { return WriteGates(w, gateResults) }},
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
