package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hosteval/hosteval/internal/table"
	"github.com/hosteval/hosteval/internal/text"
)

// Check is one verdict over a run (its gates, or a comparison with an older
// run) with the words its verdict lines use.
type Check struct {
	Verdict
	// Failed heads the reasons of a check that failed ("gates failed",
	// "regressed"); Held is its line when it held ("all gates held", "no
	// regression"). Both are lowercase: each layout sets its own case.
	Failed, Held string
}

// GateCheck is the check of gate results: failed when any gate failed.
func GateCheck(results []GateResult) Check {
	return Check{Verdict: GateVerdict(results), Failed: "gates failed", Held: "all gates held"}
}

// Check is the comparison's check: failed when the new run regressed.
func (c *Comparison) Check() Check {
	return Check{Verdict: c.Verdict, Failed: "regressed", Held: "no regression"}
}

// Checks are the checks o asks for: the gates when there are results, then
// the comparison when there is one.
func (o Options) Checks() []Check {
	var checks []Check
	if len(o.Gates) > 0 {
		checks = append(checks, GateCheck(o.Gates))
	}
	if o.Comparison != nil {
		checks = append(checks, o.Comparison.Check())
	}
	// A check of a run that did not record every case fails: the gates
	// and the comparison saw only the cases recorded (a killed run's
	// records read as a whole green run), unless Partial says it may pass.
	if len(checks) > 0 && len(o.Incomplete) > 0 {
		if o.Partial {
			checks = append(checks, Check{Verdict: Verdict{Notes: o.Incomplete}, Held: "an incomplete run may pass (-partial)"})
		} else {
			// The headline is upper-cased by the text layout: the flag,
			// which is not, goes in a reason.
			reasons := append(slices.Clone(o.Incomplete), "-partial lets an incomplete run pass")
			checks = append(checks, Check{Verdict: Verdict{Regressed: true, Reasons: reasons}, Failed: "the run is incomplete"})
		}
	}
	return checks
}

// VerdictLines are the verdict lines of a run's checks, in the order every
// layout prints them: the notes of all checks, then the checks that held,
// then those that failed, each with its reasons. The last lines of a
// verdict therefore say what failed, and no line saying that something
// held ("no regression") ever stands under a failure ("GATES FAILED").
type VerdictLines struct {
	Notes  []string
	Held   []string
	Failed []FailedCheck
}

// FailedCheck is a check that failed: its headline and its reasons.
type FailedCheck struct {
	Headline string
	Reasons  []string
}

// Lines puts checks in the order of VerdictLines.
func Lines(checks ...Check) VerdictLines {
	var v VerdictLines
	for _, c := range checks {
		v.Notes = append(v.Notes, c.Notes...)
		if c.Regressed {
			v.Failed = append(v.Failed, FailedCheck{Headline: c.Failed, Reasons: c.Reasons})
		} else {
			v.Held = append(v.Held, c.Held)
		}
	}
	return v
}

// Empty reports whether there is no line to print.
func (v VerdictLines) Empty() bool {
	return len(v.Notes) == 0 && len(v.Held) == 0 && len(v.Failed) == 0
}

// writeText writes the lines for a terminal after a blank line: "note: …",
// what held, then each failure in capitals with its reason count and its
// reasons indented. Write errors are left to an errWriter.
func (v VerdictLines) writeText(w io.Writer) {
	fmt.Fprint(w, "\n")
	for _, n := range v.Notes {
		fmt.Fprintf(w, "note: %s\n", text.OneLine(n))
	}
	for _, h := range v.Held {
		fmt.Fprintf(w, "%s\n", h)
	}
	for _, f := range v.Failed {
		fmt.Fprintf(w, "%s: %s\n", strings.ToUpper(f.Headline), text.Count(len(f.Reasons), "reason"))
		for _, r := range f.Reasons {
			fmt.Fprintf(w, "  %s\n", text.OneLine(r))
		}
	}
}

// writeMarkdown writes the lines as Markdown: notes as a list, then ✅
// for what held and ❌ for what failed, with the reasons as a list.
func (v VerdictLines) writeMarkdown(w io.Writer) {
	for _, n := range v.Notes {
		fmt.Fprintf(w, "- note: %s\n", table.EscapeMarkdown(n))
	}
	for _, h := range v.Held {
		fmt.Fprintf(w, "\n✅ **%s**\n", capitalize(h))
	}
	for _, f := range v.Failed {
		fmt.Fprintf(w, "\n❌ **%s**:\n\n", capitalize(f.Headline))
		for _, r := range f.Reasons {
			fmt.Fprintf(w, "- %s\n", table.EscapeMarkdown(r))
		}
	}
	fmt.Fprint(w, "\n")
}

// capitalize upper-cases the first letter of a headline.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// WriteVerdicts writes, for a terminal, the tables of the checks opts asks
// for (the gate table, the comparison's tables), each fitted to
// opts.Width, then one block of verdict lines (VerdictLines).
func WriteVerdicts(w io.Writer, opts Options) error {
	ew := &errWriter{w: w}
	var tables []*table.Table
	if len(opts.Gates) > 0 {
		tables = append(tables, GateTable(opts.Gates))
	}
	if opts.Comparison != nil {
		tables = append(tables, opts.Comparison.Tables()...)
	}
	for i, t := range tables {
		if i > 0 {
			fmt.Fprint(ew, "\n")
		}
		if err := opts.fit(t).WriteText(ew); err != nil {
			return err
		}
	}
	Lines(opts.Checks()...).writeText(ew)
	return ew.err
}

// WriteGates writes the gate table and the gates' verdict.
func WriteGates(w io.Writer, results []GateResult) error {
	if err := GateTable(results).WriteText(w); err != nil {
		return err
	}
	ew := &errWriter{w: w}
	Lines(GateCheck(results)).writeText(ew)
	return ew.err
}

// WriteCompare writes the comparison tables and the comparison's verdict.
func WriteCompare(w io.Writer, c *Comparison) error {
	return WriteVerdicts(w, Options{Comparison: c})
}
