package report

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/hosteval/hosteval/internal/record"
)

// SummarySchema is the version of the summary.json schema ([Summary]).
// Adding a field is compatible; renaming or removing one needs a new version.
//
// Version 2 dropped "cases", a copy of every case's figures (200 MB for a
// run of 100,000 cases, all of it in records.jsonl), for "failures", the
// cases that did not pass and why. [ReadSummaryJSON] reads both.
const SummarySchema = 2

// Summary is a run aggregated per group and per tool, with the cases that
// did not pass; it is also the content of summary.json, whose schema is
// versioned by SummarySchema. Every case's figures stay in memory as
// compact rows (for the cases table and JUnit: see Cases), not in
// summary.json.
//
// summary.json fields (all names are stable within a schema version):
//
//	schema      int       SummarySchema
//	run         object    run.json when present: run_id, started, finished, args, hosteval_version, interrupted,
//	                      suite, cases, shard (a shard's "K/N"), shards and missing_shards (a merged run's)
//	run_id      string    the run's ID (see record.Run.ID)
//	totals      object    cases, passed, failed, errored, pass_rate, call_ms (pooled), model_requests
//	                      and tool_def_tokens_per_request over the whole run
//	groups      []object  one per scenario+variant+model, sorted by those names: see GroupStats
//	tools       []object  one per server and tool called, sorted by those names: see ToolStats
//	routing     object    only when cases came from dataset rows: groups (one per scenario+variant+
//	                      model+catalog size: see RoutingStats), paired (see PairedRouting) and
//	                      targets (see TargetResult)
//	failures    []object  one per case that did not pass, in case order (scenario, variant, model,
//	                      repeat): status, case, case_id, where, error, expectations (those that failed)
//	warnings    []string  lines skipped while reading the run
//
// Times are RFC 3339 in UTC; durations are milliseconds; counts are ints;
// means are float64. Latency objects hold n, min, mean, p50, p90, p95, p99
// and max over the calls that were sent to a server (calls rejected by the
// host, which send nothing, would only drag the figures to zero).
type Summary struct {
	Schema   int             `json:"schema"`
	Run      *record.RunInfo `json:"run,omitempty"`
	RunID    string          `json:"run_id"`
	Totals   Totals          `json:"totals"`
	Groups   []GroupStats    `json:"groups"`
	Tools    []ToolStats     `json:"tools"`
	Routing  *Routing        `json:"routing,omitempty"`
	Failures []Failure       `json:"failures"`
	Warnings []string        `json:"warnings"`
	// Incomplete says why the run holds fewer cases than it set out to
	// ("116 of 200 cases recorded; the run did not finish"; see
	// record.Incomplete), or is empty. It is the first warning too.
	Incomplete string `json:"incomplete,omitempty"`

	// cases are every case, in case order; nil for a summary read from a
	// summary.json of schema 2.
	cases *caseRows
}

// Totals counts the cases of a whole run, and the figures a trend across
// runs follows.
type Totals struct {
	Cases    int     `json:"cases"`
	Passed   int     `json:"passed"`
	Failed   int     `json:"failed"`
	Errored  int     `json:"errored"`
	PassRate float64 `json:"pass_rate"`
	// Latency pools the calls of every case that were sent to a server.
	Latency Latency `json:"call_ms"`
	// ModelRequests counts the requests to the model; ToolDefTokens is
	// the mean tool-definition tokens one of them carried.
	ModelRequests int     `json:"model_requests"`
	ToolDefTokens float64 `json:"tool_def_tokens_per_request"`
	// Reinitialized counts the new sessions servers' ended ones took.
	Reinitialized int `json:"reinitialized,omitempty"`
	ModelFigures
}

// GroupKey identifies the cases that are repeats of one another.
type GroupKey struct {
	Scenario string `json:"scenario"`
	Variant  string `json:"variant,omitempty"`
	Model    string `json:"model"`
}

// String is scenario[/variant][/model].
func (k GroupKey) String() string {
	s := k.Scenario
	if k.Variant != "" {
		s += "/" + k.Variant
	}
	if k.Model != "" {
		s += "/" + k.Model
	}
	return s
}

func (k GroupKey) compare(o GroupKey) int {
	return cmp.Or(
		cmp.Compare(k.Scenario, o.Scenario),
		cmp.Compare(k.Variant, o.Variant),
		cmp.Compare(k.Model, o.Model),
	)
}

// CodeCount is how many protocol errors had one JSON-RPC code.
type CodeCount struct {
	Code  int `json:"code"`
	Count int `json:"count"`
}

// ServerInfo is one server connection of a case, as negotiated.
type ServerInfo struct {
	Name           string `json:"name"`
	Mode           string `json:"mode,omitempty"`
	Protocol       string `json:"protocol,omitempty"`
	Offered        string `json:"offered,omitempty"`
	Restarted      bool   `json:"restarted,omitempty"`
	VersionFailure bool   `json:"version_failure,omitempty"`
	Error          string `json:"error,omitempty"`
	// Reinitialized counts the new sessions the server's ended ones took.
	Reinitialized int `json:"reinitialized,omitempty"`
}

// TurnStats is the tool-definition cost of one turn: every model request of
// the turn carries the whole catalog again.
type TurnStats struct {
	Turn          int `json:"turn"`
	ModelRequests int `json:"model_requests"`
	ToolDefBytes  int `json:"tool_def_bytes"`
	ToolDefTokens int `json:"tool_def_tokens"`
}

// CaseStats is the figures of one case (one Record).
type CaseStats struct {
	GroupKey
	// Name is scenario[/variant][/model]#repeat, the name JUnit shows;
	// for a case made from a dataset row, its case ID, which names the row.
	Name   string `json:"name"`
	CaseID string `json:"case_id"`
	Repeat int    `json:"repeat"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Status string `json:"status"`
	// Error says why an errored case could not run.
	Error   string    `json:"error,omitempty"`
	Started time.Time `json:"started,omitzero"`
	MS      float64   `json:"ms"`

	Expectations int                  `json:"expectations"`
	Failed       []record.Expectation `json:"failed_expectations"`

	// Steps sums the turns' steps (tool calls the model proposed);
	// ToolCalls counts the calls recorded; they differ only for a case cut
	// short mid-turn.
	Steps         int `json:"steps"`
	ToolCalls     int `json:"tool_calls"`
	ModelRequests int `json:"model_requests"`
	Turns         int `json:"turns"`
	Stopped       int `json:"stopped_turns"`

	UnknownTools   int         `json:"unknown_tools"`
	BadArguments   int         `json:"bad_arguments"`
	Denied         int         `json:"denied"`
	ToolErrors     int         `json:"tool_errors"`
	Timeouts       int         `json:"timeouts"`
	ProtocolErrors int         `json:"protocol_errors"`
	ErrorCodes     []CodeCount `json:"error_codes"`
	// OtherErrors are calls with outcome error but no JSON-RPC code
	// (transport failures, dead servers, too many rounds).
	OtherErrors     int `json:"other_errors"`
	VersionFailures int `json:"version_failures"`
	Restarts        int `json:"restarts"`
	// Reinitialized counts the new sessions the host started because a
	// server had ended its session (HTTP 404, 2025-11-25).
	Reinitialized int `json:"reinitialized,omitempty"`
	AskedUser     int `json:"asked_user"`
	Clipped       int `json:"clipped"`

	ResultBytes    int `json:"result_bytes"`
	MaxResultBytes int `json:"max_result_bytes"`

	// ToolDefBytes and ToolDefTokens are per model request: the largest
	// catalog sent (the catalog offered when no request was made).
	// The totals sum every request of the case.
	ToolDefBytes       int         `json:"tool_def_bytes"`
	ToolDefTokens      int         `json:"tool_def_tokens"`
	ToolDefBytesTotal  int         `json:"tool_def_bytes_total"`
	ToolDefTokensTotal int         `json:"tool_def_tokens_total"`
	PerTurn            []TurnStats `json:"per_turn"`

	Latency Latency       `json:"call_ms"`
	Usage   *record.Usage `json:"usage,omitempty"`
	ModelFigures
	Servers []ServerInfo `json:"servers"`
	// Settings are the host settings the case ran under, when recorded.
	Settings *record.Settings `json:"settings,omitempty"`
	// Route is the routing verdict of a case made from a dataset row
	// (without its proposals, tags and ranks once aggregated).
	Route *record.Route `json:"route,omitempty"`

	callMS []float64
}

// Passed reports whether the case passed.
func (c *CaseStats) Passed() bool { return c.Status == record.StatusPass }

// GroupStats aggregates the repeats of one scenario+variant+model.
// Means are per case; sums are over the cases; latency pools the calls of
// every case.
type GroupStats struct {
	GroupKey
	// File is the scenario file of the group's first case.
	File     string  `json:"file,omitempty"`
	Cases    int     `json:"cases"`
	Passed   int     `json:"passed"`
	Failed   int     `json:"failed"`
	Errored  int     `json:"errored"`
	PassRate float64 `json:"pass_rate"`

	MeanSteps         float64 `json:"mean_steps"`
	MeanToolCalls     float64 `json:"mean_tool_calls"`
	MeanModelRequests float64 `json:"mean_model_requests"`
	MeanResultBytes   float64 `json:"mean_result_bytes"`
	MeanCaseMS        float64 `json:"mean_case_ms"`
	// MeanToolDefTokensTotal is the mean over cases of the tokens of every
	// request's catalog summed.
	MeanToolDefTokensTotal float64 `json:"mean_tool_def_tokens_total"`
	// ToolDefBytes and ToolDefTokens are the largest per-request catalog.
	ToolDefBytes  int `json:"tool_def_bytes"`
	ToolDefTokens int `json:"tool_def_tokens"`

	ToolCalls          int         `json:"tool_calls"`
	ModelRequests      int         `json:"model_requests"`
	UnknownTools       int         `json:"unknown_tools"`
	BadArguments       int         `json:"bad_arguments"`
	Denied             int         `json:"denied"`
	Timeouts           int         `json:"timeouts"`
	ProtocolErrors     int         `json:"protocol_errors"`
	ErrorCodes         []CodeCount `json:"error_codes"`
	VersionFailures    int         `json:"version_failures"`
	Reinitialized      int         `json:"reinitialized,omitempty"`
	AskedUser          int         `json:"asked_user"`
	Clipped            int         `json:"clipped"`
	ResultBytes        int         `json:"result_bytes"`
	MaxResultBytes     int         `json:"max_result_bytes"`
	ToolDefTokensTotal int         `json:"tool_def_tokens_total"`

	Latency Latency       `json:"call_ms"`
	Usage   *record.Usage `json:"usage,omitempty"`
	// The model figures are sums; MeanCost is the cost per case.
	ModelFigures
	MeanCost float64 `json:"mean_cost"`

	// Lexical is set when the group's cases came from the lexical router
	// (a proxy, not a model: its label says so).
	Lexical bool `json:"lexical,omitempty"`

	// callMS pools the calls' latencies, sorted, for significance tests.
	callMS []float64
	// settings are the host settings of the group's first case (every
	// case of a group has the same), for what an A/B variant changed;
	// nil when not recorded.
	settings *record.Settings
}

// Label is the group's name as a table shows it, marking the lexical
// router as the proxy it is.
func (g *GroupStats) Label() string {
	if g.Lexical {
		return g.GroupKey.String() + " (lexical proxy)"
	}
	return g.GroupKey.String()
}

// Case names are scenario[/variant][/model]#repeat.
func caseName(k GroupKey, repeat int) string {
	return k.String() + "#" + strconv.Itoa(repeat)
}

// CaseOf computes the figures of one record.
func CaseOf(rec *record.Record) CaseStats {
	k := GroupKey{Scenario: rec.Scenario, Variant: rec.Variant, Model: rec.Model}
	c := CaseStats{
		GroupKey:      k,
		Name:          caseName(k, rec.Repeat),
		CaseID:        rec.CaseID,
		Repeat:        rec.Repeat,
		File:          rec.File,
		Line:          rec.Line,
		Status:        rec.Status,
		Error:         rec.Error,
		Started:       rec.Started.UTC(),
		MS:            rec.MS,
		Expectations:  len(rec.Expectations),
		Failed:        []record.Expectation{},
		ToolCalls:     len(rec.Calls),
		ModelRequests: len(rec.ModelRequests),
		Turns:         len(rec.Turns),
		Settings:      rec.Settings,
		Route:         rec.Route,
		Servers:       []ServerInfo{},
		PerTurn:       []TurnStats{},
	}
	if rec.Route != nil && rec.CaseID != "" {
		// Every row of a group is its repeat 0: the case ID names the row.
		c.Name = rec.CaseID
	}
	for _, e := range rec.Expectations {
		if !e.Passed {
			c.Failed = append(c.Failed, e)
		}
	}
	n := rec.Counts()
	c.Steps, c.Stopped = n.Steps, n.StoppedTurns
	c.UnknownTools, c.BadArguments, c.Denied, c.ToolErrors, c.Timeouts = n.UnknownTools, n.BadArguments, n.Denied, n.ToolErrors, n.Timeouts
	c.ProtocolErrors, c.ErrorCodes, c.OtherErrors = n.ProtocolErrors, codeCounts(n.ErrorCodes), n.OtherErrors
	c.VersionFailures, c.Restarts, c.Reinitialized = n.VersionFailures, n.Restarts, n.Reinitialized
	c.AskedUser, c.Clipped = n.AskedUser, n.Clipped
	c.ResultBytes, c.MaxResultBytes = n.ResultBytes, n.MaxResultBytes
	c.callMS = make([]float64, 0, len(rec.Calls))
	for i := range rec.Calls {
		if call := &rec.Calls[i]; !record.SentNothing(call.Outcome) {
			c.callMS = append(c.callMS, call.MS)
		}
	}
	for _, s := range rec.Servers {
		c.Servers = append(c.Servers, ServerInfo{
			Name: s.Name, Mode: s.Mode, Protocol: s.Protocol, Offered: s.Offered,
			Restarted: s.Restarted, VersionFailure: s.VersionFailure, Error: s.Error, Reinitialized: s.Reinitialized,
		})
	}
	slices.SortStableFunc(c.Servers, func(a, b ServerInfo) int { return cmp.Compare(a.Name, b.Name) })

	var usage *record.Usage
	turnIndex := make(map[int]int)
	for i := range rec.ModelRequests {
		mr := &rec.ModelRequests[i]
		c.ToolDefBytes = max(c.ToolDefBytes, mr.ToolDefBytes)
		c.ToolDefTokens = max(c.ToolDefTokens, mr.ToolDefTokens)
		c.ToolDefBytesTotal += mr.ToolDefBytes
		c.ToolDefTokensTotal += mr.ToolDefTokens
		usage = usage.Add(mr.Usage)
		j, ok := turnIndex[mr.Turn]
		if !ok {
			j = len(c.PerTurn)
			turnIndex[mr.Turn] = j
			c.PerTurn = append(c.PerTurn, TurnStats{Turn: mr.Turn})
		}
		t := &c.PerTurn[j]
		t.ModelRequests++
		t.ToolDefBytes += mr.ToolDefBytes
		t.ToolDefTokens += mr.ToolDefTokens
	}
	slices.SortFunc(c.PerTurn, func(a, b TurnStats) int { return cmp.Compare(a.Turn, b.Turn) })
	if len(rec.ModelRequests) == 0 {
		c.ToolDefBytes = rec.ToolDefs.Bytes
		c.ToolDefTokens = rec.ToolDefs.Tokens
	}
	// The record's own usage is the endpoint's total when the runner kept
	// it; the requests' sum stands in when it did not.
	c.Usage = rec.Usage
	if c.Usage == nil {
		c.Usage = usage
	}
	c.Latency = latencyOf(c.callMS)
	c.ModelFigures = modelFiguresOf(rec)
	return c
}

// ToolStats are the calls of one tool over a run (the calls whose name
// the host resolved to a server's tool) by outcome, with their latency and
// the size of what the model received.
type ToolStats struct {
	Server   string         `json:"server"`
	Tool     string         `json:"tool"`
	Calls    int            `json:"calls"`
	Outcomes map[string]int `json:"outcomes"`
	Clipped  int            `json:"clipped"`
	// ResultBytes sums the results given to the model; MaxResultBytes is
	// the largest; MeanResultBytes is per call.
	ResultBytes     int     `json:"result_bytes"`
	MeanResultBytes float64 `json:"mean_result_bytes"`
	MaxResultBytes  int     `json:"max_result_bytes"`
	// Latency is over the calls sent to the server.
	Latency Latency `json:"call_ms"`
}

// Name is "server/tool".
func (t *ToolStats) Name() string { return t.Server + "/" + t.Tool }

// codeCounts lists codes by code; never nil, so that summary.json has [].
func codeCounts(codes map[int]int) []CodeCount {
	out := make([]CodeCount, 0, len(codes))
	for _, code := range slices.Sorted(maps.Keys(codes)) {
		out = append(out, CodeCount{Code: code, Count: codes[code]})
	}
	return out
}

// Group returns the group with key k, or nil.
func (s *Summary) Group(k GroupKey) *GroupStats {
	i, ok := slices.BinarySearchFunc(s.Groups, k, func(g GroupStats, k GroupKey) int { return g.GroupKey.compare(k) })
	if !ok {
		return nil
	}
	return &s.Groups[i]
}
