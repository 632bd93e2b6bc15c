package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hosteval/hosteval/internal/gate"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/report"
	"github.com/hosteval/hosteval/internal/scenario"
)

var reportCommand = command{
	name:    "report",
	summary: "rebuild reports from a results folder",
	usage:   reportUsage,
	run:     runReport,
}

const reportUsage = `usage: hosteval report [flags] DIR

Rebuilds every report of a run from its records.jsonl alone (it works on an
interrupted run): prints the tables, and rewrites summary.json, junit.xml,
report.md and report.html in DIR, and under DIR/transcripts/ the transcript
of each case that did not pass (-transcripts: of every case), as Markdown
and HTML, linked from report.md and report.html. -format prints one
format to stdout instead of the tables.

examples:
  hosteval report results/20261129-101500-a1b2c3
  hosteval report -format json results/latest > summary.json
  hosteval report -format markdown results/latest >> "$GITHUB_STEP_SUMMARY"`

func runReport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "report", reportUsage)
	format := fs.String("format", "text", "what to print: text, json, junit, markdown or html")
	gatesFile := fs.String("gates", "", "a gates file to check and show")
	partial := fs.Bool("partial", false, "let the checks of a run that did not record every case (killed, interrupted) pass")
	var baseline baselineFlags
	baseline.register(fs)
	var layout layoutFlags
	layout.register(fs, true)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want one run folder, got %d arguments", fs.NArg())
	}
	dir := fs.Arg(0)
	gates, err := loadGates(nil, *gatesFile)
	if err != nil {
		return err
	}
	base, err := baseline.read(e, gates)
	if err != nil {
		return err
	}
	if *format == "text" {
		// A folder that is not a run is the caller's mistake, whatever the
		// format; writeReports would call it an infrastructure failure, as
		// it is right after a run.
		if _, err := os.Stat(filepath.Join(dir, record.RecordsFile)); err != nil {
			return usagef("%s is not a run folder: %w", dir, err)
		}
		view := layout.options(e, dir)
		view.Partial = *partial
		verdict, err := writeReports(e, dir, gates, base, false, view)
		if err != nil {
			return err
		}
		if err := uncheckable(verdict); err != nil {
			return err
		}
		if verdict.Regressed {
			return failedf("the checks failed")
		}
		return nil
	}
	s, err := readSummary(dir)
	if err != nil {
		return usageError{err}
	}
	opts := report.Judge(s, gates, base, report.Options{Partial: *partial})
	switch *format {
	case "json":
		err = report.WriteSummaryJSON(e.stdout, s)
	case "junit":
		err = report.WriteJUnit(e.stdout, s)
	case "markdown":
		err = report.WriteMarkdown(e.stdout, s, opts)
	case "html":
		err = report.WriteHTML(e.stdout, s, opts)
	default:
		return usagef("-format: want text, json, junit, markdown or html, not %q", *format)
	}
	return err
}

// writeReports reads a run folder, writes its report files, prints the
// tables laid out by view (or summary.json), checks gates and the
// baseline, and appends the Markdown summary to $GITHUB_STEP_SUMMARY when
// it is set. It returns the checks' verdict.
func writeReports(e *env, dir string, gates []gate.Gate, base *report.Summary, jsonOut bool, view report.Options) (report.Verdict, error) {
	// One pass over the records makes the figures and the transcripts.
	var runID string // the records' own when run.json has none
	if info, err := record.ReadRunInfo(dir); err == nil {
		runID = info.RunID
	}
	transcripts := report.NewTranscriptWriter(dir, runID, view.AllTranscripts)
	s, err := report.ReadEach(dir, transcripts.Add)
	stems, terr := transcripts.Close()
	if err == nil {
		err = terr
	}
	if err != nil {
		return report.Verdict{}, err
	}
	view.Transcripts = stems
	for _, w := range s.Warnings {
		fmt.Fprintf(e.stderr, "hosteval: %s\n", w)
	}
	opts := report.Judge(s, gates, base, view)
	if _, err := report.WriteReports(dir, s, opts); err != nil {
		return report.Verdict{}, err
	}
	if path := e.getenv("GITHUB_STEP_SUMMARY"); path != "" {
		// The step summary is a page of its own: a link into the run
		// folder would lead nowhere from it.
		step := opts
		step.Transcripts = nil
		if err := appendFile(path, func(w io.Writer) error { return report.WriteMarkdown(w, s, step) }); err != nil {
			fmt.Fprintf(e.stderr, "hosteval: $GITHUB_STEP_SUMMARY: %v\n", err)
		}
	}
	if jsonOut {
		err = report.WriteSummaryJSON(e.stdout, s)
	} else {
		out := fitLines(e.stdout, opts.Width)
		err = errors.Join(report.WriteText(out, s, opts), out.Close())
	}
	return opts.Verdict(), err
}

func appendFile(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// loadGates gathers the gates of the loaded scenarios (if any) and of a gates file.
func loadGates(suite *scenario.Suite, file string) ([]gate.Gate, error) {
	var gates []gate.Gate
	if suite != nil {
		for _, s := range suite.Scenarios {
			gates = append(gates, s.Gates...)
		}
	}
	if file != "" {
		g, err := gate.Load(file)
		if err != nil {
			return nil, usagef("-gates: %w", err)
		}
		gates = append(gates, g...)
	}
	return gates, nil
}

// loadScenarios loads the scenarios of -scenarios (comma-separated files or
// folders), for their gates; nil when the flag is not given.
func loadScenarios(list string) (*scenario.Suite, error) {
	if list == "" {
		return nil, nil
	}
	suite, err := scenario.Load(splitList(list)...)
	if err != nil {
		// Every problem of the files, or a path that is not there.
		return nil, usageError{err}
	}
	return suite, nil
}

// readSummary aggregates a run folder.
func readSummary(dir string) (*report.Summary, error) {
	return report.Read(dir)
}

// baselineFlags are -baseline and -require-baseline, on the commands
// that judge a run (run, report, gate, merge).
type baselineFlags struct {
	dir     string
	require bool
}

func (b *baselineFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.dir, "baseline", "", "a run folder to compare with and to resolve 'baseline' in gates (one not there yet is a first run: those gates pass with a note)")
	fs.BoolVar(&b.require, "require-baseline", false, "fail when the gates compare with a baseline and there is none")
}

// read aggregates -baseline's run folder; nil when there is none. A
// folder not there yet is a suite's first run, said on stderr: the gates
// that compare with it pass, each with the note "no baseline yet", so that
// a pipeline's first run makes the baseline its later runs compare with.
// With -require-baseline a gate on a baseline that is missing is an error
// (2), found before any case runs.
func (b *baselineFlags) read(e *env, gates []gate.Gate) (*report.Summary, error) {
	if b.dir != "" {
		if _, err := os.Stat(b.dir); err != nil && errors.Is(err, os.ErrNotExist) && !b.require {
			fmt.Fprintf(e.stderr, "hosteval: no baseline yet: %s is not there; the gates that compare with it are not checked\n", b.dir)
			return nil, nil
		}
		base, err := readSummary(b.dir)
		if err != nil {
			return nil, usagef("-baseline: %w", err)
		}
		return base, nil
	}
	if b.require {
		for _, g := range gates {
			if g.Baseline {
				return nil, usagef("-require-baseline: %s: %s compares with a baseline, and no -baseline is given", g.Pos, g.Text)
			}
		}
	}
	return nil, nil
}

var compareCommand = command{
	name:    "compare",
	summary: "compare two runs, benchstat style",
	usage:   compareUsage,
	run:     runCompare,
}

const compareUsage = `usage: hosteval compare [flags] OLD NEW

Compares two run folders per scenario, variant and model: pass rate,
tool-definition tokens, result bytes, unknown tools, call latency. With
repeats, a pass-rate change is tested with Fisher's exact test and latency
with the Mann-Whitney U test; a change within noise prints "~". A latency
change is also measured, as the ratio new/old with its 95% interval
(Hodges-Lehmann), and counts only when that interval lies beyond
-min-effect: two runs of one commit differ by tens of percent on a busy
machine. Exits 1 when NEW regressed past the thresholds, or when a
scenario, variant or model of OLD is missing from NEW (listed first), or
when either run did not record every case it set out to (unless -partial).
-format markdown prints a comment for a pull request; -format json the
comparison as data.

examples:
  hosteval compare results/baseline results/20261129-101500-a1b2c3
  hosteval compare -tokens-pct 0 -alpha 0.01 results/a results/b
  hosteval compare -min-effect 10 results/a results/b   # a machine of one's own
  hosteval compare -format markdown results/baseline results/latest > comment.md`

func runCompare(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "compare", compareUsage)
	th := report.DefaultThresholds()
	fs.Float64Var(&th.Alpha, "alpha", th.Alpha, "significance level")
	fs.Float64Var(&th.PassRateDrop, "pass-rate-drop", th.PassRateDrop, "tolerated significant drop in pass rate (0.1 = ten points)")
	fs.Float64Var(&th.ToolDefTokensPct, "tokens-pct", th.ToolDefTokensPct, "tolerated growth of tool-definition tokens, in percent (-1: off)")
	fs.Float64Var(&th.ResultBytesPct, "result-bytes-pct", th.ResultBytesPct, "tolerated growth of result bytes, in percent (-1: off)")
	fs.Float64Var(&th.UnknownTools, "unknown-tools", th.UnknownTools, "tolerated growth of unknown tools per case (-1: off)")
	fs.Float64Var(&th.MinEffectPct, "min-effect", th.MinEffectPct, "least slowdown of calls that counts, in percent: the 95% interval of the new/old ratio must lie above it (the default is this machine's run-to-run noise)")
	fs.Float64Var(&th.P95LatencyPct, "p95-pct", th.P95LatencyPct, "growth of p95 call latency that a slowdown must also show, in percent (-1: no latency check)")
	format := fs.String("format", "text", "what to print: text, markdown or json")
	partial := fs.Bool("partial", false, "compare runs that did not record every case (killed, interrupted) without failing")
	var layout layoutFlags
	layout.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("want two run folders, OLD and NEW")
	}
	write, ok := map[string]func(io.Writer, *report.Comparison) error{
		"text": func(w io.Writer, c *report.Comparison) error {
			opts := layout.options(e, "")
			opts.Comparison = c
			out := fitLines(w, opts.Width)
			return errors.Join(report.WriteVerdicts(out, opts), out.Close())
		},
		"markdown": report.WriteCompareMarkdown,
		"json":     report.WriteCompareJSON,
	}[*format]
	if !ok {
		return usagef("-format: want text, markdown or json, not %q", *format)
	}
	old, err := readSummary(fs.Arg(0))
	if err != nil {
		return usageError{err}
	}
	cur, err := readSummary(fs.Arg(1))
	if err != nil {
		return usageError{err}
	}
	c := report.Compare(old, cur, th)
	if err := write(e.stdout, c); err != nil {
		return err
	}
	// A comparison with a run that did not record every case compares
	// only the cases recorded.
	incomplete := report.IncompleteRuns(cur, old)
	for _, why := range incomplete {
		fmt.Fprintf(e.stderr, "hosteval: compare: %s\n", why)
	}
	if c.Verdict.Regressed {
		return failedf("%s regressed from %s", c.NewID, c.OldID)
	}
	if len(incomplete) > 0 && !*partial {
		return failedf("the comparison is of an incomplete run (-partial lets it pass)")
	}
	return nil
}

var gateCommand = command{
	name:    "gate",
	summary: "check a run against gates and a baseline",
	usage:   gateUsage,
	run:     runGate,
}

const gateUsage = `usage: hosteval gate [flags] DIR

Checks a run folder against gates: those of a gates file (-gates), those
written in scenario files (-scenarios), and a comparison with a baseline
run (-baseline), which also resolves "baseline" in gates such as
"tool_def_tokens <= baseline * 1.05". Exits 1 when a gate fails, and when
the run (or the baseline) did not record every case it set out to (killed,
interrupted, a full disk: "116 of 200 cases recorded; the run did not
finish"), unless -partial lets it pass.

examples:
  hosteval gate -gates scenarios/gates.yaml results/latest
  hosteval gate -gates scenarios/gates.yaml -baseline results/baseline \
    results/latest`

func runGate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "gate", gateUsage)
	gatesFile := fs.String("gates", "", "a gates file")
	scenarios := fs.String("scenarios", "", "scenario files or folders whose gates apply")
	partial := fs.Bool("partial", false, "let a run that did not record every case (killed, interrupted) pass, if its gates hold")
	var baseline baselineFlags
	baseline.register(fs)
	var layout layoutFlags
	layout.register(fs, false)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want one run folder")
	}
	suite, err := loadScenarios(*scenarios)
	if err != nil {
		return err
	}
	gates, err := loadGates(suite, *gatesFile)
	if err != nil {
		return err
	}
	if len(gates) == 0 && baseline.dir == "" {
		return usagef("nothing to check: give -gates, -scenarios with gates, or -baseline")
	}
	s, err := readSummary(fs.Arg(0))
	if err != nil {
		return usageError{err}
	}
	base, err := baseline.read(e, gates)
	if err != nil {
		return err
	}
	// One block of verdict lines for the gates and the comparison, so that
	// what held never reads as the verdict under what failed.
	view := layout.options(e, "")
	view.Partial = *partial
	opts := report.Judge(s, gates, base, view)
	out := fitLines(e.stdout, view.Width)
	if err := errors.Join(report.WriteVerdicts(out, opts), out.Close()); err != nil {
		return err
	}
	if err := uncheckable(opts.Verdict()); err != nil {
		return err
	}
	if opts.Verdict().Regressed {
		return failedf("the checks failed")
	}
	return nil
}
