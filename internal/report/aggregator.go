package report

import (
	"cmp"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hosteval/hosteval/internal/record"
)

// Read reads the run folder dir and aggregates it in one pass over its
// records, keeping none of them (see [record.Scan]): memory grows by a
// compact row per case and a float per call, not by records. A case
// recorded twice counts once, with its later record, and a warning.
func Read(dir string) (*Summary, error) {
	return ReadEach(dir, nil)
}

// ReadEach is Read that also hands each record to each, in file order with
// its place among the records (0-based), before it is aggregated: a second
// use of the records (transcripts) without a second pass over the file.
func ReadEach(dir string, each func(rec *record.Record, pos int) error) (*Summary, error) {
	a := newAggregator()
	pos := 0
	run, err := record.Scan(dir, func(rec *record.Record, line int) error {
		if each != nil {
			if err := each(rec, pos); err != nil {
				return err
			}
		}
		pos++
		a.add(rec, line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s := a.summary(run)
	if a.duplicates {
		// A run folder used again holds a case twice: ReadRun keeps its
		// later record, and says so, at the cost of holding the records.
		whole, err := record.ReadRun(dir)
		if err != nil {
			return nil, err
		}
		return Aggregate(whole), nil
	}
	return s, nil
}

// Aggregate computes the figures of a run read whole (record.ReadRun,
// which has kept one record per case). Cases and groups are sorted by
// scenario, variant, model (and repeat), so that output does not depend on
// the order in which cases finished.
func Aggregate(run *record.Run) *Summary {
	a := newAggregator()
	for i := range run.Records {
		a.add(&run.Records[i], 0)
	}
	return a.summary(run)
}

// aggregator builds a Summary from records given one at a time. Of each
// case it keeps a caseRow, of each group the latencies of its calls (for
// exact percentiles and the tests of Compare), and of each case that did
// not pass its Failure.
type aggregator struct {
	rows   []caseRow
	groups []*groupCalls
	byKey  map[GroupKey]int32
	// tables holds what rows point to; it becomes the summary's.
	tables caseTables
	strIdx map[string]int32
	// serverIdx finds a server list in tables.servers (see serverList):
	// with shared servers every case of a run has the same one.
	serverIdx map[string]int32
	// duplicates is set when a case ID came twice (found as the rows are
	// sorted, where its records meet).
	duplicates bool
	// tools are the figures per server and tool, and their calls'
	// latencies.
	tools     []ToolStats
	toolCalls [][]float64
	toolIdx   map[toolKey]int
	// allMS and the sums are the run's totals.
	allMS                   []float64
	modelRequests, defTotal int
	// firstRunID is the first record's run_id: the run's ID when it has
	// no run.json (a scan keeps no record to find it in later).
	firstRunID string
	// catalogWarnings are the host's warnings on the size of a catalog
	// (record.ToolDefs.Warning), each once, with the first case that had
	// it.
	catalogWarnings []string
	warned          map[string]bool
	// routes gathers the routing figures of the cases made from dataset
	// rows.
	routes routeAggregator
}

// caseTables are what caseRows point to, by index.
type caseTables struct {
	keys     []GroupKey
	strs     []string // file names and statuses
	servers  [][]ServerInfo
	codes    [][]CodeCount
	failures []Failure
	routes   []routeRow
}

// routeRow is what the cases table and JUnit show of a case's
// record.Route: strings are indexes into caseTables.strs.
type routeRow struct {
	row, expected, chosen, detail int32
	distractors                   int32
	correct, lexical              bool
	// args is 0 when not checked, 1 when they held, 2 when not.
	args int8
}

// groupCalls holds the latencies of a group's calls, in the order added.
type groupCalls struct {
	key      GroupKey
	callMS   []float64
	settings *record.Settings // the first case's
}

// caseRow is what every report shows of one case, and what its group's
// figures are summed from: a CaseStats without its per-turn figures,
// settings and latency samples, in a fraction of the space (strings and
// lists are indexes into caseTables). A run of 100,000 cases keeps
// 100,000 of these and no record.
type caseRow struct {
	caseID       string
	group        int32
	file, status int32
	repeat, line int32
	// seq is the record's place among those given.
	seq int32
	// failure indexes the failures (-1: the case passed); servers the
	// server lists, codes the error-code lists, route the routeRows (-1:
	// none).
	failure, servers, codes, route int32
	// latN is how many calls its latency figures stand on.
	latN            int32
	started         int64 // Unix ns; 0 for none
	ms              float64
	p50, p95, maxMS float64

	expectations, steps, toolCalls, modelRequests, turns, stopped  int32
	unknown, badArgs, denied, toolErrors, timeouts, protocolErrors int32
	otherErrors, versionFailures, restarts, askedUser, clipped     int32
	reinitialized                                                  int32
	resultBytes, maxResultBytes, defBytes, defTokens               int32
	defBytesTotal, defTokensTotal                                  int32
	usage                                                          *record.Usage
	models                                                         ModelFigures
}

type toolKey struct{ server, tool string }

func newAggregator() *aggregator {
	return &aggregator{byKey: map[GroupKey]int32{}, strIdx: map[string]int32{}, serverIdx: map[string]int32{}, toolIdx: map[toolKey]int{}}
}

// str interns s in the tables.
func (a *aggregator) str(s string) int32 { return intern(a.strIdx, &a.tables.strs, s, s) }

// intern returns the index of key's value in list, appending v under key
// the first time.
func intern[T any](index map[string]int32, list *[]T, key string, v T) int32 {
	if i, ok := index[key]; ok {
		return i
	}
	i := int32(len(*list))
	*list = append(*list, v)
	index[key] = i
	return i
}

// add adds one record; line is its line in records.jsonl (0 when it was
// not read from a file).
func (a *aggregator) add(rec *record.Record, line int) {
	c := CaseOf(rec)
	if a.firstRunID == "" {
		a.firstRunID = rec.RunID
	}
	a.addCase(&c, line)
	a.addTools(rec)
	a.routes.add(rec)
	if w := rec.ToolDefs.Warning; w != "" && !a.warned[w] {
		if a.warned == nil {
			a.warned = map[string]bool{}
		}
		a.warned[w] = true
		a.catalogWarnings = append(a.catalogWarnings, rec.CaseID+": "+w)
	}
}

// addTools adds a record's calls to their tools' figures. Calls to a name
// the host did not know (server "-") are left out: they are no tool's.
func (a *aggregator) addTools(rec *record.Record) {
	for j := range rec.Calls {
		c := &rec.Calls[j]
		if c.Server == "" || c.Server == "-" {
			continue
		}
		k := toolKey{c.Server, c.Tool}
		ti, ok := a.toolIdx[k]
		if !ok {
			ti = len(a.tools)
			a.toolIdx[k] = ti
			a.tools = append(a.tools, ToolStats{Server: c.Server, Tool: c.Tool, Outcomes: map[string]int{}})
			a.toolCalls = append(a.toolCalls, nil)
		}
		t := &a.tools[ti]
		t.Calls++
		t.Outcomes[c.Outcome]++
		if c.Clipped {
			t.Clipped++
		}
		t.ResultBytes += c.ResultBytes
		t.MaxResultBytes = max(t.MaxResultBytes, c.ResultBytes)
		if !record.SentNothing(c.Outcome) {
			a.toolCalls[ti] = append(a.toolCalls[ti], c.MS)
		}
	}
}

// addCase adds the figures of one case; its callMS are its calls'.
func (a *aggregator) addCase(c *CaseStats, line int) {
	k := GroupKey{Scenario: c.Scenario, Variant: c.Variant, Model: c.Model}
	gi, ok := a.byKey[k]
	if !ok {
		gi = int32(len(a.groups))
		a.groups = append(a.groups, &groupCalls{key: k, settings: c.Settings})
		a.byKey[k] = gi
	}
	g := a.groups[gi]
	seq := int32(line)
	if line == 0 {
		seq = int32(len(a.rows))
	}
	row := caseRow{
		caseID: c.CaseID, group: gi, file: a.str(c.File), status: a.str(c.Status),
		repeat: int32(c.Repeat), line: int32(c.Line), seq: seq, failure: -1, codes: -1, route: -1,
		servers: a.serverList(c.Servers), latN: int32(c.Latency.N),
		ms: c.MS, p50: c.Latency.P50, p95: c.Latency.P95, maxMS: c.Latency.Max,
		expectations: int32(c.Expectations), steps: int32(c.Steps), toolCalls: int32(c.ToolCalls),
		modelRequests: int32(c.ModelRequests), turns: int32(c.Turns), stopped: int32(c.Stopped),
		unknown: int32(c.UnknownTools), badArgs: int32(c.BadArguments), denied: int32(c.Denied),
		toolErrors: int32(c.ToolErrors), timeouts: int32(c.Timeouts), protocolErrors: int32(c.ProtocolErrors),
		otherErrors: int32(c.OtherErrors), versionFailures: int32(c.VersionFailures), restarts: int32(c.Restarts), reinitialized: int32(c.Reinitialized),
		askedUser: int32(c.AskedUser), clipped: int32(c.Clipped),
		resultBytes: int32(c.ResultBytes), maxResultBytes: int32(c.MaxResultBytes),
		defBytes: int32(c.ToolDefBytes), defTokens: int32(c.ToolDefTokens),
		defBytesTotal: int32(c.ToolDefBytesTotal), defTokensTotal: int32(c.ToolDefTokensTotal),
		usage: c.Usage, models: c.ModelFigures,
	}
	if r := c.Route; r != nil {
		rr := routeRow{
			row: a.str(r.Row), expected: a.str(strings.Join(r.Expected, ",")), chosen: a.str(r.Chosen),
			detail: a.str(r.ArgsDetail), distractors: int32(r.Distractors), correct: r.Correct, lexical: r.Lexical,
		}
		if r.ArgsOK != nil {
			rr.args = 2
			if *r.ArgsOK {
				rr.args = 1
			}
		}
		row.route = int32(len(a.tables.routes))
		a.tables.routes = append(a.tables.routes, rr)
	}
	if len(c.ErrorCodes) > 0 {
		row.codes = int32(len(a.tables.codes))
		a.tables.codes = append(a.tables.codes, c.ErrorCodes)
	}
	if !c.Started.IsZero() {
		row.started = c.Started.UnixNano()
	}
	g.callMS = append(g.callMS, c.callMS...)
	a.allMS = append(a.allMS, c.callMS...)
	a.modelRequests += c.ModelRequests
	a.defTotal += c.ToolDefTokensTotal
	if !c.Passed() {
		row.failure = int32(len(a.tables.failures))
		a.tables.failures = append(a.tables.failures, failureOf(c))
	}
	a.rows = append(a.rows, row)
}

// serverList interns a case's server list.
func (a *aggregator) serverList(servers []ServerInfo) int32 {
	var b strings.Builder
	for _, s := range servers {
		b.WriteString(s.Name)
		b.WriteByte(0)
		b.WriteString(s.Mode)
		b.WriteByte(0)
		b.WriteString(s.Protocol)
		b.WriteByte(0)
		b.WriteString(s.Offered)
		b.WriteByte(0)
		b.WriteString(s.Error)
		if s.Restarted {
			b.WriteByte('r')
		}
		if s.VersionFailure {
			b.WriteByte('v')
		}
		if s.Reinitialized > 0 {
			fmt.Fprintf(&b, "i%d", s.Reinitialized)
		}
		b.WriteByte(1)
	}
	return intern(a.serverIdx, &a.tables.servers, b.String(), servers)
}

// summary sorts the rows into case order and sums the groups.
func (a *aggregator) summary(run *record.Run) *Summary {
	s := &Summary{
		Schema:   SummarySchema,
		Run:      run.Info,
		Groups:   []GroupStats{},
		Warnings: append(slices.Clone(run.Warnings), a.catalogWarnings...),
	}
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	// As record.Run.ID, without the records a scan did not keep.
	s.RunID = cmp.Or(a.firstRunID, filepath.Base(run.Dir))
	if run.Info != nil && run.Info.RunID != "" {
		s.RunID = run.Info.RunID
	}
	s.cases, s.Failures = a.sorted()
	rows := s.cases.rows
	for i := 0; i < len(rows); {
		j := i
		var sum groupSum
		for ; j < len(rows) && rows[j].group == rows[i].group; j++ {
			c := s.cases.stats(&rows[j])
			sum.add(&c)
		}
		g := sum.finish(s.cases.keys[rows[i].group], a.groups[rows[i].group].callMS)
		g.settings = a.groups[rows[i].group].settings
		s.Groups = append(s.Groups, g)
		s.Totals.Cases += g.Cases
		s.Totals.Passed += g.Passed
		s.Totals.Failed += g.Failed
		s.Totals.Errored += g.Errored
		s.Totals.Reinitialized += g.Reinitialized
		s.Totals.ModelFigures.add(g.ModelFigures)
		i = j
	}
	if s.Totals.Cases > 0 {
		s.Totals.PassRate = float64(s.Totals.Passed) / float64(s.Totals.Cases)
	}
	s.Totals.Latency = latencyOf(a.allMS)
	s.Totals.ModelRequests = a.modelRequests
	if a.modelRequests > 0 {
		s.Totals.ToolDefTokens = float64(a.defTotal) / float64(a.modelRequests)
	}
	if s.Incomplete = record.Incomplete(run.Info, s.Totals.Cases); s.Incomplete != "" {
		// A killed run's records read as a whole green run otherwise.
		s.Warnings = append([]string{s.Incomplete}, s.Warnings...)
	}
	s.Routing = a.routes.routing()
	s.Tools = a.tools
	if s.Tools == nil {
		s.Tools = []ToolStats{}
	}
	for i := range s.Tools {
		s.Tools[i].MeanResultBytes = float64(s.Tools[i].ResultBytes) / float64(s.Tools[i].Calls)
		s.Tools[i].Latency = latencyOf(a.toolCalls[i])
	}
	slices.SortFunc(s.Tools, func(x, y ToolStats) int {
		return cmp.Or(cmp.Compare(x.Server, y.Server), cmp.Compare(x.Tool, y.Tool))
	})
	return s
}

// sorted puts the rows in case order: by group key, repeat and case ID,
// then by place among the records. It returns them with the failures in
// their order, and notes a case ID given twice (whose records sort next to
// each other, a case ID being made of the group key and the repeat).
func (a *aggregator) sorted() (*caseRows, []Failure) {
	keys := make([]GroupKey, len(a.groups))
	for i, g := range a.groups {
		keys[i] = g.key
	}
	a.tables.keys = keys
	slices.SortFunc(a.rows, func(x, y caseRow) int {
		return cmp.Or(keys[x.group].compare(keys[y.group]), cmp.Compare(x.repeat, y.repeat), a.routeOrder(&x, &y), cmp.Compare(x.caseID, y.caseID), cmp.Compare(x.seq, y.seq))
	})
	failures := []Failure{}
	for i := range a.rows {
		r := &a.rows[i]
		if i > 0 && sameCase(&a.rows[i-1], r) {
			a.duplicates = true
		}
		if r.failure >= 0 {
			failures = append(failures, a.tables.failures[r.failure])
		}
	}
	return &caseRows{rows: a.rows, caseTables: a.tables}, failures
}

// routeOrder puts the cases of dataset rows by catalog size, then by row
// (numbers as numbers: a row's default id is its line).
func (a *aggregator) routeOrder(x, y *caseRow) int {
	if x.route < 0 || y.route < 0 {
		return 0
	}
	rx, ry := &a.tables.routes[x.route], &a.tables.routes[y.route]
	return cmp.Or(cmp.Compare(rx.distractors, ry.distractors), rowOrder(a.tables.strs[rx.row], a.tables.strs[ry.row]))
}

// sameCase reports whether two rows are records of one case.
func sameCase(x, y *caseRow) bool {
	return x.caseID != "" && x.caseID == y.caseID && x.group == y.group && x.repeat == y.repeat
}

// caseRows are a run's cases in case order, with what their rows point to.
type caseRows struct {
	rows []caseRow
	caseTables
}

// stats is the CaseStats of r, as the reports show it: without per-turn
// figures, settings, and the latency percentiles other than p50, p95 and
// max.
func (cs *caseRows) stats(r *caseRow) CaseStats {
	k := cs.keys[r.group]
	c := CaseStats{
		GroupKey: k, Name: caseName(k, int(r.repeat)), CaseID: r.caseID, Repeat: int(r.repeat),
		File: cs.strs[r.file], Line: int(r.line), Status: cs.strs[r.status], MS: r.ms,
		Expectations: int(r.expectations), Failed: []record.Expectation{},
		Steps: int(r.steps), ToolCalls: int(r.toolCalls), ModelRequests: int(r.modelRequests),
		Turns: int(r.turns), Stopped: int(r.stopped),
		UnknownTools: int(r.unknown), BadArguments: int(r.badArgs), Denied: int(r.denied),
		ToolErrors: int(r.toolErrors), Timeouts: int(r.timeouts), ProtocolErrors: int(r.protocolErrors),
		ErrorCodes: []CodeCount{}, OtherErrors: int(r.otherErrors), VersionFailures: int(r.versionFailures),
		Restarts: int(r.restarts), Reinitialized: int(r.reinitialized), AskedUser: int(r.askedUser), Clipped: int(r.clipped),
		ResultBytes: int(r.resultBytes), MaxResultBytes: int(r.maxResultBytes),
		ToolDefBytes: int(r.defBytes), ToolDefTokens: int(r.defTokens),
		ToolDefBytesTotal: int(r.defBytesTotal), ToolDefTokensTotal: int(r.defTokensTotal),
		PerTurn: []TurnStats{},
		Latency: Latency{N: int(r.latN), P50: r.p50, P95: r.p95, Max: r.maxMS},
		Usage:   r.usage, ModelFigures: r.models, Servers: cs.servers[r.servers],
	}
	if r.codes >= 0 {
		c.ErrorCodes = cs.codes[r.codes]
	}
	if r.route >= 0 {
		rr := &cs.routes[r.route]
		c.Route = &record.Route{
			Row: cs.strs[rr.row], Expected: splitTools(cs.strs[rr.expected]), Chosen: cs.strs[rr.chosen],
			Correct: rr.correct, ArgsDetail: cs.strs[rr.detail], Distractors: int(rr.distractors), Lexical: rr.lexical,
		}
		if rr.args != 0 {
			ok := rr.args == 1
			c.Route.ArgsOK = &ok
		}
		c.Name = r.caseID
	}
	if r.started != 0 {
		c.Started = time.Unix(0, r.started).UTC()
	}
	if r.failure >= 0 {
		f := &cs.failures[r.failure]
		c.Error, c.Failed = f.Error, f.Expectations
	}
	return c
}

// groupSum sums the cases of one group.
type groupSum struct {
	g                                                 GroupStats
	codes                                             map[int]int
	steps, calls, requests, resultBytes, ms, defTotal float64
}

func (s *groupSum) add(c *CaseStats) {
	g := &s.g
	if g.Cases == 0 {
		g.File = c.File
	}
	g.Cases++
	switch c.Status {
	case record.StatusPass:
		g.Passed++
	case record.StatusError:
		g.Errored++
	default:
		// Any status but pass and error counts as a failure, so that an
		// unexpected status is never reported as a pass.
		g.Failed++
	}
	s.steps += float64(c.Steps)
	s.calls += float64(c.ToolCalls)
	s.requests += float64(c.ModelRequests)
	s.resultBytes += float64(c.ResultBytes)
	s.ms += c.MS
	s.defTotal += float64(c.ToolDefTokensTotal)

	g.ToolDefBytes = max(g.ToolDefBytes, c.ToolDefBytes)
	g.ToolDefTokens = max(g.ToolDefTokens, c.ToolDefTokens)
	g.ToolCalls += c.ToolCalls
	g.ModelRequests += c.ModelRequests
	g.UnknownTools += c.UnknownTools
	g.BadArguments += c.BadArguments
	g.Denied += c.Denied
	g.Timeouts += c.Timeouts
	g.ProtocolErrors += c.ProtocolErrors
	for _, cc := range c.ErrorCodes {
		if s.codes == nil {
			s.codes = map[int]int{}
		}
		s.codes[cc.Code] += cc.Count
	}
	g.VersionFailures += c.VersionFailures
	g.Reinitialized += c.Reinitialized
	g.AskedUser += c.AskedUser
	g.Clipped += c.Clipped
	g.ResultBytes += c.ResultBytes
	g.MaxResultBytes = max(g.MaxResultBytes, c.MaxResultBytes)
	g.ToolDefTokensTotal += c.ToolDefTokensTotal
	g.Usage = g.Usage.Add(c.Usage)
	g.ModelFigures.add(c.ModelFigures)
	g.Lexical = g.Lexical || (c.Route != nil && c.Route.Lexical)
}

// finish is the group's figures; callMS are its calls' latencies, which
// it keeps, sorted.
func (s *groupSum) finish(k GroupKey, callMS []float64) GroupStats {
	g := s.g
	g.GroupKey = k
	g.ErrorCodes = codeCounts(s.codes)
	n := float64(g.Cases)
	g.PassRate = float64(g.Passed) / n
	g.MeanSteps = s.steps / n
	g.MeanToolCalls = s.calls / n
	g.MeanModelRequests = s.requests / n
	g.MeanResultBytes = s.resultBytes / n
	g.MeanCaseMS = s.ms / n
	g.MeanToolDefTokensTotal = s.defTotal / n
	g.MeanCost = g.Cost / n
	g.callMS = callMS
	g.Latency = latencyOf(g.callMS)
	return g
}

// allCases yields the figures of every case, in case order, one at a time
// (see caseRows.stats). A summary read from a summary.json of schema 2 has
// none.
func (s *Summary) allCases() iter.Seq[*CaseStats] {
	return func(yield func(*CaseStats) bool) {
		if s.cases == nil {
			return
		}
		for i := range s.cases.rows {
			c := s.cases.stats(&s.cases.rows[i])
			if !yield(&c) {
				return
			}
		}
	}
}

// caseCount is how many cases allCases yields.
func (s *Summary) caseCount() int {
	if s.cases == nil {
		return 0
	}
	return len(s.cases.rows)
}

// Cases builds the figures of every case, in case order (without their
// per-turn figures and settings; see caseRows.stats): for a page that
// shows one run's cases, not for the reports, which read the cases one at
// a time. A summary read from a summary.json of schema 2 has none.
func (s *Summary) Cases() []CaseStats {
	out := make([]CaseStats, 0, s.caseCount())
	for c := range s.allCases() {
		out = append(out, *c)
	}
	return out
}
