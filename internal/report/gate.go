package report

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// metric is one figure of a group that a gate can check: its name, what it
// means and how the group's cases make it. The table in the package
// documentation and docs/scenarios.md list them; tests keep them in step.
type metric struct {
	name, meaning, aggregation string
	get                        func(*GroupStats) float64
}

// metrics are the gate metrics, in the order of the documentation table.
var metrics = []metric{
	{"cases", "cases run", "count", func(g *GroupStats) float64 { return float64(g.Cases) }},
	{"passed", "cases whose every expectation held", "count", func(g *GroupStats) float64 { return float64(g.Passed) }},
	{"failed", "cases with a failed expectation", "count", func(g *GroupStats) float64 { return float64(g.Failed) }},
	{"errored", "cases that could not run", "count", func(g *GroupStats) float64 { return float64(g.Errored) }},
	{"pass_rate", "passed / cases (an errored case did not pass)", "ratio 0..1", func(g *GroupStats) float64 { return g.PassRate }},
	{"steps", "tool calls the model proposed (turns' steps)", "per case, mean", func(g *GroupStats) float64 { return g.MeanSteps }},
	{"tool_calls", "tool calls recorded", "per case, mean", func(g *GroupStats) float64 { return g.MeanToolCalls }},
	{"model_requests", "requests to the model", "per case, mean", func(g *GroupStats) float64 { return g.MeanModelRequests }},
	{"unknown_tools", "calls to a tool not offered (nothing sent)", "sum", func(g *GroupStats) float64 { return float64(g.UnknownTools) }},
	{"model_errors", "model requests answered by the model's malformed output", "sum", func(g *GroupStats) float64 { return float64(g.ModelErrors) }},
	{"bad_arguments", "calls with arguments not a JSON object or too large", "sum", func(g *GroupStats) float64 { return float64(g.BadArguments) }},
	{"denied", "calls the person did not approve", "sum", func(g *GroupStats) float64 { return float64(g.Denied) }},
	{"timeouts", "calls with no answer within the tool timeout", "sum", func(g *GroupStats) float64 { return float64(g.Timeouts) }},
	{"protocol_errors", "calls answered by a JSON-RPC error (with a code)", "sum", func(g *GroupStats) float64 { return float64(g.ProtocolErrors) }},
	{"version_failures", "servers with no common protocol revision", "sum", func(g *GroupStats) float64 { return float64(g.VersionFailures) }},
	{"asked_user", "calls that put a question to the person", "sum", func(g *GroupStats) float64 { return float64(g.AskedUser) }},
	{"clipped", "results cut to the result budget", "sum", func(g *GroupStats) float64 { return float64(g.Clipped) }},
	{"result_bytes", "bytes of results given to the model", "per case total, mean", func(g *GroupStats) float64 { return g.MeanResultBytes }},
	{"max_result_bytes", "largest single result given to the model", "max", func(g *GroupStats) float64 { return float64(g.MaxResultBytes) }},
	{"tool_def_bytes", "bytes of the tools array of one model request", "max over requests", func(g *GroupStats) float64 { return float64(g.ToolDefBytes) }},
	{"tool_def_tokens", "o200k tokens of the tools array of one model request", "max over requests", func(g *GroupStats) float64 { return float64(g.ToolDefTokens) }},
	{"tool_def_tokens_total", "tool-definition tokens summed over a case's requests", "per case total, mean", func(g *GroupStats) float64 { return g.MeanToolDefTokensTotal }},
	{"total_tokens", "tokens the model endpoint reported (0 if unknown)", "per case total, mean", func(g *GroupStats) float64 {
		if g.Usage == nil {
			return 0
		}
		return float64(g.Usage.TotalTokens) / float64(g.Cases)
	}},
	{"cost", "what the model's and judges' requests cost at their price", "per case total, mean", func(g *GroupStats) float64 { return g.MeanCost }},
	{"case_ms", "wall time of a case", "per case, mean", func(g *GroupStats) float64 { return g.MeanCaseMS }},
	{"mean_call_ms", "call latency in the host, mean", "pooled calls", func(g *GroupStats) float64 { return g.Latency.Mean }},
	{"p50_call_ms", "call latency, median", "pooled calls", func(g *GroupStats) float64 { return g.Latency.P50 }},
	{"p90_call_ms", "call latency, 90th percentile", "pooled calls", func(g *GroupStats) float64 { return g.Latency.P90 }},
	{"p95_call_ms", "call latency, 95th percentile", "pooled calls", func(g *GroupStats) float64 { return g.Latency.P95 }},
	{"p99_call_ms", "call latency, 99th percentile", "pooled calls", func(g *GroupStats) float64 { return g.Latency.P99 }},
	{"max_call_ms", "call latency, slowest call", "pooled calls", func(g *GroupStats) float64 { return g.Latency.Max }},
}

// MetricNames lists the metrics a gate can check, in documentation order.
func MetricNames() []string {
	names := make([]string, len(metrics))
	for i, m := range metrics {
		names[i] = m.name
	}
	return names
}

// Metric is a gate metric as the reference documents it.
type Metric struct {
	Name, Meaning, Aggregation string
}

// Metrics lists the metrics a gate can check, in documentation order.
func Metrics() []Metric {
	out := make([]Metric, len(metrics))
	for i, m := range metrics {
		out[i] = Metric{Name: m.name, Meaning: m.meaning, Aggregation: m.aggregation}
	}
	return out
}

func lookupMetric(name string) (metric, bool) {
	for _, m := range metrics {
		if m.name == name {
			return m, true
		}
	}
	return metric{}, false
}

// ErrGate is wrapped by every error about a gate's text or file.
var ErrGate = errors.New("invalid gate")

// Gate is a threshold a run must hold: "<metric> <op> <right side>",
// checked on every scenario+variant+model group that its scopes match.
//
// The right side is a number, or "baseline" optionally followed by
// "* <factor>", "+ <delta>" or "- <delta>": the same metric of the same
// group in a baseline run (e.g. "pass_rate >= baseline",
// "tool_def_tokens <= baseline * 1.05"). A group absent from the baseline
// is new and passes such a gate with a note.
type Gate struct {
	// Text is the gate as written.
	Text   string
	Metric string
	// Op is one of < <= == != >= >.
	Op    string
	Value float64
	// Baseline is set when the right side refers to the baseline run;
	// BaselineOp is then 0 (the value itself), '*', '+' or '-' with Value.
	Baseline   bool
	BaselineOp byte
	// Scenario, Variant and Model restrict the gate to groups whose names
	// match in full; nil matches all.
	Scenario, Variant, Model *regexp.Regexp
	// Pos is where the gate was written ("gates.yaml:4"), for messages.
	Pos string
}

var gateRE = regexp.MustCompile(`^\s*([A-Za-z0-9_]+)\s*(<=|>=|==|!=|<|>)\s*(.*?)\s*$`)

// ParseGate parses "<metric> <op> <number>" or "<metric> <op> baseline[
// (*|+|-) <number>]". Errors wrap ErrGate and, for an unknown metric,
// list the known ones.
func ParseGate(s string) (Gate, error) {
	m := gateRE.FindStringSubmatch(s)
	if m == nil {
		return Gate{}, fmt.Errorf("%w %q: want \"<metric> <op> <number>\" with op one of < <= == != >= >", ErrGate, s)
	}
	g := Gate{Text: strings.TrimSpace(s), Metric: m[1], Op: m[2]}
	if _, ok := lookupMetric(g.Metric); !ok {
		return Gate{}, fmt.Errorf("%w %q: unknown metric %q (known: %s)", ErrGate, s, g.Metric, strings.Join(MetricNames(), ", "))
	}
	rhs := m[3]
	if rest, ok := strings.CutPrefix(rhs, "baseline"); ok {
		g.Baseline = true
		rest = strings.TrimSpace(rest)
		if rest == "" {
			return g, nil
		}
		switch rest[0] {
		case '*', '+', '-':
			g.BaselineOp = rest[0]
		default:
			return Gate{}, fmt.Errorf("%w %q: after baseline want * + or - and a number, got %q", ErrGate, s, rest)
		}
		rest = strings.TrimSpace(rest[1:])
		v, err := parseNumber(rest)
		if err != nil {
			return Gate{}, fmt.Errorf("%w %q: %v", ErrGate, s, err)
		}
		g.Value = v
		return g, nil
	}
	if rhs == "" {
		return Gate{}, fmt.Errorf("%w %q: missing a number after %s", ErrGate, s, g.Op)
	}
	v, err := parseNumber(rhs)
	if err != nil {
		return Gate{}, fmt.Errorf("%w %q: %v", ErrGate, s, err)
	}
	g.Value = v
	return g, nil
}

func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

// String is the gate as written, with its scopes.
func (g Gate) String() string {
	s := g.Text
	var scopes []string
	for _, sc := range []struct {
		name string
		re   *regexp.Regexp
	}{{"scenario", g.Scenario}, {"variant", g.Variant}, {"model", g.Model}} {
		if sc.re != nil {
			scopes = append(scopes, sc.name+"~"+unanchor(sc.re))
		}
	}
	if len(scopes) > 0 {
		s += " [" + strings.Join(scopes, " ") + "]"
	}
	return s
}

func anchor(re string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + re + `)$`)
}

func unanchor(re *regexp.Regexp) string {
	s := re.String()
	return strings.TrimSuffix(strings.TrimPrefix(s, "^(?:"), ")$")
}

func (g *Gate) matches(k GroupKey) bool {
	return (g.Scenario == nil || g.Scenario.MatchString(k.Scenario)) &&
		(g.Variant == nil || g.Variant.MatchString(k.Variant)) &&
		(g.Model == nil || g.Model.MatchString(k.Model))
}

// GateResult is one gate checked on one group.
type GateResult struct {
	Gate Gate
	// Group is the group checked; zero when no group matched the gate.
	Group GroupKey
	// Value is the group's metric; Limit the resolved right side.
	Value, Limit float64
	Passed       bool
	// Detail says what was found, e.g. "pass_rate = 66.7%, want >= 100%".
	Detail string
}

// EvaluateGates checks every gate on every group of s that it matches, in
// the order of gates, then of groups. A gate that matches no group fails,
// since it most likely names a scenario that no longer exists. baseline
// may be nil; gates that refer to it then fail, saying so.
func EvaluateGates(s *Summary, gates []Gate, baseline *Summary) []GateResult {
	var results []GateResult
	for _, g := range gates {
		m, ok := lookupMetric(g.Metric)
		if !ok {
			results = append(results, GateResult{Gate: g, Detail: fmt.Sprintf("unknown metric %q", g.Metric)})
			continue
		}
		matched := false
		for i := range s.Groups {
			grp := &s.Groups[i]
			if !g.matches(grp.GroupKey) {
				continue
			}
			matched = true
			results = append(results, evaluate(g, m, grp, baseline))
		}
		if !matched {
			results = append(results, GateResult{Gate: g, Detail: "no scenario, variant and model match this gate"})
		}
	}
	return results
}

func evaluate(g Gate, m metric, grp *GroupStats, baseline *Summary) GateResult {
	r := GateResult{Gate: g, Group: grp.GroupKey, Value: m.get(grp), Limit: g.Value}
	if g.Baseline {
		if baseline == nil {
			r.Detail = "needs a baseline run"
			return r
		}
		bg := baseline.Group(grp.GroupKey)
		if bg == nil {
			r.Passed = true
			r.Detail = fmt.Sprintf("%s = %s; not in the baseline run, skipped", g.Metric, fmtMetric(g.Metric, r.Value))
			return r
		}
		bv := m.get(bg)
		switch g.BaselineOp {
		case '*':
			r.Limit = bv * g.Value
		case '+':
			r.Limit = bv + g.Value
		case '-':
			r.Limit = bv - g.Value
		default:
			r.Limit = bv
		}
	}
	r.Passed = holds(r.Value, g.Op, r.Limit)
	r.Detail = fmt.Sprintf("%s = %s, want %s %s", g.Metric, fmtMetric(g.Metric, r.Value), g.Op, fmtMetric(g.Metric, r.Limit))
	return r
}

// holds compares with a tolerance of one part in 1e9, so that a mean such
// as 0.1+0.2 meets "== 0.3".
func holds(v float64, op string, limit float64) bool {
	eps := 1e-9 * max(1, math.Abs(limit))
	switch op {
	case "<":
		return v < limit-eps
	case "<=":
		return v <= limit+eps
	case "==":
		return math.Abs(v-limit) <= eps
	case "!=":
		return math.Abs(v-limit) > eps
	case ">=":
		return v >= limit-eps
	case ">":
		return v > limit+eps
	}
	return false
}

func fmtMetric(name string, v float64) string {
	switch name {
	case "pass_rate":
		return fmtPct(v)
	case "cost":
		return fmtCost(v)
	}
	return fmtFloat(v)
}

// GateVerdict turns gate results into a verdict: regressed when any gate
// failed.
func GateVerdict(results []GateResult) Verdict {
	var v Verdict
	for _, r := range results {
		if !r.Passed {
			v.Regressed = true
			v.Reasons = append(v.Reasons, gateLine(r))
		}
	}
	return v
}

func gateLine(r GateResult) string {
	s := r.Gate.String()
	if r.Gate.Pos != "" {
		s = r.Gate.Pos + ": " + s
	}
	if r.Group != (GroupKey{}) {
		s += ": " + r.Group.String()
	}
	return s + ": " + r.Detail
}

// GateTable has one row per gate and group.
func GateTable(results []GateResult) *Table {
	t := &Table{
		Title:   "Gates",
		Columns: []Column{{Name: "gate"}, {Name: "scenario"}, {Name: "result"}, {Name: "detail", Priority: 1}},
	}
	for _, r := range results {
		status := "pass"
		if !r.Passed {
			status = "fail"
		}
		group := "-"
		if r.Group != (GroupKey{}) {
			group = r.Group.String()
		}
		t.Rows = append(t.Rows, []Cell{textCell(r.Gate.String()), textCell(group), statusCell(status), textCell(r.Detail)})
	}
	return t
}
