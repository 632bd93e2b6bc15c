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
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hosteval/hosteval/internal/gate"
	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/lint"
	"github.com/hosteval/hosteval/internal/model/replay"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/report"
	"github.com/hosteval/hosteval/internal/runner"
	"github.com/hosteval/hosteval/internal/scaffold"
	"github.com/hosteval/hosteval/internal/scenario"
	"github.com/hosteval/hosteval/internal/text"
)

var runCommand = command{
	name:        "run",
	summary:     "run scenario files and write results/<run-id>/",
	usage:       runUsage,
	onInterrupt: drainCases,
	run:         runRun,
}

const runUsage = `usage: hosteval run [flags] [paths...]

Runs every scenario in the given files and folders (default: scenarios/),
each case with its own fresh server processes (except servers marked
shareable), and writes results/<run-id>/: records.jsonl (one record per
case, appended and synced as each case ends), run.json, summary.json,
junit.xml, report.md, report.html, under cases/ each case's log (the
host's events and the servers' request logs, interleaved; -logs failed
keeps only those of cases that did not pass, for speed on large runs), and
under transcripts/ the transcript of each case that did not pass, linked
from report.md and report.html (hosteval show prints one; hosteval view
shows the run in a browser). Prints the table when done; -json prints
summary.json instead. First Ctrl-C (or SIGTERM): no new cases start and
running ones get 10s to finish; second: every server (and what it
started) is killed, run.json records the run as interrupted, and hosteval
exits (what finished is already on disk).

-shard K/N runs shard K of N: a deterministic, balanced slice of the
cases (by a hash of their IDs, the same on every machine); hosteval merge
joins the shards' run folders into one run. The shard may also come from
$HOSTEVAL_SHARD=K/N, or in a Kubernetes Indexed Job from -shard-count N
with $JOB_COMPLETION_INDEX (0-based: index i runs shard i+1 of N).

The budget flags, one for each budget of a scenario's host: block
(-connect-timeout, -tool-timeout, -max-steps, ...; listed below), override
the scenarios' host settings. A server that never answers server/discover
is found out once per run (by the preflight, or the first case) and the
other cases go straight to the 2025-11-25 initialize; -eras-file FILE
remembers such servers across runs, for a day (a remembered server that
then fails is probed afresh).

Servers with an oauth: block are authorised before the first case, once
for the whole run: a cached token asks no one; else the URL to open is
printed (-open opens it) and the run waits for you (-person-timeout,
default 5m). In CI use flow: client_credentials, or a cached token.


Real models: -record DIR keeps every model request of every case, and the
endpoint's answer, in DIR/<scenario>/[<variant>/]<model>.<repeat>.yaml;
-replay DIR answers them from there, offline, and fails a case whose
conversation asks something not recorded, saying what changed (a scenario's
cassettes: does the same without a flag). Secrets never enter a cassette.
-cache answers requests seen before from a local cache (docs/models.md).

-lint lints the servers' catalogs before the cases, as hosteval lint
does, with the lint: sections of the servers files the scenarios read
(rule levels, suppressions, fail_on): the findings are printed first and
kept in run.json's lint; -pins FILE also compares them with a lock of
hosteval pin (rule pin-changed, with the diff). The cases run either way;
a finding at or above -fail-on (default: the servers file's fail_on, else
error) fails the run (exit 1); a server that does not start in the
preflight is not linted, named with why, and the run exits 3.

A slow suite: -cpuprofile FILE, -memprofile FILE and -trace FILE write Go's
CPU profile, memory profile and execution trace of the hosteval process
(loading, the cases, the reports; not the servers'), for go tool pprof FILE
and go tool trace FILE.

Exit codes: 0 all passed and every gate held, 1 a case or gate failed (a
replayed conversation that left its cassette fails its case), 2 a usage,
scenario or configuration error (also a model endpoint refusing the key,
model name or URL), 3 a case could not run (a server would not start, the
model endpoint failed after its retries), 130 interrupted.

examples:
  hosteval run
  hosteval run -run 'ticket-.*' -repeat 5 scenarios/
  hosteval run -model openai:gpt-oss-120b -concurrency 4 scenarios/tickets.yaml
  hosteval run -gates scenarios/gates.yaml -baseline results/baseline
  hosteval run -record scenarios/cassettes -model openai:gpt-oss-120b \
    scenarios/ab.yaml
  hosteval run -replay scenarios/cassettes scenarios/ab.yaml
  hosteval run -shard 2/4 -out results/shard-2 scenarios/
  hosteval run -pins hosteval.lock -fail-on warning scenarios/
  hosteval run -cpuprofile cpu.pprof scenarios/ && go tool pprof -top cpu.pprof`

func runRun(ctx context.Context, e *env, args []string) (err error) {
	f, err := parseRunFlags(e, args)
	if err != nil {
		return err
	}
	stopProfiles, err := f.profiles.start()
	if err != nil {
		return err
	}
	defer func() {
		if perr := stopProfiles(); perr != nil && err == nil {
			err = perr
		}
	}()
	plan, err := planRun(ctx, e, f)
	if err != nil {
		return err
	}
	// Before any case: a person's login is not a case's time.
	if err := plan.auth.login(ctx); err != nil {
		return err
	}

	if f.runID == "" {
		f.runID = newRunID()
	}
	dir := filepath.Join(f.out, f.runID)
	start := time.Now()
	prog := newProgress(e.stderr, isTerminal(e), terminalWidth(e), len(plan.cases), start)
	stopProgress := sync.OnceFunc(prog.stop)
	defer stopProgress()
	opts := runner.Options{
		Dir: dir, RunID: f.runID, Args: append([]string{"hosteval", "run"}, args...), Suite: plan.suiteID, Shard: f.shard,
		Concurrency: f.concurrency, Share: f.share, Wire: f.wire, Logs: f.logs, Preflight: f.preflight,
		OnCase: prog.done,
		Drain:  e.interrupt.first, DrainGrace: drainGrace, Abort: e.interrupt.second, Groups: e.groups,
		Cassettes: f.cassettes, Cache: f.cache,
		Eras: host.NewEras(f.erasFile),
	}
	if f.budgets.set() {
		opts.Override = f.budgets.apply
	}
	if f.lint {
		// The servers files' lint: sections, as hosteval lint reads
		// them; -fail-on over theirs.
		cfg := plan.lint.Merge(lint.Config{FailOn: f.failOn})
		opts.Lint = &lint.Options{Config: cfg, Namespace: host.Namespaced, Pins: f.pins, PinsFile: f.pinsFile}
		opts.OnLint = func(rep *lint.Report) {
			// Before the cases, on stdout unless it is summary.json's.
			w := e.stdout
			if f.jsonOut {
				w = e.stderr
			}
			rep.WriteText(w, lint.TextOptions{Width: f.layout.width(e)})
		}
	}
	var verdict report.Verdict
	opts.Finish = func(res runner.Result, stopped <-chan struct{}) error {
		stopProgress()
		if secondInterrupt(e) {
			return nil // no reports: see runEnd
		}
		if res.Passed < res.Ran || f.layout.transcripts {
			// The transcripts of these cases read the shared servers'
			// log, which is complete once they have stopped.
			<-stopped
		}
		var err error
		verdict, err = writeReports(e, dir, plan.gates, plan.base, f.jsonOut, f.layout.options(e, dir))
		returnHeapWhile(stopped, debug.FreeOSMemory)
		return err
	}
	stopNotice := noticeDrain(e, drainGrace)
	// The plan stays reachable from Finish, which runs at the end; its
	// cases must not: the runner lets go of them once they have started,
	// and a run of 100,000 would hold them all through its reports.
	cases := plan.cases
	plan.cases = nil
	if n := runProcs(e.getenv, f.concurrency, len(cases)); n > 0 && e.maxProcs != nil {
		e.maxProcs(n)
	}
	res, err := runner.Run(ctx, cases, opts)
	stopNotice()
	stopProgress()
	if err != nil {
		return err
	}
	return runEnd(e, res, dir, verdict)
}

// runFlags are run's command line, checked, with the cassettes, shard and
// cache they name.
type runFlags struct {
	concurrency, repeat          int
	runFilter, model, out, runID string
	jsonOut                      bool
	layout                       layoutFlags
	wire                         bool
	logs                         string
	share, preflight             bool
	gatesFile                    string
	baseline                     baselineFlags
	budgets                      budgetFlags
	models                       modelFlags
	erasFile                     string
	shards                       shardFlags
	// lint is -lint, or -pins given: pinsFile is its lock, read into
	// pins; failOn is -fail-on.
	lint        bool
	pinsFile    string
	pins        *lint.Lock
	failOn      lint.Severity
	openBrowser bool
	profiles    profileFlags

	paths     []string
	filter    *regexp.Regexp
	cassettes *runner.Cassettes
	shard     record.Shard
	cache     *replay.Cache
}

// parseRunFlags reads run's flags and checks them, in the order their
// errors are reported: a usage error names the flag.
func parseRunFlags(e *env, args []string) (*runFlags, error) {
	f := &runFlags{}
	fs := newFlags(e, "run", runUsage)
	fs.IntVar(&f.concurrency, "concurrency", runtime.NumCPU(), "cases running at once")
	fs.StringVar(&f.runFilter, "run", "", "run only scenarios whose name (or name/variant, or a dataset row's name/row or name/variant/row) matches this regexp")
	fs.IntVar(&f.repeat, "repeat", 0, "run each case this many times (overrides the files' repeat)")
	fs.StringVar(&f.model, "model", "", "run every scenario with this model instead of its own: openai:NAME, or lexical[:MIN_SCORE] (the lexical router)")
	fs.StringVar(&f.out, "out", "results", "folder to write the run folder into")
	fs.StringVar(&f.runID, "run-id", "", "name of the run folder (default: a timestamp and a random suffix)")
	fs.BoolVar(&f.jsonOut, "json", false, "print summary.json to stdout instead of the tables")
	f.layout.register(fs, true)
	fs.BoolVar(&f.wire, "wire", false, "write each case's wire trace (every JSON-RPC message) beside its log")
	fs.StringVar(&f.logs, "logs", runner.LogsAll, "which cases' logs to write: all, failed (those that did not pass) or none")
	fs.BoolVar(&f.share, "share", true, "keep servers marked shareable running across cases")
	fs.BoolVar(&f.preflight, "preflight", true, "check every tool name against the servers before running")
	fs.StringVar(&f.gatesFile, "gates", "", "a gates file to check after the run (scenario files' gates always apply)")
	f.baseline.register(fs)
	f.budgets.register(fs)
	f.models.register(fs)
	fs.StringVar(&f.erasFile, "eras-file", "", "remember the servers that never answer server/discover in this file, across runs, for a day (default: within this run only)")
	f.shards.register(fs)
	registerOpen(fs, &f.openBrowser)
	f.profiles.register(fs)
	fs.BoolVar(&f.lint, "lint", false, "lint the servers' catalogs before the cases (hosteval lint's rules): the findings go to run.json, and one at or above -fail-on fails the run")
	fs.StringVar(&f.pinsFile, "pins", "", "compare the servers' catalogs with this lock of hosteval pin before the cases (implies -lint): a changed definition fails the run")
	failOn := fs.String("fail-on", "", "with -lint or -pins: the least severity of a finding that fails the run: error, warning, note or none (default: the servers file's fail_on, else error)")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	var err error
	if f.pins, err = readPins(f.pinsFile); err != nil {
		return nil, err
	}
	f.lint = f.lint || f.pins != nil
	if *failOn != "" {
		if !f.lint {
			return nil, usagef("-fail-on %s: it says which lint findings fail the run; add -lint or -pins", *failOn)
		}
		if f.failOn, err = lint.ParseFailOn(*failOn); err != nil {
			return nil, usagef("-fail-on %w", err)
		}
	}
	if f.cassettes, err = f.models.cassettes(); err != nil {
		return nil, err
	}
	if f.shard, err = f.shards.selected(e.getenv); err != nil {
		return nil, err
	}
	if f.concurrency < 1 {
		return nil, usagef("-concurrency must be at least 1")
	}
	switch f.logs {
	case runner.LogsAll, runner.LogsFailed, runner.LogsNone:
	default:
		return nil, usagef("-logs: want all, failed or none, not %q", f.logs)
	}
	if err := f.budgets.check(); err != nil {
		return nil, err
	}
	f.paths = fs.Args()
	if len(f.paths) == 0 {
		if err := defaultSuite("."); err != nil {
			return nil, err
		}
		f.paths = []string{"scenarios"}
	}
	if f.runFilter != "" {
		if f.filter, err = regexp.Compile(f.runFilter); err != nil {
			return nil, usagef("-run: %w", err)
		}
	}
	if f.cache, err = f.models.openCache(e.getenv); err != nil {
		return nil, err
	}
	return f, nil
}

// defaultSuite checks that dir has the default suite, scenarios/, and
// when it has not says where a suite is: the folder itself, or the folder
// `hosteval init` wrote (a servers file and a gates file side by side),
// with the command that runs it.
func defaultSuite(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "scenarios")); err == nil {
		return nil
	}
	isSuite := func(d string) bool {
		for _, name := range []string{scaffold.ServersFile, scaffold.GatesFile} {
			if fi, err := os.Stat(filepath.Join(d, name)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if isSuite(dir) {
		return usagef("no scenarios/ folder here, but this folder is a suite: hosteval run -gates %s .", scaffold.GatesFile)
	}
	entries, _ := os.ReadDir(dir)
	var found []string
	for _, de := range entries {
		if de.IsDir() && isSuite(filepath.Join(dir, de.Name())) {
			found = append(found, de.Name()+"/")
		}
	}
	switch len(found) {
	case 0:
		return usagef("no scenarios/ folder here: name the scenario files or folders to run (hosteval run PATH...), or start a suite with hosteval init")
	case 1:
		return usagef("no scenarios/ folder here; the suite is in %s: hosteval run -gates %[1]s%s %[1]s", found[0], scaffold.GatesFile)
	}
	return usagef("no scenarios/ folder here; suites are in %s: hosteval run -gates DIR/%s DIR/", strings.Join(found, ", "), scaffold.GatesFile)
}

// runPlan is what a run will do: its cases (the shard's, when it is
// one), the suite they came from, the gates and baseline that judge them,
// and the logins their servers need.
type runPlan struct {
	cases   []*scenario.Case
	suiteID string
	gates   []gate.Gate
	base    *report.Summary
	auth    *logins
	// lint is the lint: sections of the servers files the suite reads
	// (with -lint or -pins), merged as hosteval lint merges them.
	lint lint.Config
}

// planRun loads the scenarios f names and makes their cases.
func planRun(ctx context.Context, e *env, f *runFlags) (*runPlan, error) {
	// The first interrupt stops the loading too: run reads the interrupt
	// itself (drainCases), and a large suite takes a while to read.
	loading, stopLoading := untilClosed(ctx, e.interrupt.first)
	suite, err := scenario.LoadContext(loading, f.paths...)
	stopLoading()
	if err != nil {
		if errors.Is(err, errInterrupted) {
			return nil, interruptedf("interrupted while loading the scenarios: no case ran")
		}
		// Every problem of the files, or a path that is not there.
		return nil, usageError{err}
	}
	p := &runPlan{auth: newLogins(e, f.openBrowser, f.budgets.PersonTimeout)}
	copts := scenario.CaseOptions{Run: f.filter, Repeat: f.repeat, OAuth: p.auth.build}
	if f.model != "" {
		spec, err := parseModelFlag(f.model, e.getenv)
		if err != nil {
			return nil, usagef("-model: %w", err)
		}
		copts.Models = []scenario.ModelSpec{spec}
	}
	if p.cases, err = suite.Cases(copts); err != nil {
		return nil, usageError{err}
	}
	if len(p.cases) == 0 {
		return nil, usagef("no scenario matches -run %q", f.runFilter)
	}
	p.suiteID = runner.SuiteID(suite, p.cases)
	if !f.shard.IsZero() {
		if f.baseline.dir != "" {
			// A shard lacks the other shards' scenarios, which a comparison
			// would count as vanished.
			return nil, usagef("-baseline compares whole runs: give it to hosteval merge, which joins the shards")
		}
		all := len(p.cases)
		p.cases = runner.SelectShard(p.cases, f.shard)
		fmt.Fprintf(e.stderr, "shard %s: %d of the suite's %s\n", f.shard, len(p.cases), text.Count(all, "case"))
	}
	// Only the scenarios that run are judged by their own gates: a -run
	// filter must not fail the gates of a scenario it left out.
	ran := &scenario.Suite{}
	for _, c := range p.cases {
		if !slices.Contains(ran.Scenarios, c.Scenario) {
			ran.Scenarios = append(ran.Scenarios, c.Scenario)
		}
	}
	if p.gates, err = loadGates(ran, f.gatesFile); err != nil {
		return nil, err
	}
	if err := costGatesPriced(p.gates, p.cases); err != nil {
		return nil, err
	}
	if p.base, err = f.baseline.read(e, p.gates); err != nil {
		return nil, err
	}
	if f.lint {
		settings, err := lintSettings(suite.ServersFiles)
		if err != nil {
			return nil, err
		}
		p.lint = fileConfigs(settings)
	}
	return p, nil
}

// costGatesPriced refuses, before anything runs, a cost gate on a case
// whose models have no price: their requests would cost 0, which passes
// any bound.
func costGatesPriced(gates []gate.Gate, cases []*scenario.Case) error {
	for _, g := range gates {
		if g.Metric != "cost" {
			continue
		}
		for _, c := range cases {
			unpriced := c.Unpriced()
			if len(unpriced) == 0 || !g.Matches(c.Scenario.Name, c.Variant, c.ModelName) {
				continue
			}
			where := g.Text
			if g.Pos != "" {
				where = g.Pos + ": " + where
			}
			return usagef("gate %s: model %s has no price, so the cost of %s is unknown, not 0: add price: to its openai: block (docs/models.md), or drop the gate",
				where, unpriced[0], c.ID)
		}
	}
	return nil
}

// runEnd is how a run that Run completed ends: at once after the second
// interrupt, else with the tally on stderr, then the exit its cases, its
// interrupt, its endpoints' refusals and its checks make.
func runEnd(e *env, res *runner.Result, dir string, verdict report.Verdict) error {
	if secondInterrupt(e) {
		// Exit now: the servers are killed and run.json says so; what
		// finished is in records.jsonl, from which `hosteval report`
		// rebuilds the reports.
		return interruptedf("%d of %s recorded in %s (hosteval report %[3]s rebuilds the reports)", res.Ran, text.Count(res.Total, "case"), dir)
	}
	fmt.Fprintf(e.stderr, "%s: %d passed, %d failed, %s in %s; results in %s\n",
		text.Count(res.Ran, "case"), res.Passed, res.Failed, text.Count(res.Errors, "error"), res.Elapsed.Round(time.Millisecond), dir)
	switch {
	case res.Interrupted:
		return interruptedf("%d of %s did not run", res.Total-res.Ran, text.Count(res.Total, "case"))
	case res.ConfigErrors > 0:
		return configf("%d of %s could not run: the model endpoint refused the configuration (a key, model name or URL)", res.ConfigErrors, text.Count(res.Ran, "case"))
	case res.ServerConfigErrors > 0:
		return configf("%d of %s could not run: a server's configuration is wrong (its error says what to fix)", res.ServerConfigErrors, text.Count(res.Ran, "case"))
	}
	if err := uncheckable(verdict); err != nil {
		return err
	}
	err := runVerdict(res.Ran, res.Failed, res.Errors, verdict.Regressed)
	if res.Lint != nil && len(res.Lint.Unreached) > 0 && (err == nil || exitCode(err) == 1) {
		// A catalog not seen is not a clean one: exit 3, as lint's.
		var names []string
		for _, u := range res.Lint.Unreached {
			names = append(names, u.Server)
		}
		return fmt.Errorf("the lint could not reach %s %s: not linted (why: above and in %s)",
			oneOr(len(names), "server", "servers"), strings.Join(names, ", "), filepath.Join(dir, record.RunInfoFile))
	}
	if err == nil && res.Lint != nil && res.Lint.Failed {
		// The cases passed; the catalogs they ran on did not.
		return failedf("the lint of the servers failed: %s (the findings are above and in %s)", res.Lint.Summary(), filepath.Join(dir, record.RunInfoFile))
	}
	return err
}

// uncheckable is the configuration error of checks that could not be made
// (a cost gate on a model without a price): exit 2, not a verdict.
func uncheckable(v report.Verdict) error {
	if len(v.Unchecked) == 0 {
		return nil
	}
	return configf("%d %s could not be checked: %s", len(v.Unchecked), oneOr(len(v.Unchecked), "gate", "gates"), strings.Join(v.Unchecked, "; "))
}

func oneOr(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// runVerdict is how a run of cases ends (run, and merge for the run it
// makes): an error when a case could not run (3), a case failed or the
// checks failed (1).
func runVerdict(cases, failed, errored int, regressed bool) error {
	switch {
	case errored > 0:
		return fmt.Errorf("%d of %s could not run", errored, text.Count(cases, "case"))
	case failed > 0 && regressed:
		return failedf("%d of %s failed, and the checks failed", failed, text.Count(cases, "case"))
	case failed > 0:
		return failedf("%d of %s failed", failed, text.Count(cases, "case"))
	case regressed:
		return failedf("the checks failed")
	}
	return nil
}

// secondInterrupt reports whether the second Ctrl-C came.
func secondInterrupt(e *env) bool {
	select {
	case <-e.interrupt.second:
		return true
	default:
		return false
	}
}

// drainGrace is how long running cases get to finish after the first
// interrupt.
const drainGrace = 10 * time.Second

// noticeDrain says, on the first interrupt, what happens next. The
// returned func stops watching.
func noticeDrain(e *env, grace time.Duration) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-e.interrupt.first:
			fmt.Fprintf(e.stderr, "\nhosteval: interrupted: no new cases start; running ones get %v to finish (Ctrl-C again to exit now)\n", grace)
		case <-done:
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
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
