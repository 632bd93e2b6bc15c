package report

import (
	"fmt"
	"io"
	"strings"
)

// Options adds verdicts to the Markdown and HTML reports of a run.
type Options struct {
	// Gates are shown, with their verdict, when not empty.
	Gates []GateResult
	// Comparison is shown, with its verdict, when not nil.
	Comparison *Comparison
}

// WriteMarkdown writes a Markdown summary of a run, for a CI step summary
// ($GITHUB_STEP_SUMMARY): totals, the summary and latency tables, A/B
// tables, the failures, then gates and a comparison when opts has them.
// The per-case table is folded in a <details> element.
func WriteMarkdown(w io.Writer, s *Summary, opts Options) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "## hosteval run %s\n\n", mdEscape(s.RunID))
	if s.Run != nil && !s.Run.Started.IsZero() {
		fmt.Fprintf(ew, "Started %s", fmtTime(s.Run.Started))
		if !s.Run.Finished.IsZero() {
			fmt.Fprintf(ew, ", finished %s", fmtTime(s.Run.Finished))
		}
		if s.Run.Interrupted {
			fmt.Fprint(ew, " (interrupted)")
		}
		if s.Run.Version != "" {
			fmt.Fprintf(ew, ", hosteval %s", mdEscape(s.Run.Version))
		}
		fmt.Fprint(ew, ".\n\n")
	}
	icon := "✅"
	if s.Totals.Passed < s.Totals.Cases {
		icon = "❌"
	}
	fmt.Fprintf(ew, "%s **%d cases**: %d passed, %d failed, %d errored (pass rate %s)\n\n",
		icon, s.Totals.Cases, s.Totals.Passed, s.Totals.Failed, s.Totals.Errored, fmtPct(s.Totals.PassRate))
	for _, warn := range s.Warnings {
		fmt.Fprintf(ew, "> warning: %s\n", mdEscape(warn))
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
	writeMarkdownFailures(ew, s)
	fmt.Fprint(ew, "<details><summary>All cases</summary>\n\n")
	cases := CaseTable(s)
	cases.Title = ""
	if err := cases.WriteMarkdown(ew); err != nil {
		return err
	}
	fmt.Fprint(ew, "</details>\n\n")
	if len(opts.Gates) > 0 {
		if err := GateTable(opts.Gates).WriteMarkdown(ew); err != nil {
			return err
		}
		writeMarkdownVerdict(ew, GateVerdict(opts.Gates), "Gates failed", "All gates held")
	}
	if c := opts.Comparison; c != nil {
		fmt.Fprintf(ew, "### Compared with %s\n\n", mdEscape(c.OldID))
		for _, t := range c.Tables() {
			if err := t.WriteMarkdown(ew); err != nil {
				return err
			}
		}
		writeMarkdownVerdict(ew, c.Verdict, "Regressed", "No regression")
	}
	return ew.err
}

func writeMarkdownFailures(w io.Writer, s *Summary) {
	first := true
	for i := range s.Cases {
		c := &s.Cases[i]
		if c.Passed() {
			continue
		}
		if first {
			fmt.Fprint(w, "### Failures\n\n")
			first = false
		}
		fmt.Fprintf(w, "- **%s** %s%s\n", strings.ToUpper(c.Status), mdEscape(c.Name), mdLocation(c.File, c.Line))
		if c.Error != "" {
			fmt.Fprintf(w, "  - %s\n", mdEscape(c.Error))
		}
		for _, e := range c.Failed {
			fmt.Fprintf(w, "  - %s%s", mdEscape(e.Name), mdLocation("", e.Line))
			if e.Detail != "" {
				fmt.Fprintf(w, ": %s", mdEscape(e.Detail))
			}
			fmt.Fprint(w, "\n")
		}
	}
	if !first {
		fmt.Fprint(w, "\n")
	}
}

func writeMarkdownVerdict(w io.Writer, v Verdict, bad, ok string) {
	for _, n := range v.Notes {
		fmt.Fprintf(w, "- note: %s\n", mdEscape(n))
	}
	if v.Regressed {
		fmt.Fprintf(w, "\n❌ **%s**:\n\n", bad)
		for _, r := range v.Reasons {
			fmt.Fprintf(w, "- %s\n", mdEscape(r))
		}
	} else {
		fmt.Fprintf(w, "\n✅ **%s**\n", ok)
	}
	fmt.Fprint(w, "\n")
}

// mdLocation is location escaped, keeping its leading space.
func mdLocation(file string, line int) string {
	loc := location(file, line)
	if loc == "" {
		return ""
	}
	return " " + mdEscape(loc)
}
