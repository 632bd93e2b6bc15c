package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/record"
)

// CaseTable has one row per case.
func CaseTable(s *Summary) *Table {
	t := &Table{
		Title: "Cases",
		Columns: []Column{
			{Name: "case"}, {Name: "status"},
			{Name: "steps", Right: true}, {Name: "requests", Right: true},
			{Name: "unknown", Right: true}, {Name: "timeouts", Right: true},
			{Name: "protocol errors", Right: true}, {Name: "asked", Right: true},
			{Name: "result B", Right: true},
			{Name: "def tok/req", Right: true}, {Name: "def tok", Right: true},
			{Name: "p50 ms", Right: true}, {Name: "p95 ms", Right: true}, {Name: "max ms", Right: true},
			{Name: "tokens", Right: true},
		},
	}
	for i := range s.Cases {
		c := &s.Cases[i]
		t.Rows = append(t.Rows, []Cell{
			textCell(c.Name), statusCell(c.Status),
			intCell(c.Steps), intCell(c.ModelRequests),
			badInt(c.UnknownTools), badInt(c.Timeouts),
			codesCell(c.ProtocolErrors, c.ErrorCodes), intCell(c.AskedUser),
			intCell(c.ResultBytes),
			intCell(c.ToolDefTokens), intCell(c.ToolDefTokensTotal),
			latCell(c.Latency, c.Latency.P50), latCell(c.Latency, c.Latency.P95), latCell(c.Latency, c.Latency.Max),
			usageCell(c.Usage),
		})
	}
	return t
}

// codesCell shows a protocol error count with its codes: "3 (-32603:2 -32602:1)".
func codesCell(n int, codes []CodeCount) Cell {
	c := badInt(n)
	if len(codes) > 0 {
		parts := make([]string, len(codes))
		for i, cc := range codes {
			parts[i] = fmt.Sprintf("%d:%d", cc.Code, cc.Count)
		}
		c.Text += " (" + strings.Join(parts, " ") + ")"
	}
	return c
}

func usageCell(u *record.Usage) Cell {
	if u == nil {
		return textCell("-")
	}
	return intCell(u.TotalTokens)
}

// GroupTable has one row per scenario+variant+model: pass rate over the
// repeats, means per case and sums.
func GroupTable(s *Summary) *Table {
	t := &Table{
		Title: "Summary",
		Columns: []Column{
			{Name: "scenario"}, {Name: "n", Right: true}, {Name: "pass", Right: true},
			{Name: "fail", Right: true}, {Name: "error", Right: true}, {Name: "pass rate", Right: true},
			{Name: "steps/case", Right: true}, {Name: "requests/case", Right: true},
			{Name: "unknown", Right: true}, {Name: "timeouts", Right: true},
			{Name: "protocol errors", Right: true}, {Name: "version fail", Right: true},
			{Name: "asked", Right: true}, {Name: "result B/case", Right: true},
			{Name: "def tok/req", Right: true}, {Name: "def tok/case", Right: true},
			{Name: "tokens", Right: true},
		},
		Notes: []string{fmt.Sprintf("%d cases: %d passed, %d failed, %d errored (pass rate %s)",
			s.Totals.Cases, s.Totals.Passed, s.Totals.Failed, s.Totals.Errored, fmtPct(s.Totals.PassRate))},
	}
	for i := range s.Groups {
		g := &s.Groups[i]
		t.Rows = append(t.Rows, []Cell{
			textCell(g.GroupKey.String()), intCell(g.Cases), intCell(g.Passed),
			badInt(g.Failed), badInt(g.Errored), pctCell(g.PassRate),
			floatCell(g.MeanSteps), floatCell(g.MeanModelRequests),
			badInt(g.UnknownTools), badInt(g.Timeouts),
			codesCell(g.ProtocolErrors, g.ErrorCodes), badInt(g.VersionFailures),
			intCell(g.AskedUser), floatCell(g.MeanResultBytes),
			intCell(g.ToolDefTokens), floatCell(g.MeanToolDefTokensTotal),
			usageCell(g.Usage),
		})
	}
	return t
}

// LatencyTable has the call latency of each group, vegeta style.
func LatencyTable(s *Summary) *Table {
	t := &Table{
		Title: "Call latency (ms)",
		Columns: []Column{
			{Name: "scenario"}, {Name: "calls", Right: true},
			{Name: "min", Right: true}, {Name: "mean", Right: true}, {Name: "p50", Right: true},
			{Name: "p90", Right: true}, {Name: "p95", Right: true}, {Name: "p99", Right: true},
			{Name: "max", Right: true},
		},
	}
	for i := range s.Groups {
		g := &s.Groups[i]
		l := g.Latency
		t.Rows = append(t.Rows, []Cell{
			textCell(g.GroupKey.String()), intCell(l.N),
			latCell(l, l.Min), latCell(l, l.Mean), latCell(l, l.P50), latCell(l, l.P90),
			latCell(l, l.P95), latCell(l, l.P99), latCell(l, l.Max),
		})
	}
	return t
}

// WriteText writes the terminal report of a run: a header, the cases, the
// failures with their expectations, the summary per group, call latency
// and, for scenarios with variants, the A/B tables.
func WriteText(w io.Writer, s *Summary) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "run %s", s.RunID)
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
		fmt.Fprintf(ew, "warning: %s\n", warn)
	}
	fmt.Fprint(ew, "\n")
	// Everything goes through ew: after a failed write, every later one
	// fails at once with the same error.
	if err := CaseTable(s).WriteText(ew); err != nil {
		return err
	}
	writeFailures(ew, s)
	for _, t := range runTables(s) {
		fmt.Fprint(ew, "\n")
		if err := t.WriteText(ew); err != nil {
			return err
		}
	}
	return ew.err
}

// runTables are the tables every report of a run shows: the summary per
// group, call latency, and the A/B tables of scenarios with variants.
func runTables(s *Summary) []*Table {
	return append([]*Table{GroupTable(s), LatencyTable(s)}, ABTables(s)...)
}

// writeFailures lists each case that did not pass with what went wrong.
// Like writeMarkdownFailures, it leaves write errors to an errWriter.
func writeFailures(w io.Writer, s *Summary) {
	first := true
	for i := range s.Cases {
		c := &s.Cases[i]
		if c.Passed() {
			continue
		}
		if first {
			fmt.Fprint(w, "\nFailures\n")
			first = false
		}
		fmt.Fprintf(w, "%s %s%s\n", strings.ToUpper(c.Status), c.Name, location(c.File, c.Line))
		if c.Error != "" {
			fmt.Fprintf(w, "    %s\n", oneLine(c.Error))
		}
		for _, e := range c.Failed {
			fmt.Fprintf(w, "    %s%s", oneLine(e.Name), location("", e.Line))
			if e.Detail != "" {
				fmt.Fprintf(w, ": %s", oneLine(e.Detail))
			}
			fmt.Fprint(w, "\n")
		}
	}
}

// location is " (file:line)", " (line N)" or "".
func location(file string, line int) string {
	switch {
	case file != "" && line > 0:
		return " (" + file + ":" + strconv.Itoa(line) + ")"
	case file != "":
		return " (" + file + ")"
	case line > 0:
		return " (line " + strconv.Itoa(line) + ")"
	}
	return ""
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
