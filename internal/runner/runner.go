// Package runner runs the cases of a suite: it gives each case fresh server
// processes (or shared ones), remembers for the run which servers never
// answer server/discover, bounds how many cases run at once and how long
// each may take once its servers are connected, writes one record per
// finished case to the run folder as it ends, and handles the two stages
// of an interrupt (stop starting cases, then kill every server now). It
// owns processes, concurrency, files and interrupts; what a case is and
// how it is judged is internal/scenario's, the records' format
// internal/record's, and what a person sees of the run (progress, tables)
// the caller's.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/lint"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/model/replay"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
	"github.com/hosteval/hosteval/internal/tokens"
)

// Options configure a batch run.
type Options struct {
	// Dir is the run's folder (results/<run-id>); it is created.
	Dir   string
	RunID string
	// Args are the command line, kept in run.json to reproduce the run.
	Args []string
	// Suite identifies the suite the cases came from (SuiteID), and Shard
	// the slice of it they are (SelectShard; zero: all of it). Both are
	// kept in run.json, where merge checks them.
	Suite string
	Shard record.Shard
	// Concurrency bounds the cases running at once (default: the CPUs).
	Concurrency int
	// Share keeps servers marked shareable running across cases.
	Share bool
	// Wire writes each case's wire trace (every JSON-RPC message).
	Wire bool
	// Logs says which cases' logs are written: LogsAll (the default),
	// LogsFailed (cases that did not pass) or LogsNone.
	Logs string
	// Preflight checks, before any case runs, that every tool name the
	// scenarios use is offered by their servers (one discovery per scenario
	// and variant).
	Preflight bool
	// Override, if set, changes every case's host options after the
	// scenario's own (the command line's budgets override the files').
	Override func(*host.Options)
	// OnCase, if set, is told of every finished case once its record is
	// on disk, with the run's tally so far. Calls are serialised.
	OnCase func(rec *record.Record, tally Result)
	// Finish, if set, is called once every record is on disk and run.json
	// is final, while the shared servers stop: the reports are written
	// then rather than after, as a stdio server may take its whole
	// TerminateGrace to exit. stopped is closed once the shared servers
	// have stopped and their log is complete (at once when there are
	// none): what reads that log waits for it. Run returns once both are
	// done, with Finish's error.
	Finish func(res Result, stopped <-chan struct{}) error

	// Drain, when closed, stops new cases from starting (the first
	// Ctrl-C). Running cases get DrainGrace to finish, then are cancelled
	// (zero: they finish).
	Drain      <-chan struct{}
	DrainGrace time.Duration
	// Abort, when closed, ends the run now (the second Ctrl-C): every
	// server's process group is killed, run.json says the run was
	// interrupted, and Run returns once the cases have recorded how they
	// ended, or after AbortWait (default 2s) if some have not.
	Abort     <-chan struct{}
	AbortWait time.Duration
	// Groups holds the process groups of the run's stdio servers; Run
	// makes its own when nil. A caller that passes one can kill the
	// servers itself.
	Groups *host.ProcessGroups

	// Cassettes, if set, overrides where and how the scenarios' cases
	// keep their cassettes (recordreplay.go).
	Cassettes *Cassettes
	// Cache, if set, answers model requests seen before.
	Cache *replay.Cache
	// Endpoints holds the limits of every model endpoint of the run and
	// the connections to them; Run makes one when nil (keeping Concurrency
	// idle connections per endpoint), registers every case's models in
	// it before the first case starts, and closes its idle connections
	// when the run ends.
	Endpoints *model.Endpoints
	// RecordsFile, if set, wraps the records file the run writes to: the
	// seam of the tests of a full disk (a writer that fails after N
	// bytes).
	RecordsFile func(*os.File) record.File
	// Eras remembers the servers that never answer server/discover, so
	// that only the first connection to each (in the preflight, or the
	// first case) waits to find out; Run makes one for the run when nil.
	// One made with a file (host.NewEras) remembers across runs.
	Eras *host.Eras
	// Lint, if set, lints the servers' catalogs as the preflight lists
	// them (it runs even when Preflight is off), before any case: the
	// report is Result.Lint and run.json's lint.
	Lint *lint.Options
	// OnLint, if set, is told of the lint's report before any case
	// starts.
	OnLint func(*lint.Report)
}

// Which cases' logs a run writes.
const (
	LogsAll    = "all"
	LogsFailed = "failed"
	LogsNone   = "none"
)

// Result sums up a finished (or interrupted) run.
type Result struct {
	Dir                    string
	Total, Ran             int
	Passed, Failed, Errors int
	// ConfigErrors counts the errored cases whose model endpoint refused
	// what was configured (a wrong key, model name or URL).
	ConfigErrors int
	// ServerConfigErrors counts the errored cases one of whose servers
	// was refused for its configuration (two of its tools become one
	// name in the host's table).
	ServerConfigErrors int
	Interrupted        bool
	Elapsed            time.Duration
	// NotRecorded are the cases that finished, or were cancelled, after
	// a record could not be written (a full disk): the run stopped, and
	// their records are not in records.jsonl. Ran counts none of them.
	NotRecorded []string
	// Lint is the lint of the servers (Options.Lint), nil without one.
	Lint *lint.Report
}

// Run runs the cases concurrently, each with fresh servers (except shared
// ones), and appends one record per finished case to Dir/records.jsonl as
// it finishes, synced before the case counts as finished (OnCase), so that
// nothing reported finished is lost to a crash or Ctrl-C. A finished case
// frees its concurrency slot before its record is synced: records are
// group-committed by one writer (see committer). A failing case is a
// record, never an error: Run returns an error only when the run itself
// cannot go on (the folder cannot be written), or a *scenario.LoadError
// when the preflight found tool names no server offers or that collide, or
// the cases' models disagree (two limits for one endpoint, two cases with
// one cassette). It returns once the shared servers have stopped; what
// comes after the records (the reports) goes in Options.Finish, which runs
// while they stop.
func Run(ctx context.Context, cases []*scenario.Case, opts Options) (*Result, error) {
	opts = withDefaults(opts)
	// A finished run leaves no connection open to a model endpoint.
	defer opts.Endpoints.CloseIdle()
	if problems := checkRun(cases, opts); len(problems) > 0 {
		return nil, &scenario.LoadError{Problems: problems}
	}
	start := time.Now()
	info := record.RunInfo{RunID: opts.RunID, Started: start.UTC(), Args: opts.Args, Version: host.Version,
		Suite: opts.Suite, Cases: len(cases), Shard: opts.Shard, Texts: texts(cases),
		// A reader tells this run's death (killed, out of memory) from
		// its running by its process (record.Incomplete).
		Process: record.ThisProcess()}
	// The run's folder is made, run.json written and synced and the
	// records opened while the servers start: the folder and the shared
	// servers' log were a millisecond before the first server's exec, the
	// fsync is milliseconds, the servers' start hundreds. No record is
	// written before all of it is done (records below), and a folder that
	// could not be made is said after the preflight, before what the
	// servers did.
	made := makeRunFolder(opts.Dir)
	records := openRun(opts.Dir, info, opts.RecordsFile, made)
	defer func() {
		if w, err := records(); err == nil {
			w.Close()
		}
	}()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// started is called as each server's process has started: work that
	// can be done at any time waits for the first (host.Options.Started).
	spawned := make(chan struct{})
	started := sync.OnceFunc(func() { close(spawned) })
	shared := startShared(opts, made, started)
	defer shared.close()

	// starting ends on the first interrupt (or the second); the run's
	// context DrainGrace later.
	starting, stopStarting := context.WithCancel(ctx)
	defer stopStarting()
	stopWatch := watchInterrupts(opts, stopStarting, cancel)
	defer stopWatch()

	// Counting's first use is readied while the servers start: the first
	// model request's count of the catalog is then about a millisecond
	// shorter (tokens.Warm). It waits for the first server's exec (or the
	// end of a preflight that started none): run alongside, on two CPUs,
	// it made the exec 0.45 ms later, and the whole run with it.
	preflighted := make(chan struct{})
	endPreflight := sync.OnceFunc(func() { close(preflighted) })
	warmed := make(chan struct{})
	go func() {
		defer close(warmed)
		select {
		case <-spawned:
		case <-preflighted:
		}
		tokens.Warm()
	}()
	defer func() { <-warmed }()
	defer endPreflight()
	// One token cache for the run: every case renders the same catalogs.
	toks := tokens.NewCache()
	cfgs := &configs{listings: listings{log: shared.logWriter()}}
	var linted *lint.Report
	if opts.Preflight || opts.Lint != nil {
		// An interrupt stops the preflight too; what it found by then is
		// moot, as no case starts.
		problems, catalogs, unreached := preflight(starting, cases, shared.pool, toks, cfgs, opts, started)
		endPreflight()
		// A run folder that cannot be written is said before what the
		// servers did, as it was before they started.
		if _, err := records(); err != nil {
			return nil, err
		}
		if err := shared.logErr(); err != nil {
			return nil, err
		}
		if len(problems) > 0 && starting.Err() == nil {
			return nil, &scenario.LoadError{Problems: problems}
		}
		if opts.Lint != nil && starting.Err() == nil {
			lopts := *opts.Lint
			lopts.Unreached = append(slices.Clone(lopts.Unreached), unreached...)
			var err error
			if linted, err = lint.Lint(starting, catalogs, lopts); err != nil {
				return nil, fmt.Errorf("lint: %w", err)
			}
			info.Lint = lintResult(linted, opts.Lint.PinsFile)
			if opts.OnLint != nil {
				opts.OnLint(linted)
			}
			if err := record.WriteRunInfo(opts.Dir, info); err != nil {
				return nil, err
			}
		}
	}

	// A record that cannot be written stops the run: no case starts, and
	// those running are cancelled (their records, not written either, are
	// named with the first).
	t := &tally{res: Result{Dir: opts.Dir, Total: len(cases), Lint: linted}, onCase: opts.OnCase, stop: func() { stopStarting(); cancel() }}
	w, err := records()
	if err != nil {
		return nil, err
	}
	if err := shared.logErr(); err != nil {
		return nil, err
	}
	commits := newCommitter(w, t.commit)
	defer commits.close() // also on an early return; closing again is a no-op
	finished := startCases(starting, stopStarting, cases, opts, func(c *scenario.Case) record.Record {
		// Numbered as in the whole suite, so that the files of a shard's
		// cases keep their names when shards are merged.
		return runCase(ctx, c.Index, c, opts, shared.pool, toks, cfgs)
	}, commits, t)
	select {
	case <-finished:
	case <-opts.Abort:
		// Exit now, but leave no server behind and say so in run.json.
		cancel()
		opts.Groups.Kill()
		t.interrupt()
		info.Finished, info.Interrupted = time.Now().UTC(), true
		if err := record.WriteRunInfo(opts.Dir, info); err != nil {
			return nil, err
		}
		// The cases see their servers die and record it at once; a case
		// stuck past the wait loses its record, not the run.
		select {
		case <-finished:
		case <-time.After(opts.AbortWait):
		}
	}
	// No case needs the shared servers any more: they start their
	// grace now, while the last records are synced and run.json written
	// (fsyncs, milliseconds on a busy disk), and the reports after them.
	shared.stop()
	// Every record handed over is on disk before Run returns.
	commits.close()

	out, werr := t.finish(ctx, opts, info, start)
	if opts.Finish != nil && werr == nil {
		werr = opts.Finish(out, shared.stopped)
	}
	return &out, werr
}

// withDefaults fills in what opts leaves to Run: the CPUs' concurrency,
// AbortWait, and the run's own process groups, eras and endpoints.
func withDefaults(opts Options) Options {
	if opts.Concurrency <= 0 {
		opts.Concurrency = runtime.NumCPU()
	}
	if opts.AbortWait <= 0 {
		opts.AbortWait = 2 * time.Second
	}
	if opts.Groups == nil {
		opts.Groups = host.NewProcessGroups()
	}
	if opts.Eras == nil {
		opts.Eras = host.NewEras("")
	}
	if opts.Endpoints == nil {
		// The switch back from the hand-written fast paths covers the
		// model's request encoder too (docs/perf.md).
		opts.Endpoints = model.NewEndpoints(&model.EndpointsOptions{
			Concurrency: opts.Concurrency,
			Library:     os.Getenv(host.PathsEnv) == string(host.PathsSDK),
		})
	}
	return opts
}

// makeRunFolder makes the run folder dir and its cases folder in the
// background; the returned func waits for it and says what failed.
func makeRunFolder(dir string) func() error {
	done := make(chan error, 1)
	go func() {
		if err := os.MkdirAll(filepath.Join(dir, "cases"), 0o755); err != nil {
			done <- fmt.Errorf("create run folder: %w", err)
			return
		}
		done <- nil
	}()
	return sync.OnceValue(func() error { return <-done })
}

// openRun writes the first run.json into the run folder dir, once made,
// and opens records.jsonl, in the background: the returned func waits for
// all three and gives the records' writer, or what failed.
func openRun(dir string, info record.RunInfo, wrap func(*os.File) record.File, made func() error) func() (*record.Writer, error) {
	type opened struct {
		w   *record.Writer
		err error
	}
	done := make(chan opened, 1)
	go func() {
		if err := made(); err != nil {
			done <- opened{err: err}
			return
		}
		if err := record.WriteRunInfo(dir, info); err != nil {
			done <- opened{err: err}
			return
		}
		w, err := record.OpenWriterOn(filepath.Join(dir, record.RecordsFile), wrap)
		done <- opened{w, err}
	}()
	return sync.OnceValues(func() (*record.Writer, error) {
		o := <-done
		return o.w, o.err
	})
}

// sharedServers are the servers kept across cases (Options.Share): their
// pool (nil without) and their log, shared-servers.jsonl.
type sharedServers struct {
	pool *host.Pool
	log  *laterFile
	// stop starts stopping the servers, once; stopped is closed when
	// they have, and their log is complete (at once when there are none).
	stop    func()
	stopped chan struct{}
}

// startShared makes the pool of shared servers and their log, created in
// the run folder once made says it is (made is makeRunFolder's).
func startShared(opts Options, made func() error, started func()) *sharedServers {
	s := &sharedServers{stopped: make(chan struct{})}
	if opts.Share {
		s.log = createLater(filepath.Join(opts.Dir, "shared-servers.jsonl"), made)
		s.pool = host.NewPool(host.Options{ServerLog: s.log, Groups: opts.Groups, Eras: opts.Eras, Started: started})
	}
	s.stop = sync.OnceFunc(func() {
		if s.pool != nil {
			// Here, not in the goroutine below: the servers' grace starts
			// now, not when the goroutine gets a processor (Pool.EndInputs).
			s.pool.EndInputs()
		}
		go func() {
			if s.pool != nil {
				s.pool.Close()
			}
			close(s.stopped)
		}()
	})
	return s
}

// logWriter is their log, nil when no server is shared.
func (s *sharedServers) logWriter() io.Writer {
	if s.log == nil {
		return nil // not a nil *laterFile in a non-nil io.Writer
	}
	return s.log
}

// logErr says why their log could not be created, once it was tried.
func (s *sharedServers) logErr() error {
	if s.log == nil {
		return nil
	}
	return s.log.wait()
}

// close stops the servers, waits for them, then closes their log.
func (s *sharedServers) close() {
	s.stop()
	<-s.stopped
	if s.log != nil {
		s.log.Close()
	}
}

// tally counts the run's cases. A case is counted, and reported through
// OnCase, once its record is synced; a record that could not be written
// is counted all the same (the run ends with the first such error).
type tally struct {
	mu     sync.Mutex
	res    Result
	werr   error
	onCase func(rec *record.Record, tally Result)
	// stop stops the run: no case starts, running ones are cancelled.
	stop func()
}

// commit counts a batch of records the committer has synced, or failed
// to write (err). A batch not written stops the run; its cases are not
// counted or reported finished (a case whose record is lost must not read
// PASS), but named in Result.NotRecorded and the run's error.
func (t *tally) commit(batch []*record.Record, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var lost *record.NotWritten
	if errors.As(err, &lost) {
		if t.werr == nil {
			t.werr = lost.Err
			t.stop()
		}
		t.res.NotRecorded = append(t.res.NotRecorded, lost.Cases...)
		written := map[string]bool{}
		for _, id := range lost.Cases {
			written[id] = true
		}
		kept := batch[:0:0]
		for _, rec := range batch {
			if !written[rec.CaseID] {
				kept = append(kept, rec)
			}
		}
		batch = kept
	} else if err != nil && t.werr == nil {
		t.werr = err
	}
	for _, rec := range batch {
		t.res.Ran++
		switch rec.Status {
		case record.StatusPass:
			t.res.Passed++
		case record.StatusFail:
			t.res.Failed++
		default:
			t.res.Errors++
			switch rec.ErrorClass {
			case string(model.FailureConfig):
				t.res.ConfigErrors++
			case record.ErrorServerConfig:
				t.res.ServerConfigErrors++
			}
		}
		if t.onCase != nil {
			t.onCase(rec, t.res)
		}
	}
}

// interrupt marks the run interrupted.
func (t *tally) interrupt() {
	t.mu.Lock()
	t.res.Interrupted = true
	t.mu.Unlock()
}

// finish writes the final run.json, once every record is on disk, and
// returns the run's result and its first write error. A run whose context
// ended was interrupted.
func (t *tally) finish(ctx context.Context, opts Options, info record.RunInfo, start time.Time) (Result, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ctx.Err() != nil {
		t.res.Interrupted = true
	}
	if len(t.res.NotRecorded) > 0 {
		// The run stopped itself; a person may have interrupted it too.
		t.res.Interrupted = isClosed(opts.Drain) || isClosed(opts.Abort)
	}
	t.res.Elapsed = time.Since(start)
	info.Finished, info.Interrupted = time.Now().UTC(), t.res.Interrupted
	info.Cache, info.Endpoints = runStats(opts)
	info.NotRecorded = t.res.NotRecorded
	if err := record.WriteRunInfo(opts.Dir, info); err != nil && t.werr == nil {
		t.werr = err
	}
	if n := len(t.res.NotRecorded); n > 0 {
		return t.res, fmt.Errorf("%s: %w; the run stopped, and %d %s not recorded: %s",
			record.RecordsFile, t.werr, n, plural(n, "case was", "cases were"), strings.Join(t.res.NotRecorded, ", "))
	}
	return t.res, t.werr
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// startCases starts a goroutine per case, at most opts.Concurrency
// running at once, until every case has started or starting ends (an
// interrupt, which marks the run interrupted). Each runs run(c) and hands
// its record to commits; the returned channel is closed once all have.
func startCases(starting context.Context, stopStarting context.CancelFunc, cases []*scenario.Case, opts Options,
	run func(*scenario.Case) record.Record, commits *committer, t *tally) <-chan struct{} {
	var g errgroup.Group
	sem := make(chan struct{}, opts.Concurrency)
	for _, c := range cases {
		select {
		case sem <- struct{}{}:
		case <-starting.Done():
		}
		// An interrupt wins over a free slot, also one the watch has not
		// seen yet.
		if isClosed(opts.Drain) || isClosed(opts.Abort) {
			stopStarting()
		}
		if starting.Err() != nil {
			t.interrupt()
			break
		}
		g.Go(func() error {
			rec := func() record.Record {
				// The slot is the next case's as soon as this one has its
				// verdict; its record is made durable by the committer.
				defer func() { <-sem }()
				return run(c)
			}()
			commits.add(&rec)
			return nil
		})
	}
	finished := make(chan struct{})
	go func() {
		g.Wait()
		close(finished)
	}()
	return finished
}

// watchInterrupts stops starting cases when Drain or Abort is closed, and
// cancels the run DrainGrace after Drain (at once after Abort). The
// returned func stops the watch and waits for it.
func watchInterrupts(opts Options, stopStarting, cancel context.CancelFunc) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-opts.Drain:
		case <-opts.Abort:
			stopStarting()
			cancel()
			return
		case <-done:
			return
		}
		stopStarting()
		var grace <-chan time.Time
		if opts.DrainGrace > 0 {
			t := time.NewTimer(opts.DrainGrace)
			defer t.Stop()
			grace = t.C
		}
		select {
		case <-grace:
		case <-opts.Abort:
		case <-done:
			return
		}
		cancel()
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// isClosed reports whether ch is closed; a nil ch never is.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// runCase runs one case from start to verdict. Whatever happens, it returns
// a record: a server that will not start, a model endpoint that fails, a
// deadline or a panic make a record with status error.
func runCase(ctx context.Context, idx int, c *scenario.Case, opts Options, pool *host.Pool, toks *tokens.Cache, cfgs *configs) record.Record {
	cr := &caseRun{c: c, idx: idx, opts: opts, start: time.Now()}
	cr.rec = record.Record{
		Schema: record.SchemaVersion, RunID: opts.RunID, CaseID: c.ID, Index: idx + 1, Scenario: c.Scenario.Name,
		File: c.Scenario.File, Line: c.Scenario.Line, Variant: c.Variant, Model: c.ModelName, Repeat: c.Repeat,
		Started: cr.start.UTC(), SessionID: host.NewID(),
		Servers: []record.Server{}, Turns: []record.Turn{}, Calls: []record.Call{},
		ModelRequests: []record.ModelRequest{}, Expectations: []record.Expectation{},
	}
	cr.end(cr.converse(ctx, pool, toks, cfgs))
	return cr.rec
}

// caseRun is one case while it runs: its record so far, and its logs and
// wire once they are open, which its end closes.
type caseRun struct {
	c     *scenario.Case
	idx   int
	opts  Options
	start time.Time
	rec   record.Record
	logs  *caseLogs
	wire  *caseWire
	// proposed are the calls a route-only case's model proposed, ranks the
	// lexical router's ranking of the first question.
	proposed []scenario.Proposal
	ranks    []record.Rank
}

// converse opens the case's logs and wire, starts its host, asks its
// questions (or, route-only, has the model propose), runs its state checks
// and its judges, filling the record; it returns what stopped the case
// (nil when nothing did). A panic is such an error too: a bug in a case
// must not take the batch (and its records) down. The host is closed, and
// the servers' last log lines are in, by the time it returns.
func (cr *caseRun) converse(ctx context.Context, pool *host.Pool, toks *tokens.Cache, cfgs *configs) (infra error) {
	defer func() {
		if p := recover(); p != nil {
			infra = fmt.Errorf("panic: %v", p)
		}
	}()
	c, opts, rec := cr.c, cr.opts, &cr.rec
	var err error
	if cr.logs, err = newCaseLogs(opts.Dir, cr.idx, c.ID, opts.Wire); err != nil {
		return err
	}
	var hopts host.Options
	if c.RouteOnly() {
		// No case folder: nothing starts.
		hopts = routeHostOptions(c, opts)
	} else {
		hopts, err = caseHostOptions(c, func() string { return filepath.Join(opts.Dir, cr.logs.base()) }, opts)
	}
	rec.Settings = cfgs.settings(c, hopts)
	if err != nil {
		return err
	}
	m, err := c.NewModel()
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if cr.wire, err = openWire(c, opts); err != nil {
		return err
	}
	m = model.Using(m, cr.wire.wire)
	hopts.SessionID, hopts.Pool, hopts.Tokens, hopts.Tables = rec.SessionID, pool, toks, &cfgs.tables
	if opts.Logs != LogsNone {
		hopts.Log, hopts.ServerLog = &cr.logs.log, &cr.logs.log
	}
	if cr.logs.wire != nil {
		hopts.Wire = cr.logs.wire
	}
	cr.wire.serve(&hopts)
	// The case's clock starts once its servers are connected: each server
	// has its own connect budget, and a slow start on a busy machine must
	// not eat the time of the case's turns.
	parent := ctx
	if c.RouteOnly() {
		if err := cfgs.listings.route(ctx, c, &hopts); err != nil {
			return caseError(parent, parent, c, err)
		}
	}
	h, err := host.Start(parent, hopts)
	if err != nil {
		return caseError(parent, parent, c, err)
	}
	ctx, cancel := context.WithTimeout(parent, c.Timeout())
	defer cancel()
	closeHost := sync.OnceFunc(func() {
		h.Close()
		// What each server's stderr lost to its budget, and what it left
		// outside its group, is known once it stopped.
		for i, s := range h.Servers() {
			if i < len(rec.Servers) {
				rec.Servers[i].StderrDroppedBytes, rec.Servers[i].StderrDroppedLines = s.StderrDroppedBytes, s.StderrDroppedLines
				rec.Servers[i].Orphans, rec.Servers[i].UnknownAnswers = s.Orphans, s.UnknownAnswers
			}
		}
	})
	defer closeHost()
	talk := cr.talk
	if c.RouteOnly() {
		talk = cr.propose
	}
	if err := talk(ctx, h, m); err != nil {
		return caseError(parent, ctx, c, err)
	}
	// Close before the judges and the verdict, so the servers' last log
	// lines are in.
	closeHost()
	if ctx.Err() != nil {
		return caseError(parent, ctx, c, ctx.Err())
	}
	if rec.Judgements, err = grade(ctx, c, rec, cr.wire); err != nil {
		return caseError(parent, ctx, c, err)
	}
	return nil
}

// startedServers records the servers the host started, and says which did
// not when the case does not expect that.
func (cr *caseRun) startedServers(h *host.Host) error {
	rec := &cr.rec
	rec.Servers, rec.ToolDefs = h.Servers(), h.ToolDefs()
	for _, s := range rec.Servers {
		switch {
		case s.Error == "" || cr.c.ExpectsServerFailure(s.Name):
		case s.ConfigError:
			// Its configuration's to fix, not the server's: exit 2.
			return fmt.Errorf("%w: server %s: %s", host.ErrConfig, s.Name, strings.TrimPrefix(s.Error, host.ErrConfig.Error()+": "))
		default:
			return fmt.Errorf("server %s did not start: %s", s.Name, s.Error)
		}
	}
	return nil
}

// talk has the conversation, every question of the case in turn, then
// runs the state checks. It stops at a server that did not start unless
// the case expects that, and at a turn that failed.
func (cr *caseRun) talk(ctx context.Context, h *host.Host, m model.Model) error {
	c, rec := cr.c, &cr.rec
	if err := cr.startedServers(h); err != nil {
		return err
	}
	conv := h.NewConversation(m, c.System())
	for i, q := range c.Turns() {
		res, err := conv.Ask(ctx, q)
		turn := record.Turn{Question: q, Answer: res.Answer, TraceID: res.TraceID, Steps: res.Steps,
			Requests: len(res.Requests), Stopped: res.Stopped, Truncated: res.Truncated, MS: record.RoundMS(res.MS)}
		rec.Calls = append(rec.Calls, res.Calls...)
		rec.ModelRequests = append(rec.ModelRequests, res.Requests...)
		if i == 0 {
			cr.ranks = res.Ranks
		}
		rec.ToolChanges = append(rec.ToolChanges, res.ToolChanges...)
		for _, r := range res.Requests {
			rec.Usage = rec.Usage.Add(r.Usage)
		}
		if err != nil {
			turn.Error = err.Error()
			rec.Turns = append(rec.Turns, turn)
			return err
		}
		rec.Turns = append(rec.Turns, turn)
	}
	trace := host.NewID()
	for i, check := range c.StateChecks() {
		check.TraceID, check.Step = trace, i+1
		_, ev := h.Check(ctx, check)
		rec.Checks = append(rec.Checks, ev)
	}
	return nil
}

// propose is a route-only case's conversation: one question, one answer,
// nothing sent to a server; the calls the model proposed are the
// verdict's.
func (cr *caseRun) propose(ctx context.Context, h *host.Host, m model.Model) error {
	c, rec := cr.c, &cr.rec
	if err := cr.startedServers(h); err != nil {
		return err
	}
	conv := h.NewConversation(m, c.System())
	q := c.Turns()[0]
	res, calls, err := conv.Propose(ctx, q)
	rec.Turns = append(rec.Turns, record.Turn{Question: q, Answer: res.Answer, TraceID: res.TraceID,
		Requests: len(res.Requests), Truncated: res.Truncated, MS: record.RoundMS(res.MS)})
	rec.ModelRequests = append(rec.ModelRequests, res.Requests...)
	for _, r := range res.Requests {
		rec.Usage = rec.Usage.Add(r.Usage)
	}
	cr.ranks = res.Ranks
	for _, call := range calls {
		cr.proposed = append(cr.proposed, scenario.ProposalOf(call.Name, call.Arguments, h.Offers(call.Name)))
	}
	if err != nil {
		rec.Turns[0].Error = err.Error()
	}
	return err
}

// end finishes the record of a case that infra stopped (nil when nothing
// did), in this order: the wire closes (a request its cassette lacks is the
// first cause, whatever else happened), the cost and route are summed up,
// the verdict is made (see decide), its time is taken, and then the logs
// are kept or dropped by the verdict's status.
func (cr *caseRun) end(infra error) {
	rec := &cr.rec
	if cr.wire != nil {
		infra = firstCause(infra, cr.wire.close())
		rec.Cassette = cr.wire.rec
	}
	rec.Cost = caseCost(rec)
	rec.Unpriced = cr.c.Unpriced()
	// Every case of a dataset row has its route, also one that could
	// not run (the reports leave those out of the figures).
	if !cr.c.RouteOnly() {
		cr.proposed = scenario.ProposalsOf(rec.Calls)
	}
	if rec.Route = cr.c.Route(rec, cr.proposed); rec.Route != nil {
		rec.Route.Ranks = cr.ranks
	}
	v := decide(infra, func() []record.Expectation { return scenario.Evaluate(cr.c, rec) })
	rec.Status, rec.Error, rec.ErrorClass = v.status, v.err, v.class
	if v.expectations != nil {
		rec.Expectations = v.expectations
	}
	rec.MS = record.MS(time.Since(cr.start))
	if cr.logs == nil {
		return
	}
	paths, err := cr.logs.finish(cr.opts.Dir, cr.opts.Logs, rec.Status)
	rec.Logs = paths
	if err != nil && rec.Error == "" {
		rec.Error = err.Error()
	}
}

// caseHostOptions are a case's host options: its folder made under dir()
// (when it uses one), the run's override and process groups.
func caseHostOptions(c *scenario.Case, dir func() string, opts Options) (host.Options, error) {
	var caseDir string
	var err error
	if c.UsesCaseDir() {
		caseDir, err = PrepareCaseDir(c, dir())
	}
	hopts := c.HostOptionsIn(caseDir)
	if opts.Override != nil {
		opts.Override(&hopts)
	}
	hopts.Groups, hopts.Eras = opts.Groups, opts.Eras
	return hopts, err
}

// routeHostOptions are a route-only case's host options: its servers as
// written (${CASE_DIR} and all: route lists them once, in a folder of
// its own), the run's override and process groups.
func routeHostOptions(c *scenario.Case, opts Options) host.Options {
	hopts := c.HostOptions()
	if opts.Override != nil {
		opts.Override(&hopts)
	}
	hopts.Groups, hopts.Eras = opts.Groups, opts.Eras
	return hopts
}

// caseError says why a case stopped: an interrupted run (parent ended),
// the case's own deadline (ctx ended), or err (a server, the model
// endpoint).
func caseError(parent, ctx context.Context, c *scenario.Case, err error) error {
	switch {
	case parent.Err() != nil:
		return errors.New("interrupted before it finished")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("the case did not finish within its timeout of %v", c.Timeout())
	}
	return err
}

// preflight discovers each scenario's (and variant's) tools once and checks
// every tool name the scenario uses. Servers that do not start are left to
// the cases, which record them. It returns the servers' catalogs as they
// listed them, for lint: each server once, by name, in the order the
// cases first use them (the first scenario's definition of a name wins);
// and the servers no scenario could list, each with why (for lint: not
// linted, and said so).
func preflight(ctx context.Context, cases []*scenario.Case, pool *host.Pool, toks *tokens.Cache, cfgs *configs, opts Options, started func()) ([]scenario.Problem, []lint.Server, []lint.Unreached) {
	seen := map[string]bool{}
	var firsts []*scenario.Case
	for _, c := range cases {
		key := c.Scenario.Name + "/" + c.Variant
		if !seen[key] {
			seen[key] = true
			firsts = append(firsts, c)
		}
	}
	var (
		g        errgroup.Group
		mu       sync.Mutex
		problems []scenario.Problem
	)
	g.SetLimit(opts.Concurrency)
	listed := make([][]lint.Server, len(firsts))
	unlisted := make([][]lint.Unreached, len(firsts))
	for i, c := range firsts {
		// notListed names every server of the case as not listed, for
		// err, for the lint; the case records err itself.
		notListed := func(err error) error {
			for _, name := range c.ServerNames() {
				unlisted[i] = append(unlisted[i], lint.Unreached{Server: name, Error: err.Error()})
			}
			return nil
		}
		g.Go(func() error {
			// Servers that use ${CASE_DIR} get a folder of their own here
			// too, removed once they are stopped; the others none, as a
			// mkdir here is before the first server's exec.
			var tmp string
			if c.UsesCaseDir() {
				var err error
				if tmp, err = os.MkdirTemp("", "hosteval-preflight-"); err != nil {
					return notListed(err)
				}
				defer os.RemoveAll(tmp)
			}
			hopts, err := caseHostOptions(c, func() string { return tmp }, opts)
			if err != nil {
				return notListed(err)
			}
			// A replayed server is checked against its stand-in; a case
			// whose cassettes are missing fails on its own.
			w, err := openWire(c, opts)
			if err != nil {
				return notListed(err)
			}
			withStandIns(&hopts, w.standIns)
			hopts.Pool, hopts.Tokens, hopts.Tables, hopts.Preflight = pool, toks, &cfgs.tables, true
			hopts.Started = started
			if c.RouteOnly() {
				// Listed as its cases will use them: once.
				hopts = routeHostOptions(c, opts)
				hopts.Pool, hopts.Tokens, hopts.Tables, hopts.Preflight = pool, toks, &cfgs.tables, true
				hopts.Started = started
				if err := cfgs.listings.route(ctx, c, &hopts); err != nil {
					return notListed(err) // the cases record it
				}
			}
			h, err := host.Start(ctx, hopts)
			if errors.Is(err, host.ErrConfig) {
				// Servers the host cannot have together (two of one
				// name): the scenario's to fix (exit 2), before any case
				// runs.
				mu.Lock()
				problems = append(problems, scenario.Problem{File: c.Scenario.File, Line: c.Scenario.Line, Path: "servers",
					Msg: strings.TrimPrefix(err.Error(), host.ErrConfig.Error()+": ")})
				mu.Unlock()
			}
			if err != nil {
				return notListed(err)
			}
			defer h.Close()
			if opts.Lint != nil {
				listed[i], unlisted[i] = lintServers(h, hopts)
			}
			if !opts.Preflight {
				return nil
			}
			for _, s := range h.Servers() {
				if s.ConfigError {
					// A server refused for its tools' names: the cases
					// of the scenario error, the others run.
					return nil
				}
			}
			var names []string
			for _, t := range h.Tools() {
				names = append(names, t.Name)
			}
			ps := scenario.CheckTools(c, names)
			mu.Lock()
			problems = append(problems, ps...)
			mu.Unlock()
			return nil
		})
	}
	g.Wait()
	var catalogs []lint.Server
	seenServer := map[string]bool{}
	for _, servers := range listed {
		for _, s := range servers {
			if !seenServer[s.Name] {
				seenServer[s.Name] = true
				catalogs = append(catalogs, s)
			}
		}
	}
	// A server another scenario listed is linted; the others once each,
	// with the first reason.
	var unreached []lint.Unreached
	for _, us := range unlisted {
		for _, u := range us {
			if !seenServer[u.Server] {
				seenServer[u.Server] = true
				unreached = append(unreached, u)
			}
		}
	}
	return dedupeProblems(problems), catalogs, unreached
}

// lintServers copies each server's catalog out of a started host, as it
// listed it, and names the servers that did not connect, with their
// errors (their cases record them too).
func lintServers(h *host.Host, hopts host.Options) ([]lint.Server, []lint.Unreached) {
	var out []lint.Server
	var unreached []lint.Unreached
	for _, spec := range hopts.Servers {
		c := h.Catalog(spec.Name)
		if c == nil {
			why := "it did not connect"
			for _, s := range h.Servers() {
				if s.Name == spec.Name && s.Error != "" {
					why = s.Error
				}
			}
			unreached = append(unreached, lint.Unreached{Server: spec.Name, Error: why})
			continue
		}
		out = append(out, lint.Server{Name: spec.Name, ServerName: c.ServerName, ServerVersion: c.ServerVersion,
			Protocol: c.Protocol, Instructions: c.Instructions, Tools: c.Tools})
	}
	return out, unreached
}

// lintResult is a lint's report as run.json keeps it.
func lintResult(rep *lint.Report, pins string) *record.LintResult {
	out := &record.LintResult{FailOn: string(rep.FailOn), Failed: rep.Failed, Pins: pins,
		Servers: []string{}, Findings: []record.LintFinding{}}
	for _, s := range rep.Servers {
		out.Servers = append(out.Servers, s.Name)
	}
	for _, u := range rep.Unreached {
		out.Unreached = append(out.Unreached, record.LintUnreached{Server: u.Server, Error: u.Error})
	}
	finding := func(f lint.Finding) record.LintFinding {
		rf := record.LintFinding{Rule: f.Rule, Severity: string(f.Severity), Server: f.Server, Tool: f.Tool, Field: f.Field,
			Pointer: f.Pointer, Text: f.Text, Message: f.Message, Fix: f.Fix, Diff: f.Diff}
		if f.Suppression != nil {
			rf.Reason = f.Suppression.Reason
		}
		return rf
	}
	for _, f := range rep.Findings {
		out.Findings = append(out.Findings, finding(f))
	}
	for _, f := range rep.Suppressed {
		out.Suppressed = append(out.Suppressed, finding(f))
	}
	return out
}

func dedupeProblems(ps []scenario.Problem) []scenario.Problem {
	seen := map[string]bool{}
	var out []scenario.Problem
	for _, p := range ps {
		if k := p.String(); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}
