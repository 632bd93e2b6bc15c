package report

import (
	"fmt"
	"io"

	"github.com/hosteval/hosteval/internal/table"
	"github.com/hosteval/hosteval/internal/text"
)

// WriteMarkdown writes a Markdown summary of a run, for a CI step summary
// ($GITHUB_STEP_SUMMARY): totals, the summary and latency tables, A/B
// tables, the routing figures (the summary, the paired A/B with the rows
// that flipped and accuracy against tokens; per group its tools,
// confusions, matrix and tags folded in a <details> element), the failures, the per-case table folded in a <details> element
// (in a run of more than ListedCases cases, those that did not pass),
// then gates and a comparison when opts has them, and their verdict lines.
func WriteMarkdown(w io.Writer, s *Summary, opts Options) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "## hosteval run %s\n\n", table.EscapeMarkdown(s.RunID))
	if s.Run != nil && !s.Run.Started.IsZero() {
		fmt.Fprintf(ew, "Started %s", fmtTime(s.Run.Started))
		if !s.Run.Finished.IsZero() {
			fmt.Fprintf(ew, ", finished %s", fmtTime(s.Run.Finished))
		}
		if s.Run.Interrupted {
			fmt.Fprint(ew, " (interrupted)")
		}
		if s.Run.Version != "" {
			fmt.Fprintf(ew, ", hosteval %s", table.EscapeMarkdown(s.Run.Version))
		}
		fmt.Fprint(ew, ".\n\n")
	}
	icon := "✅"
	if s.Totals.Passed < s.Totals.Cases {
		icon = "❌"
	}
	fmt.Fprintf(ew, "%s **%s**: %d passed, %d failed, %d errored (pass rate %s)\n\n",
		icon, text.Count(s.Totals.Cases, "case"), s.Totals.Passed, s.Totals.Failed, s.Totals.Errored, fmtPct(s.Totals.PassRate))
	for _, warn := range s.Warnings {
		fmt.Fprintf(ew, "> warning: %s\n", table.EscapeMarkdown(warn))
	}
	if len(s.Warnings) > 0 {
		fmt.Fprint(ew, "\n")
	}
	// Everything goes through ew: after a failed write, every later one
	// fails at once with the same error.
	for _, t := range runTables(s) {
		if err := t.WriteMarkdown(ew); err != nil {
			return err
		}
	}
	if err := writeRoutingMarkdown(ew, s.Routing); err != nil {
		return err
	}
	failuresMarkdown.write(ew, opts.failures(s), "")
	cases, title := filesCaseTable(s)
	fmt.Fprintf(ew, "<details><summary>%s</summary>\n\n", title)
	cases.Title = ""
	if err := cases.WriteMarkdown(ew); err != nil {
		return err
	}
	fmt.Fprint(ew, "</details>\n\n")
	if len(opts.Gates) > 0 {
		if err := GateTable(opts.Gates).WriteMarkdown(ew); err != nil {
			return err
		}
	}
	if c := opts.Comparison; c != nil {
		fmt.Fprintf(ew, "### Compared with %s\n\n", table.EscapeMarkdown(c.OldID))
		for _, t := range c.Tables() {
			if err := t.WriteMarkdown(ew); err != nil {
				return err
			}
		}
	}
	if checks := opts.Checks(); len(checks) > 0 {
		fmt.Fprint(ew, "### Verdict\n\n")
		Lines(checks...).writeMarkdown(ew)
	}
	return ew.err
}

// CompareMarker starts the Markdown of a comparison, so that a CI job can
// find the pull-request comment it wrote before and update it.
const CompareMarker = "<!-- hosteval compare -->"

// WriteCompareMarkdown writes a comparison as Markdown for a pull-request
// comment: the two runs, the verdict lines first (groups that vanished or
// appeared lead them), then the tables folded in a <details> element.
func WriteCompareMarkdown(w io.Writer, c *Comparison) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "%s\n## hosteval compare\n\n", CompareMarker)
	fmt.Fprintf(ew, "%s (old) → %s (new), %s\n\n", table.EscapeMarkdown(c.OldID), table.EscapeMarkdown(c.NewID), text.Count(len(c.Groups), "scenario group"))
	lines := Lines(c.Check())
	lines.writeMarkdown(ew)
	fmt.Fprint(ew, "<details><summary>Figures per scenario</summary>\n\n")
	for _, t := range c.Tables() {
		if err := t.WriteMarkdown(ew); err != nil {
			return err
		}
	}
	fmt.Fprint(ew, "</details>\n")
	return ew.err
}

// writeRoutingMarkdown writes the routing section: the summary, the paired
// comparisons and accuracy against tokens in the open, and each group's
// tables folded, so that a pull-request comment stays short.
func writeRoutingMarkdown(w io.Writer, r *Routing) error {
	if r == nil {
		return nil
	}
	top := []*Table{RoutingTable(r)}
	top = append(top, pairedTables(r.Paired, "Paired A/B", markdownLimits)...)
	if r.hasAxis() {
		top = append(top, TokensTable(r))
	}
	for _, t := range top {
		if err := t.WriteMarkdown(w); err != nil {
			return err
		}
	}
	for i := range r.Groups {
		g := &r.Groups[i]
		if _, err := fmt.Fprintf(w, "<details><summary>Per tool and confusions: %s</summary>\n\n", table.EscapeMarkdown(g.Label())); err != nil {
			return err
		}
		ts := []*Table{ClassTable(g), ConfusionTable(g, markdownLimits.confusions)}
		if len(g.Classes) <= maxMarkdownMatrix {
			ts = append(ts, MatrixTable(g))
		}
		if t := TagTable(g); t != nil {
			ts = append(ts, t)
		}
		for _, t := range ts {
			if err := t.WriteMarkdown(w); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprint(w, "</details>\n\n"); err != nil {
			return err
		}
	}
	return nil
}

// maxMarkdownMatrix is the most classes whose whole matrix a Markdown
// report shows; a larger one is its top confusions only.
const maxMarkdownMatrix = 16
