package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

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
report.md and report.html in DIR. -format prints one format to stdout
instead of the tables.

examples:
  hosteval report results/20261129-101500-a1b2c3
  hosteval report -format json results/latest > summary.json
  hosteval report -format markdown results/latest >> "$GITHUB_STEP_SUMMARY"`

func runReport(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "report", reportUsage)
	format := fs.String("format", "text", "what to print: text, json, junit, markdown or html")
	gatesFile := fs.String("gates", "", "a gates file to check and show")
	baseline := fs.String("baseline", "", "a run folder to compare with")
	var layout layoutFlags
	layout.register(fs, true)
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		return usageErr(e, "report: want one run folder, got %d arguments", fs.NArg())
	}
	dir := fs.Arg(0)
	gates, err := loadGates(nil, *gatesFile)
	if err != nil {
		return usageErr(e, "report: %v", err)
	}
	var base *report.Summary
	if *baseline != "" {
		if base, err = readSummary(*baseline); err != nil {
			return usageErr(e, "report: -baseline: %v", err)
		}
	}
	if *format == "text" {
		// A folder that is not a run is the caller's mistake, whatever the
		// format; writeReports would call it an infrastructure failure, as
		// it is right after a run.
		if _, err := os.Stat(filepath.Join(dir, report.RecordsFile)); err != nil {
			fmt.Fprintf(e.stderr, "hosteval: report: %s is not a run folder: %v\n", dir, err)
			return exitUsage
		}
		verdict, code := writeReports(e, dir, gates, base, false, layout.options(e, dir))
		if code != exitOK {
			return code
		}
		if verdict.Regressed {
			return exitFailed
		}
		return exitOK
	}
	s, err := readSummary(dir)
	if err != nil {
		fmt.Fprintf(e.stderr, "hosteval: report: %v\n", err)
		return exitUsage
	}
	opts := report.Options{Gates: report.EvaluateGates(s, gates, base)}
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
		return usageErr(e, "report: -format: want text, json, junit, markdown or html, not %q", *format)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "hosteval: report: %v\n", err)
		return exitInfra
	}
	return exitOK
}

// writeReports reads a run folder, writes its report files, prints the
// tables laid out by view (or summary.json), checks gates, and appends the
// Markdown summary to $GITHUB_STEP_SUMMARY when it is set. It returns the
// gates' verdict (with a baseline comparison folded in) and an exit code
// (exitOK unless the reports could not be written).
func writeReports(e *env, dir string, gates []report.Gate, base *report.Summary, jsonOut bool, view report.Options) (report.Verdict, int) {
	run, err := report.ReadRun(dir)
	if err != nil {
		fmt.Fprintf(e.stderr, "hosteval: report: %v\n", err)
		return report.Verdict{}, exitInfra
	}
	for _, w := range run.Warnings {
		fmt.Fprintf(e.stderr, "hosteval: %s\n", w)
	}
	s := report.Aggregate(run)
	opts := view
	if len(gates) > 0 {
		opts.Gates = report.EvaluateGates(s, gates, base)
	}
	if base != nil {
		opts.Comparison = report.Compare(base, s, report.DefaultThresholds())
	}
	if _, err := report.WriteReports(dir, s, opts); err != nil {
		fmt.Fprintf(e.stderr, "hosteval: report: %v\n", err)
		return report.Verdict{}, exitInfra
	}
	if path := e.getenv("GITHUB_STEP_SUMMARY"); path != "" {
		if err := appendFile(path, func(w io.Writer) error { return report.WriteMarkdown(w, s, opts) }); err != nil {
			fmt.Fprintf(e.stderr, "hosteval: report: $GITHUB_STEP_SUMMARY: %v\n", err)
		}
	}
	if jsonOut {
		err = report.WriteSummaryJSON(e.stdout, s)
	} else {
		err = report.WriteText(e.stdout, s, opts)
	}
	var verdict report.Verdict
	if len(opts.Gates) > 0 {
		verdict = report.GateVerdict(opts.Gates)
	}
	if opts.Comparison != nil && opts.Comparison.Verdict.Regressed {
		verdict.Regressed = true
		verdict.Reasons = append(verdict.Reasons, opts.Comparison.Verdict.Reasons...)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "hosteval: report: %v\n", err)
		return verdict, exitInfra
	}
	return verdict, exitOK
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
func loadGates(suite *scenario.Suite, file string) ([]report.Gate, error) {
	var gates []report.Gate
	if suite != nil {
		for _, s := range suite.Scenarios {
			gates = append(gates, s.Gates...)
		}
	}
	if file != "" {
		g, err := report.LoadGates(file)
		if err != nil {
			return nil, fmt.Errorf("-gates: %w", err)
		}
		gates = append(gates, g...)
	}
	return gates, nil
}

// readSummary aggregates a run folder (a baseline).
func readSummary(dir string) (*report.Summary, error) {
	run, err := report.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	return report.Aggregate(run), nil
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
with the Mann-Whitney U test; a change within noise prints "~". Exits 1 when
NEW regressed past the thresholds, or when a scenario, variant or model of
OLD is missing from NEW (listed first). -format markdown prints a comment
for a pull request; -format json the comparison as data.

examples:
  hosteval compare results/baseline results/20261129-101500-a1b2c3
  hosteval compare -tokens-pct 0 -alpha 0.01 results/a results/b
  hosteval compare -format markdown results/baseline results/latest > comment.md`

func runCompare(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "compare", compareUsage)
	th := report.DefaultThresholds()
	fs.Float64Var(&th.Alpha, "alpha", th.Alpha, "significance level")
	fs.Float64Var(&th.PassRateDrop, "pass-rate-drop", th.PassRateDrop, "tolerated significant drop in pass rate (0.1 = ten points)")
	fs.Float64Var(&th.ToolDefTokensPct, "tokens-pct", th.ToolDefTokensPct, "tolerated growth of tool-definition tokens, in percent (-1: off)")
	fs.Float64Var(&th.ResultBytesPct, "result-bytes-pct", th.ResultBytesPct, "tolerated growth of result bytes, in percent (-1: off)")
	fs.Float64Var(&th.UnknownTools, "unknown-tools", th.UnknownTools, "tolerated growth of unknown tools per case (-1: off)")
	fs.Float64Var(&th.P95LatencyPct, "p95-pct", th.P95LatencyPct, "tolerated significant growth of p95 call latency, in percent (-1: off)")
	format := fs.String("format", "text", "what to print: text, markdown or json")
	var layout layoutFlags
	layout.register(fs, false)
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 2 {
		return usageErr(e, "compare: want two run folders, OLD and NEW")
	}
	write, ok := map[string]func(io.Writer, *report.Comparison) error{
		"text": func(w io.Writer, c *report.Comparison) error {
			opts := layout.options(e, "")
			opts.Comparison = c
			return report.WriteVerdicts(w, opts)
		},
		"markdown": report.WriteCompareMarkdown,
		"json":     report.WriteCompareJSON,
	}[*format]
	if !ok {
		return usageErr(e, "compare: -format: want text, markdown or json, not %q", *format)
	}
	old, err := readSummary(fs.Arg(0))
	if err != nil {
		return usageErr(e, "compare: %v", err)
	}
	cur, err := readSummary(fs.Arg(1))
	if err != nil {
		return usageErr(e, "compare: %v", err)
	}
	c := report.Compare(old, cur, th)
	if err := write(e.stdout, c); err != nil {
		fmt.Fprintf(e.stderr, "hosteval: compare: %v\n", err)
		return exitInfra
	}
	if c.Verdict.Regressed {
		return exitFailed
	}
	return exitOK
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
"tool_def_tokens <= baseline * 1.05". Exits 1 when a gate fails.

examples:
  hosteval gate -gates scenarios/gates.yaml results/latest
  hosteval gate -gates scenarios/gates.yaml -baseline results/baseline results/latest`

func runGate(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "gate", gateUsage)
	gatesFile := fs.String("gates", "", "a gates file")
	scenarios := fs.String("scenarios", "", "scenario files or folders whose gates apply")
	baseline := fs.String("baseline", "", "a run folder to compare with")
	var layout layoutFlags
	layout.register(fs, false)
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		return usageErr(e, "gate: want one run folder")
	}
	var suite *scenario.Suite
	if *scenarios != "" {
		s, err := scenario.Load(splitList(*scenarios)...)
		if err != nil {
			return scenarioErr(e, err)
		}
		suite = s
	}
	gates, err := loadGates(suite, *gatesFile)
	if err != nil {
		return usageErr(e, "gate: %v", err)
	}
	if len(gates) == 0 && *baseline == "" {
		return usageErr(e, "gate: nothing to check: give -gates, -scenarios with gates, or -baseline")
	}
	s, err := readSummary(fs.Arg(0))
	if err != nil {
		return usageErr(e, "gate: %v", err)
	}
	var base *report.Summary
	if *baseline != "" {
		if base, err = readSummary(*baseline); err != nil {
			return usageErr(e, "gate: -baseline: %v", err)
		}
	}
	// One block of verdict lines for the gates and the comparison, so that
	// what held never reads as the verdict under what failed.
	opts := layout.options(e, "")
	if len(gates) > 0 {
		opts.Gates = report.EvaluateGates(s, gates, base)
	}
	if base != nil {
		opts.Comparison = report.Compare(base, s, report.DefaultThresholds())
	}
	if err := report.WriteVerdicts(e.stdout, opts); err != nil {
		fmt.Fprintf(e.stderr, "hosteval: gate: %v\n", err)
		return exitInfra
	}
	for _, c := range opts.Checks() {
		if c.Regressed {
			return exitFailed
		}
	}
	return exitOK
}
