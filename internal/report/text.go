package report

import (
	"fmt"
	"io"
	"time"

	"github.com/hosteval/hosteval/internal/table"
	"github.com/hosteval/hosteval/internal/text"
)

// Options shape the reports of a run: the verdicts every layout adds, and
// how the text layout fits a terminal.
type Options struct {
	// Gates are shown, with their verdict, when not empty.
	Gates []GateResult
	// Comparison is shown, with its verdict, when not nil.
	Comparison *Comparison

	// Width is the terminal's width in columns; the text layout hides
	// columns (and, last, cuts names) to fit it, and names the hidden ones
	// in a note that points at the CLI's -wide. Zero is unlimited.
	Width int
	// AllCases lists every case in the text layout's cases table; without
	// it a run of more than SmallRun cases lists only those that did not
	// pass.
	AllCases bool
	// Dir is the run folder; when set, each failure in the text layout
	// names the command that prints its transcript (ShowCommand).
	Dir string
	// Transcripts are the stems of the transcript files written in the
	// run folder, by case ID (TranscriptWriter): the Markdown and HTML
	// layouts link each failure to its transcript.
	Transcripts map[string]string
	// AllTranscripts asks for every case's transcript, not only those of
	// the cases that did not pass.
	AllTranscripts bool

	// Partial lets a run that did not record every case pass its checks
	// (gates, the comparison): its incompleteness is then a note, not a
	// failure (the commands' -partial).
	Partial bool
	// Incomplete are the runs the checks read that did not record every
	// case (the run, its baseline), as record.Incomplete says it; Judge
	// sets them.
	Incomplete []string
}

// failures lists the cases of s that did not pass, with their transcripts.
func (o Options) failures(s *Summary) []Failure {
	fs := Failures(s)
	for i := range fs {
		fs[i].Transcript = o.Transcripts[fs[i].CaseID]
	}
	return fs
}

// SmallRun is the most cases a run may have for the text layout to list
// them all unasked.
const SmallRun = 20

// fit fits t to the width of o.
func (o Options) fit(t *table.Table) *table.Table {
	return t.Fit(o.Width, "-wide shows them")
}

// CaseTable has one row per case.
func CaseTable(s *Summary) *Table { return caseTable(s, false, -1) }

// ListedCases is the most cases the report files (Markdown, HTML) list:
// past it, they list the cases that did not pass, that many at most, and
// junit.xml and records.jsonl have every case.
const ListedCases = 1000

// filesCaseTable is the cases table of the report files, and the title of
// the part that holds it.
func filesCaseTable(s *Summary) (*Table, string) {
	if s.caseCount() <= ListedCases {
		return CaseTable(s), "All cases"
	}
	t := caseTable(s, true, ListedCases)
	shown, failing := len(t.Rows), len(s.Failures)
	t.Notes = append(t.Notes, fmt.Sprintf("%d of %s did not pass; %d listed here; junit.xml and records.jsonl have every case", failing, text.Count(s.caseCount(), "case"), shown))
	return t, "Cases that did not pass"
}

// caseTable has one row per case, or per case that did not pass; limit
// bounds the rows (< 0: no bound).
func caseTable(s *Summary, failedOnly bool, limit int) *Table {
	t := &Table{
		Title: "Cases",
		Columns: []Column{
			{Name: "case"}, {Name: "status"},
			{Name: "steps", Right: true, Priority: 5}, {Name: "requests", Right: true, Priority: 7},
			{Name: "unknown", Right: true, Priority: 1}, {Name: "timeouts", Right: true, Priority: 2},
			{Name: "protocol errors", Right: true, Priority: 3}, {Name: "asked", Right: true, Priority: 8},
			{Name: "result B", Right: true, Priority: 9},
			{Name: "def tok/req", Right: true, Priority: 6}, {Name: "def tok", Right: true, Priority: 10},
			{Name: "p50 ms", Right: true, Priority: 11}, {Name: "p95 ms", Right: true, Priority: 4}, {Name: "max ms", Right: true, Priority: 12},
			{Name: "tokens", Right: true, Priority: 13},
		},
	}
	models := s.hasModelFigures()
	truncated := s.Totals.Truncated > 0
	if models {
		t.Columns = append(t.Columns, Column{Name: "model err", Right: true, Priority: 2},
			Column{Name: "replayed", Right: true, Priority: 14}, Column{Name: "cost", Right: true, Priority: 13})
		if truncated {
			t.Columns = append(t.Columns, Column{Name: "truncated", Right: true, Priority: 2})
		}
	}
	for c := range s.allCases() {
		if failedOnly && c.Passed() {
			continue
		}
		if limit >= 0 && len(t.Rows) >= limit {
			break
		}
		row := []Cell{
			textCell(c.Name), statusCell(c.Status),
			intCell(c.Steps), intCell(c.ModelRequests),
			badInt(c.UnknownTools), badInt(c.Timeouts),
			codesCell(c.ProtocolErrors, c.ErrorCodes), intCell(c.AskedUser),
			intCell(c.ResultBytes),
			intCell(c.ToolDefTokens), intCell(c.ToolDefTokensTotal),
			latCell(c.Latency, c.Latency.P50), latCell(c.Latency, c.Latency.P95), latCell(c.Latency, c.Latency.Max),
			usageCell(c.Usage),
		}
		if models {
			row = append(row, badInt(c.ModelErrors), replayedCell(c.ModelFigures), costCell(c.Cost))
			if truncated {
				row = append(row, badInt(c.Truncated))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// GroupTable has one row per scenario+variant+model: pass rate over the
// repeats, means per case and sums.
func GroupTable(s *Summary) *Table {
	t := &Table{
		Title: "Summary",
		Columns: []Column{
			{Name: "scenario"}, {Name: "n", Right: true, Priority: 4}, {Name: "pass", Right: true, Priority: 5},
			{Name: "fail", Right: true, Priority: 2}, {Name: "error", Right: true, Priority: 3}, {Name: "pass rate", Right: true},
			{Name: "steps/case", Right: true, Priority: 10}, {Name: "requests/case", Right: true, Priority: 11},
			{Name: "unknown", Right: true, Priority: 6}, {Name: "timeouts", Right: true, Priority: 7},
			{Name: "protocol errors", Right: true, Priority: 8}, {Name: "version fail", Right: true, Priority: 9},
			{Name: "asked", Right: true, Priority: 12}, {Name: "result B/case", Right: true, Priority: 13},
			{Name: "def tok/req", Right: true, Priority: 14}, {Name: "def tok/case", Right: true, Priority: 15},
			{Name: "tokens", Right: true, Priority: 16},
		},
		Notes: []string{fmt.Sprintf("%s: %d passed, %d failed, %d errored (pass rate %s)",
			text.Count(s.Totals.Cases, "case"), s.Totals.Passed, s.Totals.Failed, s.Totals.Errored, fmtPct(s.Totals.PassRate))},
	}
	for i := range s.Groups {
		g := &s.Groups[i]
		t.Rows = append(t.Rows, []Cell{
			textCell(g.Label()), intCell(g.Cases), intCell(g.Passed),
			badInt(g.Failed), badInt(g.Errored), pctCell(g.PassRate),
			floatCell(g.MeanSteps), floatCell(g.MeanModelRequests),
			badInt(g.UnknownTools), badInt(g.Timeouts),
			codesCell(g.ProtocolErrors, g.ErrorCodes), badInt(g.VersionFailures),
			intCell(g.AskedUser), floatCell(g.MeanResultBytes),
			intCell(g.ToolDefTokens), floatCell(g.MeanToolDefTokensTotal),
			usageCell(g.Usage),
		})
	}
	if s.hasModelFigures() {
		t.Columns = append(t.Columns, Column{Name: "model err", Right: true, Priority: 6},
			Column{Name: "replayed", Right: true, Priority: 17}, Column{Name: "cost/case", Right: true, Priority: 16})
		if s.Totals.Truncated > 0 {
			t.Columns = append(t.Columns, Column{Name: "truncated", Right: true, Priority: 6})
		}
		for i := range s.Groups {
			g := &s.Groups[i]
			t.Rows[i] = append(t.Rows[i], badInt(g.ModelErrors), replayedCell(g.ModelFigures), costCell(g.MeanCost))
			if s.Totals.Truncated > 0 {
				t.Rows[i] = append(t.Rows[i], badInt(g.Truncated))
			}
		}
		t.Notes = append(t.Notes, modelNotes(s)...)
	}
	if n := s.Totals.Reinitialized; n > 0 {
		t.Notes = append(t.Notes, text.Count(n, "new session")+" started after servers ended theirs (HTTP 404 to a session id)")
	}
	return t
}

// hasModelFigures reports whether a run talked to a model endpoint (or
// replayed what one said), so that its tables get the columns of real
// models: a run of scripted models is spared three columns of dashes.
func (s *Summary) hasModelFigures() bool {
	if !s.Totals.ModelFigures.none() || (s.Run != nil && s.Run.Cache != nil) {
		return true
	}
	for i := range s.Groups {
		if s.Groups[i].Usage != nil {
			return true
		}
	}
	return false
}

// LatencyTable has the call latency of each group, vegeta style.
func LatencyTable(s *Summary) *Table {
	t := &Table{
		Title: "Call latency (ms)",
		Columns: []Column{
			{Name: "scenario"}, {Name: "calls", Right: true, Priority: 5},
			{Name: "min", Right: true, Priority: 8}, {Name: "mean", Right: true, Priority: 6}, {Name: "p50", Right: true, Priority: 1},
			{Name: "p90", Right: true, Priority: 7}, {Name: "p95", Right: true, Priority: 2}, {Name: "p99", Right: true, Priority: 3},
			{Name: "max", Right: true, Priority: 4},
		},
	}
	for i := range s.Groups {
		g := &s.Groups[i]
		l := g.Latency
		t.Rows = append(t.Rows, []Cell{
			textCell(g.Label()), intCell(l.N),
			latCell(l, l.Min), latCell(l, l.Mean), latCell(l, l.P50), latCell(l, l.P90),
			latCell(l, l.P95), latCell(l, l.P99), latCell(l, l.Max),
		})
	}
	return t
}

// WriteText writes the terminal report of a run: a header, the cases (all
// of them in a run of at most SmallRun cases or with opts.AllCases, else
// those that did not pass), the failures with their expectations, the
// summary per group, call latency, the A/B tables of scenarios with
// variants, the routing figures of cases made from dataset rows (per
// group, per tool, the largest confusions, per tag, the paired A/B with
// the first flipped rows, accuracy against tokens), then the gates and
// the comparison of opts with one block of verdict lines. Tables are
// fitted to opts.Width.
func WriteText(w io.Writer, s *Summary, opts Options) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "run %s", text.OneLine(s.RunID))
	if s.Run != nil {
		if !s.Run.Started.IsZero() {
			fmt.Fprintf(ew, ", started %s", fmtTime(s.Run.Started))
		}
		if !s.Run.Finished.IsZero() {
			fmt.Fprintf(ew, ", finished %s", fmtTime(s.Run.Finished))
		}
		if s.Run.Interrupted {
			fmt.Fprint(ew, " (interrupted)")
		}
	}
	fmt.Fprint(ew, "\n")
	for _, warn := range s.Warnings {
		fmt.Fprintf(ew, "warning: %s\n", text.OneLine(warn))
	}
	fmt.Fprint(ew, "\n")
	// Everything goes through ew: after a failed write, every later one
	// fails at once with the same error.
	if err := writeCasesText(ew, s, opts); err != nil {
		return err
	}
	failuresText.write(ew, opts.failures(s), opts.Dir)
	for _, t := range append(runTables(s), routingTables(s.Routing, textLimits, false)...) {
		fmt.Fprint(ew, "\n")
		if err := opts.fit(t).WriteText(ew); err != nil {
			return err
		}
	}
	if len(opts.Checks()) > 0 {
		fmt.Fprint(ew, "\n")
		if err := WriteVerdicts(ew, opts); err != nil {
			return err
		}
	}
	return ew.err
}

// writeCasesText writes the cases table: all cases when the run is small
// or opts asks for them, else only those that did not pass, with a note
// that says how to list the rest.
func writeCasesText(w io.Writer, s *Summary, opts Options) error {
	if opts.AllCases || s.caseCount() <= SmallRun {
		return opts.fit(CaseTable(s)).WriteText(w)
	}
	t := caseTable(s, true, -1)
	passed := s.caseCount() - len(t.Rows)
	if len(t.Rows) == 0 {
		_, err := fmt.Fprintf(w, "Cases\nall %d cases passed (-cases lists them)\n", passed)
		return err
	}
	t.Title = "Cases that did not pass"
	t.Notes = append(t.Notes, text.Count(passed, "passed case")+" not listed (-cases lists them)")
	return opts.fit(t).WriteText(w)
}

// runTables are the tables every report of a run shows: the summary per
// group, call latency, and the A/B tables of scenarios with variants.
func runTables(s *Summary) []*Table {
	return append([]*Table{GroupTable(s), LatencyTable(s)}, ABTables(s)...)
}

// fmtTime prints times in UTC to the second, the same on every machine.
func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

// errWriter keeps the first write error so that a run of Fprintf calls
// needs one check.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
