package scenario

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/report"
	"github.com/hosteval/hosteval/internal/tokens"
)

// RunOptions configure a batch run.
type RunOptions struct {
	// Dir is the run's folder (results/<run-id>); it is created.
	Dir   string
	RunID string
	// Args are the command line, kept in run.json to reproduce the run.
	Args []string
	// Concurrency bounds the cases running at once (default: the CPUs).
	Concurrency int
	// Share keeps servers marked shareable running across cases.
	Share bool
	// Wire writes each case's wire trace (every JSON-RPC message).
	Wire bool
	// Logs says which cases' logs are written: LogsAll (the default),
	// LogsFailed (cases that did not pass) or LogsNone.
	Logs string
	// Progress receives progress: a line rewritten in place when Terminal,
	// otherwise one plain line per finished case. Nil: none.
	Progress io.Writer
	Terminal bool
	// Drain, when closed, stops new cases from starting (the first
	// Ctrl-C). Running cases go on until they finish or ctx ends.
	Drain <-chan struct{}
	// Preflight checks, before any case runs, that every tool name the
	// scenarios use is offered by their servers (one discovery per scenario
	// and variant).
	Preflight bool
}

// Which cases' logs a run writes.
const (
	LogsAll    = "all"
	LogsFailed = "failed"
	LogsNone   = "none"
)

// RunResult sums up a finished (or interrupted) run.
type RunResult struct {
	Dir                    string
	Total, Ran             int
	Passed, Failed, Errors int
	Interrupted            bool
	Elapsed                time.Duration
}

// Run runs the cases concurrently, each with fresh servers (except shared
// ones), and appends one record per finished case to Dir/records.jsonl the
// moment it finishes, synced, so that nothing finished is lost to a crash or
// Ctrl-C. A failing case is a record, never an error: Run returns an error
// only when the run itself cannot go on (the folder cannot be written), or
// a *LoadError when the preflight found tool names no server offers.
func Run(ctx context.Context, cases []*Case, opts RunOptions) (*RunResult, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = runtime.NumCPU()
	}
	start := time.Now()
	res := &RunResult{Dir: opts.Dir, Total: len(cases)}
	if err := os.MkdirAll(filepath.Join(opts.Dir, "cases"), 0o755); err != nil {
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	info := report.RunInfo{RunID: opts.RunID, Started: start.UTC(), Args: opts.Args, Version: host.Version}
	if err := report.WriteRunInfo(opts.Dir, info); err != nil {
		return nil, err
	}
	records, err := report.OpenWriter(filepath.Join(opts.Dir, report.RecordsFile))
	if err != nil {
		return nil, err
	}
	defer records.Close()

	var pool *host.Pool
	if opts.Share {
		sharedLog, err := os.Create(filepath.Join(opts.Dir, "shared-servers.jsonl"))
		if err != nil {
			return nil, fmt.Errorf("create shared server log: %w", err)
		}
		defer sharedLog.Close()
		pool = host.NewPool(host.Options{ServerLog: sharedLog})
		defer pool.Close()
	}

	// One token cache for the run: every case renders the same catalogs.
	toks := tokens.NewCache()
	if opts.Preflight {
		if problems := preflight(ctx, cases, pool, toks, opts.Concurrency); len(problems) > 0 {
			return nil, &LoadError{Problems: problems}
		}
	}

	prog := newProgress(opts.Progress, opts.Terminal, len(cases), start)
	defer prog.stop()

	var (
		g    errgroup.Group
		sem  = make(chan struct{}, opts.Concurrency)
		mu   sync.Mutex
		werr error
	)
schedule:
	for i, c := range cases {
		select {
		case <-opts.Drain:
			res.Interrupted = true
			break schedule
		case <-ctx.Done():
			res.Interrupted = true
			break schedule
		default:
		}
		select {
		case sem <- struct{}{}:
		case <-opts.Drain:
			res.Interrupted = true
			break schedule
		case <-ctx.Done():
			res.Interrupted = true
			break schedule
		}
		g.Go(func() error {
			defer func() { <-sem }()
			rec := runCase(ctx, i, c, opts, pool, toks)
			err := records.Write(&rec)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && werr == nil {
				werr = err
			}
			res.Ran++
			switch rec.Status {
			case record.StatusPass:
				res.Passed++
			case record.StatusFail:
				res.Failed++
			default:
				res.Errors++
			}
			prog.done(&rec, res)
			return nil
		})
	}
	g.Wait()
	if ctx.Err() != nil {
		res.Interrupted = true
	}
	res.Elapsed = time.Since(start)
	info.Finished, info.Interrupted = time.Now().UTC(), res.Interrupted
	if err := report.WriteRunInfo(opts.Dir, info); err != nil && werr == nil {
		werr = err
	}
	return res, werr
}

// runCase runs one case from start to verdict. Whatever happens, it returns
// a record: a server that will not start, a model endpoint that fails, or a
// deadline make a record with status error.
func runCase(ctx context.Context, idx int, c *Case, opts RunOptions, pool *host.Pool, toks *tokens.Cache) (rec record.Record) {
	start := time.Now()
	rec = record.Record{
		Schema: record.SchemaVersion, RunID: opts.RunID, CaseID: c.ID, Scenario: c.Scenario.Name,
		File: c.Scenario.File, Line: c.Scenario.Line, Variant: c.Variant, Model: c.ModelName, Repeat: c.Repeat,
		Started: start.UTC(), SessionID: host.NewID(),
		Servers: []record.Server{}, Turns: []record.Turn{}, Calls: []record.Call{},
		ModelRequests: []record.ModelRequest{}, Expectations: []record.Expectation{},
	}
	var infra error
	var logs *caseLogs
	defer func() {
		if p := recover(); p != nil {
			// A bug in a case must not take the batch (and its records) down.
			infra = fmt.Errorf("panic: %v", p)
		}
		defer func() {
			if logs == nil {
				return
			}
			paths, err := logs.finish(opts.Dir, opts.Logs, rec.Status)
			rec.Logs = paths
			if err != nil && rec.Error == "" {
				rec.Error = err.Error()
			}
		}()
		rec.Expectations = Evaluate(c, &rec)
		rec.Status = record.StatusPass
		for _, e := range rec.Expectations {
			if !e.Passed {
				rec.Status = record.StatusFail
			}
		}
		if infra != nil {
			rec.Status, rec.Error = record.StatusError, infra.Error()
		}
		rec.MS = msSince(start)
	}()

	var err error
	if logs, err = newCaseLogs(opts.Dir, idx, c.ID, opts.Wire); err != nil {
		infra = err
		return rec
	}

	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.Timeout())
	defer cancel()
	m, err := c.NewModel()
	if err != nil {
		infra = fmt.Errorf("model: %w", err)
		return rec
	}
	caseDir, err := c.prepareDir(filepath.Join(opts.Dir, logs.base))
	if err != nil {
		infra = err
		return rec
	}
	hopts := c.HostOptionsIn(caseDir)
	hopts.SessionID, hopts.Log, hopts.ServerLog, hopts.Pool, hopts.Tokens = rec.SessionID, &logs.log, &logs.log, pool, toks
	if logs.wire != nil {
		hopts.Wire = logs.wire
	}
	h, err := host.Start(ctx, hopts)
	if err != nil {
		infra = err
		return rec
	}
	closed := false
	closeHost := func() {
		if !closed {
			closed = true
			h.Close()
		}
	}
	defer closeHost()
	rec.Servers, rec.ToolDefs = h.Servers(), h.ToolDefs()
	for _, s := range rec.Servers {
		if s.Error != "" && !c.ExpectsServerFailure(s.Name) {
			infra = fmt.Errorf("server %s did not start: %s", s.Name, s.Error)
			return rec
		}
	}

	conv := h.NewConversation(m, c.System())
	for _, q := range c.Turns() {
		res, err := conv.Ask(ctx, q)
		turn := record.Turn{Question: q, Answer: res.Answer, TraceID: res.TraceID, Steps: res.Steps,
			Requests: len(res.Requests), Stopped: res.Stopped, MS: round1(res.MS)}
		rec.Calls = append(rec.Calls, res.Calls...)
		rec.ModelRequests = append(rec.ModelRequests, res.Requests...)
		for _, r := range res.Requests {
			rec.Usage = rec.Usage.Add(r.Usage)
		}
		if err != nil {
			turn.Error = err.Error()
			rec.Turns = append(rec.Turns, turn)
			infra = caseError(parent, ctx, c, err)
			return rec
		}
		rec.Turns = append(rec.Turns, turn)
	}
	trace := host.NewID()
	for i, check := range c.StateChecks() {
		check.TraceID, check.Step = trace, i+1
		_, ev := h.Check(ctx, check)
		rec.Checks = append(rec.Checks, ev)
	}
	// Close before the verdict, so the servers' last log lines are in.
	closeHost()
	if ctx.Err() != nil {
		infra = caseError(parent, ctx, c, ctx.Err())
	}
	return rec
}

// caseError says why a case stopped: an interrupted run (parent ended),
// the case's own deadline (ctx ended), or the model endpoint.
func caseError(parent, ctx context.Context, c *Case, err error) error {
	switch {
	case parent.Err() != nil:
		return errors.New("interrupted before it finished")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("the case did not finish within its timeout of %v", c.Timeout())
	}
	return err
}

// caseLogs are a case's logs: one file with the host's events and the
// servers' request logs interleaved as they happened (every line says its
// operation; they join on trace_id + step, as the first seed's host.log
// does), and the wire trace beside it when asked for. The log is kept in
// memory and written when the case ends, just before its record, and only
// for the cases RunOptions.Logs asks for: creating a file is most of what a
// cheap case with shared servers costs on a slow disk. A case killed
// mid-way (a second Ctrl-C) loses its log with its record. The wire trace,
// a debugging aid that can be large, goes to its file as it happens.
type caseLogs struct {
	log  lockedBuffer
	wire *os.File // nil unless asked for
	// base is the case's name in the run folder (cases/NNNN-<id>), the
	// stem of its files and the name of its folder (${CASE_DIR}'s parent).
	base string
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

var unsafeInPath = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

func newCaseLogs(runDir string, idx int, id string, wire bool) (*caseLogs, error) {
	logs := &caseLogs{base: filepath.Join("cases", fmt.Sprintf("%04d-%s", idx+1, strings.Trim(unsafeInPath.ReplaceAllString(id, "_"), "_")))}
	if wire {
		f, err := os.Create(filepath.Join(runDir, logs.base+".wire.jsonl"))
		if err != nil {
			return nil, fmt.Errorf("create wire trace: %w", err)
		}
		logs.wire = f
	}
	return logs, nil
}

// finish closes the wire trace, writes the log if the run keeps it for a
// case with this status, and returns the paths written, relative to the run.
func (l *caseLogs) finish(runDir, keep, status string) (map[string]string, error) {
	paths := map[string]string{}
	var errs []error
	if l.wire != nil {
		errs = append(errs, l.wire.Close())
		paths["wire"] = l.base + ".wire.jsonl"
	}
	if keep == LogsAll || keep == "" || (keep == LogsFailed && status != record.StatusPass) {
		name := l.base + ".jsonl"
		l.log.mu.Lock()
		err := os.WriteFile(filepath.Join(runDir, name), l.log.buf.Bytes(), 0o644)
		l.log.mu.Unlock()
		errs = append(errs, err)
		paths["log"] = name
	}
	if err := errors.Join(errs...); err != nil {
		return paths, fmt.Errorf("write case log: %w", err)
	}
	return paths, nil
}

// preflight discovers each scenario's (and variant's) tools once and checks
// every tool name the scenario uses. Servers that do not start are left to
// the cases, which record them.
func preflight(ctx context.Context, cases []*Case, pool *host.Pool, toks *tokens.Cache, concurrency int) []Problem {
	seen := map[string]bool{}
	var firsts []*Case
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
		problems []Problem
	)
	g.SetLimit(concurrency)
	for _, c := range firsts {
		g.Go(func() error {
			// Servers that use ${CASE_DIR} get a folder of their own here
			// too, removed once they are stopped.
			tmp, err := os.MkdirTemp("", "hosteval-preflight-")
			if err != nil {
				return nil
			}
			defer os.RemoveAll(tmp)
			caseDir, err := c.prepareDir(tmp)
			if err != nil {
				return nil
			}
			opts := c.HostOptionsIn(caseDir)
			opts.Pool, opts.Tokens = pool, toks
			h, err := host.Start(ctx, opts)
			if err != nil {
				return nil
			}
			defer h.Close()
			var names []string
			for _, t := range h.Tools() {
				names = append(names, t.Name)
			}
			ps := CheckTools(c, names)
			mu.Lock()
			problems = append(problems, ps...)
			mu.Unlock()
			return nil
		})
	}
	g.Wait()
	return dedupeProblems(problems)
}

func dedupeProblems(ps []Problem) []Problem {
	seen := map[string]bool{}
	var out []Problem
	for _, p := range ps {
		if k := p.String(); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}

func msSince(t time.Time) float64 { return round1(float64(time.Since(t).Microseconds()) / 1000) }

func round1(ms float64) float64 { return float64(int64(ms*10+0.5)) / 10 }

// progress shows how a run is going: on a terminal, one line rewritten in
// place (done/total, passed, failed, elapsed, ETA); elsewhere (CI) one plain
// line per finished case, which logs well.
type progress struct {
	w        io.Writer
	terminal bool
	total    int
	start    time.Time
	mu       sync.Mutex
	last     string
	stopped  chan struct{}
	ticker   *time.Ticker
	wg       sync.WaitGroup
	res      RunResult
}

func newProgress(w io.Writer, terminal bool, total int, start time.Time) *progress {
	p := &progress{w: w, terminal: terminal, total: total, start: start, stopped: make(chan struct{})}
	if w != nil && terminal {
		// Elapsed time moves even while no case finishes.
		p.ticker = time.NewTicker(500 * time.Millisecond)
		p.wg.Go(func() {
			for {
				select {
				case <-p.ticker.C:
					p.mu.Lock()
					p.draw()
					p.mu.Unlock()
				case <-p.stopped:
					return
				}
			}
		})
	}
	return p
}

func (p *progress) done(rec *record.Record, res *RunResult) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.res = *res
	if p.terminal {
		if rec.Status != record.StatusPass {
			fmt.Fprintf(p.w, "\r\033[K%s\n", caseLine(rec))
		}
		p.draw()
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s\n", res.Ran, p.total, caseLine(rec))
}

// caseLine is one finished case: its verdict, id, time, and why it failed.
func caseLine(rec *record.Record) string {
	line := fmt.Sprintf("%-5s %s (%.2fs)", strings.ToUpper(rec.Status), rec.CaseID, rec.MS/1000)
	switch rec.Status {
	case record.StatusError:
		line += ": " + rec.Error
	case record.StatusFail:
		for _, e := range rec.Expectations {
			if !e.Passed {
				line += ": " + e.Name
				if e.Detail != "" {
					line += ": " + e.Detail
				}
				break
			}
		}
	}
	return line
}

func (p *progress) draw() {
	elapsed := time.Since(p.start)
	eta := "?"
	if p.res.Ran > 0 {
		left := time.Duration(float64(elapsed) / float64(p.res.Ran) * float64(p.total-p.res.Ran))
		eta = left.Round(100 * time.Millisecond).String()
	}
	fmt.Fprintf(p.w, "\r\033[K[%d/%d] %d passed, %d failed, %d errors, %s elapsed, ETA %s",
		p.res.Ran, p.total, p.res.Passed, p.res.Failed, p.res.Errors, elapsed.Round(100*time.Millisecond), eta)
}

func (p *progress) stop() {
	if p.ticker != nil {
		p.ticker.Stop()
		close(p.stopped)
		p.wg.Wait()
		p.mu.Lock()
		p.draw()
		fmt.Fprintln(p.w)
		p.mu.Unlock()
	}
}
