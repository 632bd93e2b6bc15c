package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/model"
	"github.com/hosteval/hosteval/internal/model/replay"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/scenario"
	"github.com/hosteval/hosteval/internal/snapshot"
)

// What the runner does for real models: one registry of endpoint limits per
// run, one cassette per case (recorded or replayed), the response cache,
// the judges, and what a model's failure makes of a case.

// Cassettes choose where and how every case's cassette is kept, over the
// scenarios' own cassettes: (the CLI's -record and -replay).
type Cassettes struct {
	// Dir is the folder of the cassettes; empty keeps each scenario's own
	// folder (a scenario without one then has none).
	Dir  string
	Mode replay.Mode
}

// cassetteOf is where and how the case's exchanges are kept: the run's
// choice over the scenario's; ok is false when the case keeps none.
func cassetteOf(c *scenario.Case, opts Options) (stem string, mode replay.Mode, ok bool) {
	dir, mode, ok := c.Cassettes()
	if o := opts.Cassettes; o != nil {
		if o.Dir != "" {
			dir, ok = o.Dir, true
		}
		mode = o.Mode
	}
	if !ok || (!c.TalksToEndpoint() && len(c.RecordedServers()) == 0) {
		return "", "", false
	}
	return filepath.Join(dir, cassetteStem(c)), mode, true
}

var unsafeInName = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// cassetteStem is a case's cassette path in a cassettes folder, without
// its extension: <scenario>/[<variant>/][d<N>/][<row>/]<model>.<repeat>
// (N other tools and the row for a case of a dataset), each part made
// safe for a file name, so that a reviewer finds a case's cassette by its
// name and a rerun finds it again.
func cassetteStem(c *scenario.Case) string {
	safe := func(s string) string { return unsafeInName.ReplaceAllString(s, "_") }
	parts := []string{safe(c.Scenario.Name)}
	if c.Variant != "" {
		parts = append(parts, safe(c.Variant))
	}
	if c.Row != "" {
		if c.HasDistractors() {
			parts = append(parts, "d"+strconv.Itoa(c.Distractors))
		}
		parts = append(parts, safe(c.Row))
	}
	parts = append(parts, safe(c.ModelName)+"."+strconv.Itoa(c.Repeat))
	return filepath.Join(parts...)
}

// checkRun checks, before any case runs, what would make the run wrong as
// a whole: two models of one endpoint with other limits (every endpoint
// is registered in the run's registry), and two cases with one cassette.
func checkRun(cases []*scenario.Case, opts Options) []scenario.Problem {
	var problems []scenario.Problem
	seen := map[string]*scenario.Case{}
	for _, c := range cases {
		for _, cfg := range c.Endpoints() {
			if err := opts.Endpoints.Register(cfg); err != nil {
				problems = append(problems, scenario.Problem{File: c.Scenario.File, Line: c.Scenario.Line, Path: "model.openai.limits", Msg: err.Error()})
			}
		}
		stem, _, ok := cassetteOf(c, opts)
		if !ok {
			continue
		}
		if first, dup := seen[stem]; dup {
			problems = append(problems, scenario.Problem{File: c.Scenario.File, Line: c.Scenario.Line, Path: "cassettes",
				Msg: fmt.Sprintf("cases %s and %s would share the cassette %s.yaml: give their models names that differ in letters and digits", first.ID, c.ID, stem)})
			continue
		}
		seen[stem] = c
	}
	return dedupeProblems(problems)
}

// caseWire is a case's side of the run's models and recorded servers: its
// cassette, the run's cache and endpoint registry, and the recorder or the
// stand-ins of its servers marked record_server.
type caseWire struct {
	wire model.Wire
	rec  *record.Cassette // nil when the case keeps no cassette
	// recorder records the servers recorded live; standIns serve the
	// others from their cassettes, by server.
	recorder *snapshot.Recorder
	standIns map[string]*snapshot.Cassette
}

// serverCassette is where a case keeps a server's answers, beside its
// model cassette.
func serverCassette(stem, server string) string {
	return stem + ".server-" + unsafeInName.ReplaceAllString(server, "_") + ".yaml"
}

// openWire opens the case's cassettes, if it keeps them. A replayed case
// whose cassette is missing fails like a request its cassette lacks.
func openWire(c *scenario.Case, opts Options) (*caseWire, error) {
	w := &caseWire{wire: model.Wire{Cache: opts.Cache, Endpoints: opts.Endpoints}}
	stem, mode, ok := cassetteOf(c, opts)
	if !ok {
		return w, nil
	}
	w.rec = &record.Cassette{Mode: string(mode)}
	live := map[string]string{}
	for _, name := range c.RecordedServers() {
		path := serverCassette(stem, name)
		if w.rec.Servers == nil {
			w.rec.Servers = map[string]string{}
		}
		w.rec.Servers[name] = path
		_, statErr := os.Stat(path)
		if mode == replay.Record || (mode == replay.Fallback && errors.Is(statErr, fs.ErrNotExist)) {
			live[name] = path
			continue
		}
		cas, err := snapshot.Open(path)
		if err != nil {
			return w, &missingCassette{err}
		}
		if w.standIns == nil {
			w.standIns = map[string]*snapshot.Cassette{}
		}
		w.standIns[name] = cas
	}
	if len(live) > 0 {
		w.recorder = snapshot.NewRecorder(live)
	}
	if !c.TalksToEndpoint() {
		return w, nil
	}
	w.rec.Path = stem + ".yaml"
	cas, err := replay.Open(w.rec.Path, mode)
	if err != nil {
		return w, &missingCassette{err}
	}
	w.wire.Cassette = cas
	return w, nil
}

// serve points the host at the case's recorded servers: a stand-in in
// place of each replayed one, the recorder on the wire of the others.
func (w *caseWire) serve(o *host.Options) {
	withStandIns(o, w.standIns)
	if w.recorder != nil {
		if o.Wire != nil {
			o.Wire = io.MultiWriter(o.Wire, w.recorder)
		} else {
			o.Wire = w.recorder
		}
	}
}

// withStandIns replaces the servers that have a stand-in.
func withStandIns(o *host.Options, standIns map[string]*snapshot.Cassette) {
	for i, spec := range o.Servers {
		if cas, ok := standIns[spec.Name]; ok {
			o.Servers[i] = host.ServerSpec{Name: spec.Name, AutoRun: spec.AutoRun, Transport: cas.Transport, Connect: spec.Connect}
		}
	}
}

// close writes what was recorded, closes the cassette and counts what it
// did. A request a stand-in could not answer is the case's failure: it is
// why the conversation went elsewhere.
func (w *caseWire) close() error {
	var errs []error
	if w.recorder != nil {
		errs = append(errs, w.recorder.Close())
	}
	if cas := w.wire.Cassette; cas != nil {
		w.rec.Replayed, w.rec.Recorded = cas.Stats()
		errs = append(errs, cas.Close())
	}
	var misses []string
	for _, name := range slices.Sorted(maps.Keys(w.standIns)) {
		misses = append(misses, w.standIns[name].Misses()...)
	}
	if len(misses) > 0 {
		return &missingCassette{errors.New(strings.Join(misses, "; "))}
	}
	return errors.Join(errs...)
}

// missingCassette is a replayed case's cassette that is not there, or a
// server's request its cassette does not hold: the case fails as if a
// model request were not recorded.
type missingCassette struct{ err error }

func (m *missingCassette) Error() string { return m.err.Error() }
func (m *missingCassette) Unwrap() error { return m.err }

// leftCassette reports whether err says the case's conversation left its
// cassette (a request it does not hold, or no cassette at all), and
// returns the text the case fails with: the cassette's own diff.
func leftCassette(err error) (string, bool) {
	var miss *replay.Miss
	var missing *missingCassette
	switch {
	case errors.As(err, &miss):
		return miss.Error(), true
	case errors.As(err, &missing):
		return missing.Error(), true
	}
	return "", false
}

// errorClass is the class of an endpoint failure, "" for other errors.
func errorClass(err error) string {
	var ee *model.EndpointError
	if errors.As(err, &ee) {
		return string(ee.Class)
	}
	if errors.Is(err, host.ErrConfig) {
		return record.ErrorServerConfig
	}
	return ""
}

// grade asks each judge of the case about its answer, after the
// conversation, through the case's wire. A judge's malformed answer is its
// grade's error; an endpoint failure or a request the cassette lacks
// stops the case (the returned error).
func grade(ctx context.Context, c *scenario.Case, rec *record.Record, w *caseWire) ([]record.Judgement, error) {
	var out []record.Judgement
	for _, spec := range c.Judges() {
		jr := record.Judgement{Line: spec.Line, Rubric: spec.Rubric, Threshold: spec.Threshold}
		j, err := c.NewJudge(spec)
		if err != nil {
			jr.Error = err.Error()
			out = append(out, jr)
			continue
		}
		j = model.UsingJudge(j, w.wire)
		jr.Judge = j.Name()
		g, err := j.Grade(ctx, spec.Grading(c, rec))
		jr.Usage, jr.MS = g.Usage, record.MS(g.Latency)
		jr.Replayed, jr.Cost, jr.CachedPromptTokens = string(g.Replayed), record.RoundCost(g.Cost), g.CachedPromptTokens
		jr.Attempts, jr.WaitedMS = g.Attempts, record.MS(g.Waited)
		var moe *model.ModelOutputError
		switch {
		case errors.As(err, &moe):
			jr.Outcome, jr.Error = record.OutcomeModelError, err.Error()
		case err != nil:
			return out, fmt.Errorf("judge %s: %w", jr.Judge, err)
		default:
			jr.Score, jr.Passed, jr.Reason = g.Score, g.Pass, g.Reason
			jr.Threshold = g.Threshold
		}
		out = append(out, jr)
	}
	return out, nil
}

// caseCost sums what the case's model and judges' requests cost.
func caseCost(rec *record.Record) float64 {
	var sum float64
	for _, mr := range rec.ModelRequests {
		sum += mr.Cost
	}
	for _, j := range rec.Judgements {
		sum += j.Cost
	}
	return record.RoundCost(sum)
}

// runStats are the run's cache and endpoint figures, for run.json.
func runStats(opts Options) (*record.CacheStats, []record.EndpointStats) {
	var cache *record.CacheStats
	if opts.Cache != nil {
		s := opts.Cache.Stats()
		cache = &record.CacheStats{Dir: opts.Cache.Dir(), Hits: s.Hits, Misses: s.Misses, Errors: s.Errors}
	}
	var eps []record.EndpointStats
	for _, e := range opts.Endpoints.Stats() {
		eps = append(eps, record.EndpointStats{Endpoint: withoutSecrets(e.Endpoint), Requests: e.Requests, Throttled: e.Throttled, WaitedMS: record.MS(e.Waited)})
	}
	return cache, eps
}

// withoutSecrets drops what a base URL may carry that is a credential (a
// user and password, a query such as ?api-key=) from "<base URL> <model>".
func withoutSecrets(endpoint string) string {
	base, model, _ := strings.Cut(endpoint, " ")
	u, err := url.Parse(base)
	if err != nil {
		return "(an endpoint whose URL does not parse) " + model
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return strings.TrimSpace(u.String() + " " + model)
}
