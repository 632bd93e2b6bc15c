package report

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/hosteval/hosteval/internal/record"
)

// WriteSummaryJSON writes s as summary.json: indented, fields in a fixed
// order, one trailing newline.
func WriteSummaryJSON(w io.Writer, s *Summary) error {
	return writeJSON(w, s, "summary")
}

// writeJSON writes v as one indented JSON document; what names it in an
// error.
func writeJSON(w io.Writer, v any, what string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Scenario names and errors are data, not HTML; keep them readable.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	return nil
}

// ReadSummaryJSON reads a summary.json of schema 1 or 2. Gates can be
// evaluated on it, but it holds no latency samples: Compare on it reports
// latency untested. One of schema 1 lists every case, which the reports
// show again; one of schema 2 only its failures: its cases table is empty.
func ReadSummaryJSON(r io.Reader) (*Summary, error) {
	var doc struct {
		Summary
		// Cases are schema 1's figures of every case.
		Cases []CaseStats `json:"cases"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("read summary: %w", err)
	}
	s := &doc.Summary
	if s.Schema < 1 || s.Schema > SummarySchema {
		return nil, fmt.Errorf("read summary: schema %d, want 1 to %d", s.Schema, SummarySchema)
	}
	if s.Schema == 1 {
		a := newAggregator()
		for i := range doc.Cases {
			a.addCase(&doc.Cases[i], 0)
		}
		s.cases, s.Failures = a.sorted()
	}
	return s, nil
}

// File names of the reports WriteReports puts in a run folder.
const (
	SummaryFile  = "summary.json"
	JUnitFile    = "junit.xml"
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
)

// WriteReports writes summary.json, junit.xml, report.md and report.html
// into dir (usually the run folder), and gates.json when opts has gate
// results, and returns their paths. Each file is
// written whole to a temporary name and renamed, so that a reader never
// sees half a report; none is synced, since the records rebuild them.
func WriteReports(dir string, s *Summary, opts Options) ([]string, error) {
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{SummaryFile, func(w io.Writer) error { return WriteSummaryJSON(w, s) }},
		{JUnitFile, func(w io.Writer) error { return WriteJUnit(w, s) }},
		{MarkdownFile, func(w io.Writer) error { return WriteMarkdown(w, s, opts) }},
		{HTMLFile, func(w io.Writer) error { return WriteHTML(w, s, opts) }},
	}
	if len(opts.Gates) > 0 {
		files = append(files, struct {
			name  string
			write func(io.Writer) error
		}{GatesFile, func(w io.Writer) error { return WriteGatesJSON(w, opts.Gates) }})
	}
	var paths []string
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		var werr error
		err := record.WriteRebuildable(path, func(w io.Writer) error {
			// A renderer's error names what it wrote; the file's, the file.
			werr = f.write(w)
			return werr
		})
		switch {
		case werr != nil:
			return paths, werr
		case err != nil:
			return paths, fmt.Errorf("write %s: %w", f.name, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
