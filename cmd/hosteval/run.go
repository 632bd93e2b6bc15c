package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"time"

	"github.com/hosteval/hosteval/internal/report"
	"github.com/hosteval/hosteval/internal/scenario"
)

var runCommand = command{
	name:    "run",
	summary: "run scenario files and write results/<run-id>/",
	usage:   runUsage,
	run:     runRun,
}

const runUsage = `usage: hosteval run [flags] [paths...]

Runs every scenario in the given files and folders (default: scenarios/),
each case with its own fresh server processes (except servers marked
shareable), and writes results/<run-id>/: records.jsonl (one record per
case, appended and synced as each case ends), run.json, summary.json,
junit.xml, report.md, report.html, and under cases/ each case's log (the
host's events and the servers' request logs, interleaved; -logs failed
keeps only those of cases that did not pass, for speed on large runs). Prints the table when done; -json prints summary.json
instead. First Ctrl-C: no new cases start and running ones finish; second
Ctrl-C: exit now (what finished is already on disk).

Exit codes: 0 all passed and every gate held, 1 a case or gate failed,
2 a usage or scenario error, 3 a case could not run (a server would not
start, the model endpoint failed), 130 interrupted.

examples:
  hosteval run
  hosteval run -run 'ticket-.*' -repeat 5 scenarios/
  hosteval run -model openai:gpt-oss-120b -concurrency 4 scenarios/tickets.yaml
  hosteval run -gates scenarios/gates.yaml -baseline results/baseline`

func runRun(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "run", runUsage)
	concurrency := fs.Int("concurrency", runtime.NumCPU(), "cases running at once")
	runFilter := fs.String("run", "", "run only scenarios whose name (or name/variant) matches this regexp")
	repeat := fs.Int("repeat", 0, "run each case this many times (overrides the files' repeat)")
	modelFlag := fs.String("model", "", "run every scenario with this model instead of its own: openai:NAME")
	out := fs.String("out", "results", "folder to write the run folder into")
	runID := fs.String("run-id", "", "name of the run folder (default: a timestamp and a random suffix)")
	jsonOut := fs.Bool("json", false, "print summary.json to stdout instead of the tables")
	var layout layoutFlags
	layout.register(fs, true)
	wire := fs.Bool("wire", false, "write each case's wire trace (every JSON-RPC message) beside its log")
	logs := fs.String("logs", scenario.LogsAll, "which cases' logs to write: all, failed (those that did not pass) or none")
	share := fs.Bool("share", true, "keep servers marked shareable running across cases")
	preflight := fs.Bool("preflight", true, "check every tool name against the servers before running")
	gatesFile := fs.String("gates", "", "a gates file to check after the run (scenario files' gates always apply)")
	baseline := fs.String("baseline", "", "a run folder to compare with and to resolve 'baseline' in gates")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if *concurrency < 1 {
		return usageErr(e, "run: -concurrency must be at least 1")
	}
	switch *logs {
	case scenario.LogsAll, scenario.LogsFailed, scenario.LogsNone:
	default:
		return usageErr(e, "run: -logs: want all, failed or none, not %q", *logs)
	}
	paths := fs.Args()
	if len(paths) == 0 {
		paths = []string{"scenarios"}
	}
	var filter *regexp.Regexp
	if *runFilter != "" {
		re, err := regexp.Compile(*runFilter)
		if err != nil {
			return usageErr(e, "run: -run: %v", err)
		}
		filter = re
	}
	suite, err := scenario.Load(paths...)
	if err != nil {
		return scenarioErr(e, err)
	}
	copts := scenario.CaseOptions{Run: filter, Repeat: *repeat}
	if *modelFlag != "" {
		spec, err := scenario.ParseModelFlag(*modelFlag)
		if err != nil {
			return usageErr(e, "run: -model: %v", err)
		}
		copts.Models = []scenario.ModelSpec{spec}
	}
	cases, err := suite.Cases(copts)
	if err != nil {
		return scenarioErr(e, err)
	}
	if len(cases) == 0 {
		return usageErr(e, "run: no scenario matches -run %q", *runFilter)
	}
	// Only the scenarios that run are judged by their own gates: a -run
	// filter must not fail the gates of a scenario it left out.
	ran := &scenario.Suite{}
	for _, c := range cases {
		if !slices.Contains(ran.Scenarios, c.Scenario) {
			ran.Scenarios = append(ran.Scenarios, c.Scenario)
		}
	}
	gates, err := loadGates(ran, *gatesFile)
	if err != nil {
		return usageErr(e, "run: %v", err)
	}
	var base *report.Summary
	if *baseline != "" {
		if base, err = readSummary(*baseline); err != nil {
			return usageErr(e, "run: -baseline: %v", err)
		}
	}

	if *runID == "" {
		*runID = newRunID()
	}
	dir := filepath.Join(*out, *runID)
	terminal := isTerminal(e)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	drain := make(chan struct{})
	stopSignals := watchInterrupts(e, drain, cancel)
	defer stopSignals()

	res, err := scenario.Run(ctx, cases, scenario.RunOptions{
		Dir: dir, RunID: *runID, Args: append([]string{"hosteval", "run"}, args...),
		Concurrency: *concurrency, Share: *share, Wire: *wire, Logs: *logs, Progress: e.stderr, Terminal: terminal,
		Drain: drain, Preflight: *preflight,
	})
	if err != nil {
		var lerr *scenario.LoadError
		if errors.As(err, &lerr) {
			return scenarioErr(e, err)
		}
		fmt.Fprintf(e.stderr, "hosteval: run: %v\n", err)
		return exitInfra
	}
	verdict, code := writeReports(e, dir, gates, base, *jsonOut, layout.options(e, dir))
	if code != exitOK {
		return code
	}
	fmt.Fprintf(e.stderr, "%d cases: %d passed, %d failed, %d errors in %s; results in %s\n",
		res.Ran, res.Passed, res.Failed, res.Errors, res.Elapsed.Round(time.Millisecond), dir)
	switch {
	case res.Interrupted:
		fmt.Fprintf(e.stderr, "interrupted: %d of %d cases did not run\n", res.Total-res.Ran, res.Total)
		return exitSignaled
	case res.Errors > 0:
		return exitInfra
	case res.Failed > 0 || verdict.Regressed:
		return exitFailed
	}
	return exitOK
}

// watchInterrupts implements the run's Ctrl-C: the first closes drain (no
// new cases) and cancels running cases after a grace; the second cancels at
// once and exits. The returned func stops watching.
func watchInterrupts(e *env, drain chan struct{}, cancel context.CancelFunc) func() {
	if e.interrupts == nil {
		return func() {}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-e.interrupts:
		case <-done:
			return
		}
		fmt.Fprintln(e.stderr, "\nhosteval: interrupted: no new cases start; running ones get 10s to finish (Ctrl-C again to exit now)")
		close(drain)
		grace := time.NewTimer(10 * time.Second)
		defer grace.Stop()
		select {
		case <-e.interrupts:
			cancel()
			fmt.Fprintln(e.stderr, "hosteval: exiting now")
			// Finished cases are already on disk and servers die with us
			// (they are started with a parent-death signal).
			os.Exit(exitSignaled)
		case <-grace.C:
			cancel()
		case <-done:
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// scenarioErr prints a scenario loading error (every problem, one per line).
func scenarioErr(e *env, err error) int {
	fmt.Fprintf(e.stderr, "%v\n", err)
	return exitUsage
}

func newRunID() string {
	var b [3]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// isTerminal reports whether stderr is a terminal (a character device)
// outside CI, where progress can be redrawn in place.
func isTerminal(e *env) bool {
	f, ok := e.stderr.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && e.getenv("CI") == ""
}
