package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/hosteval/hosteval/internal/gate"
	"github.com/hosteval/hosteval/internal/record"
)

// metricValues are the figures of a group that the gate metrics name, one
// for each of [gate.Metrics] but the routing metrics, which routingValues
// has (TestMetricValues holds them in step).
var metricValues = map[string]func(*GroupStats) float64{
	"cases":                 func(g *GroupStats) float64 { return float64(g.Cases) },
	"passed":                func(g *GroupStats) float64 { return float64(g.Passed) },
	"failed":                func(g *GroupStats) float64 { return float64(g.Failed) },
	"errored":               func(g *GroupStats) float64 { return float64(g.Errored) },
	"pass_rate":             func(g *GroupStats) float64 { return g.PassRate },
	"steps":                 func(g *GroupStats) float64 { return g.MeanSteps },
	"tool_calls":            func(g *GroupStats) float64 { return g.MeanToolCalls },
	"model_requests":        func(g *GroupStats) float64 { return g.MeanModelRequests },
	"unknown_tools":         func(g *GroupStats) float64 { return float64(g.UnknownTools) },
	"model_errors":          func(g *GroupStats) float64 { return float64(g.ModelErrors) },
	"truncated":             func(g *GroupStats) float64 { return float64(g.Truncated) },
	"bad_arguments":         func(g *GroupStats) float64 { return float64(g.BadArguments) },
	"denied":                func(g *GroupStats) float64 { return float64(g.Denied) },
	"timeouts":              func(g *GroupStats) float64 { return float64(g.Timeouts) },
	"protocol_errors":       func(g *GroupStats) float64 { return float64(g.ProtocolErrors) },
	"version_failures":      func(g *GroupStats) float64 { return float64(g.VersionFailures) },
	"asked_user":            func(g *GroupStats) float64 { return float64(g.AskedUser) },
	"clipped":               func(g *GroupStats) float64 { return float64(g.Clipped) },
	"result_bytes":          func(g *GroupStats) float64 { return g.MeanResultBytes },
	"max_result_bytes":      func(g *GroupStats) float64 { return float64(g.MaxResultBytes) },
	"tool_def_bytes":        func(g *GroupStats) float64 { return float64(g.ToolDefBytes) },
	"tool_def_tokens":       func(g *GroupStats) float64 { return float64(g.ToolDefTokens) },
	"tool_def_tokens_total": func(g *GroupStats) float64 { return g.MeanToolDefTokensTotal },
	"total_tokens": func(g *GroupStats) float64 {
		if g.Usage == nil {
			return 0
		}
		return float64(g.Usage.TotalTokens) / float64(g.Cases)
	},
	"cost":         func(g *GroupStats) float64 { return g.MeanCost },
	"case_ms":      func(g *GroupStats) float64 { return g.MeanCaseMS },
	"mean_call_ms": func(g *GroupStats) float64 { return g.Latency.Mean },
	"p50_call_ms":  func(g *GroupStats) float64 { return g.Latency.P50 },
	"p90_call_ms":  func(g *GroupStats) float64 { return g.Latency.P90 },
	"p95_call_ms":  func(g *GroupStats) float64 { return g.Latency.P95 },
	"p99_call_ms":  func(g *GroupStats) float64 { return g.Latency.P99 },
	"max_call_ms":  func(g *GroupStats) float64 { return g.Latency.Max },
}

// GateResult is one gate checked on one group.
type GateResult struct {
	Gate gate.Gate
	// Group is the group checked; zero when no group matched the gate.
	// A routing metric's group is a routing group: Routing is set, and
	// Distractors is its catalog size.
	Group       GroupKey
	Routing     bool
	Distractors int
	// Value is the group's metric; Limit the resolved right side.
	Value, Limit float64
	Passed       bool
	// Unchecked says the gate could not be checked because of the run's
	// configuration (a cost gate on a model without a price): not a
	// failed gate but a configuration error, exit 2.
	Unchecked bool
	// NoBaseline says the gate compares with a baseline run and there is
	// none yet (a suite's first run): it passes, with a note, unless the
	// command requires a baseline (-require-baseline).
	NoBaseline bool
	// Detail says what was found, e.g. "pass_rate = 66.7%, want >= 100%".
	Detail string
}

// EvaluateGates checks every gate on every group of s that it matches, in
// the order of gates, then of groups. A gate that matches no group fails,
// since it most likely names a scenario that no longer exists. baseline
// may be nil, as in a suite's first run: a gate that refers to it is then
// one result, passed with the note "no baseline yet" (NoBaseline), when it
// matches a group.
func EvaluateGates(s *Summary, gates []gate.Gate, baseline *Summary) []GateResult {
	var results []GateResult
	for _, g := range gates {
		if g.Baseline && baseline == nil {
			results = append(results, withoutBaseline(s, g))
			continue
		}
		if g.Routing() {
			results = append(results, evaluateRouting(s, g, baseline)...)
			continue
		}
		get, ok := metricValues[g.Metric]
		if !ok {
			results = append(results, GateResult{Gate: g, Detail: fmt.Sprintf("unknown metric %q", g.Metric)})
			continue
		}
		matched := false
		for i := range s.Groups {
			grp := &s.Groups[i]
			if !g.Matches(grp.Scenario, grp.Variant, grp.Model) {
				continue
			}
			matched = true
			results = append(results, evaluate(g, get, grp, baseline))
		}
		if !matched {
			results = append(results, GateResult{Gate: g, Detail: "no scenario, variant and model match this gate"})
		}
	}
	return results
}

// withoutBaseline is the result of a gate on a baseline when there is
// none: passed with a note when it matches a group, failed when it
// matches none (it most likely names a scenario that is not there).
func withoutBaseline(s *Summary, g gate.Gate) GateResult {
	matched := false
	if g.Routing() {
		if s.Routing != nil {
			for _, rg := range s.Routing.Groups {
				matched = matched || g.Matches(rg.Scenario, rg.Variant, rg.Model)
			}
		}
	} else {
		for _, grp := range s.Groups {
			matched = matched || g.Matches(grp.Scenario, grp.Variant, grp.Model)
		}
	}
	if !matched {
		return GateResult{Gate: g, Detail: "no scenario, variant and model match this gate"}
	}
	return GateResult{Gate: g, Passed: true, NoBaseline: true, Detail: NoBaselineNote(g)}
}

// NoBaselineNote is the note of a gate on a baseline checked without one:
// "no baseline yet: pass_rate >= baseline not checked".
func NoBaselineNote(g gate.Gate) string {
	return fmt.Sprintf("no baseline yet: %s not checked", g)
}

func evaluate(g gate.Gate, get func(*GroupStats) float64, grp *GroupStats, baseline *Summary) GateResult {
	r := GateResult{Gate: g, Group: grp.GroupKey, Value: get(grp), Limit: g.Value}
	if g.Metric == "cost" && len(grp.Unpriced) > 0 {
		// Their requests were never priced: the group's cost is unknown,
		// and 0 would pass any bound.
		r.Unchecked = true
		r.Detail = fmt.Sprintf("cost unknown: %s %s no price (add price: to %s openai: block, docs/models.md)",
			names(grp.Unpriced), oneOr(len(grp.Unpriced), "has", "have"), oneOr(len(grp.Unpriced), "its", "their"))
		return r
	}
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
		r.Limit = baselineLimit(g, get(bg))
	}
	r.Passed = holds(r.Value, g.Op, r.Limit)
	r.Detail = fmt.Sprintf("%s = %s, want %s %s", g.Metric, fmtMetric(g.Metric, r.Value), g.Op, fmtMetric(g.Metric, r.Limit))
	return r
}

// baselineLimit is the right side of a gate on the baseline's value bv.
func baselineLimit(g gate.Gate, bv float64) float64 {
	switch g.BaselineOp {
	case '*':
		return bv * g.Value
	case '+':
		return bv + g.Value
	case '-':
		return bv - g.Value
	}
	return bv
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
	case "pass_rate", "routing_accuracy", "no_tool_accuracy":
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
		if r.Unchecked {
			v.Unchecked = append(v.Unchecked, gateLine(r))
		}
		if r.NoBaseline {
			v.Notes = append(v.Notes, r.Detail)
		}
	}
	return v
}

// names lists model names for a sentence: "openai:a", "openai:a and
// judge openai:b".
func names(ns []string) string {
	if len(ns) < 2 {
		return strings.Join(ns, "")
	}
	return strings.Join(ns[:len(ns)-1], ", ") + " and " + ns[len(ns)-1]
}

// oneOr is one for n == 1, else many.
func oneOr(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func gateLine(r GateResult) string {
	s := r.Gate.String()
	if r.Gate.Pos != "" {
		s = r.Gate.Pos + ": " + s
	}
	if r.Group != (GroupKey{}) {
		s += ": " + r.GroupName()
	}
	return s + ": " + r.Detail
}

// GroupName names the group checked: a routing group with its catalog
// size.
func (r GateResult) GroupName() string {
	if r.Routing {
		return RouteKey{GroupKey: r.Group, Distractors: r.Distractors}.String()
	}
	return r.Group.String()
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
			group = r.GroupName()
		}
		t.Rows = append(t.Rows, []Cell{textCell(r.Gate.String()), textCell(group), statusCell(status), textCell(r.Detail)})
	}
	return t
}

// routingValues are the routing metrics' values of a routing group, one
// for each routing metric of [gate.Metrics] by its base name: the value,
// or why it is undefined there.
var routingValues = map[string]func(g *RoutingStats, arg string) (float64, string){
	"routing_accuracy": func(g *RoutingStats, _ string) (float64, string) {
		if g.Cases == 0 {
			return 0, "no case was scored"
		}
		return g.Accuracy.Value, ""
	},
	"macro_f1": func(g *RoutingStats, _ string) (float64, string) {
		if g.MacroF1 == nil {
			return 0, "no case was scored"
		}
		return *g.MacroF1, ""
	},
	"no_tool_accuracy": func(g *RoutingStats, _ string) (float64, string) {
		if g.NoTool == nil {
			return 0, "no row expects no tool"
		}
		return g.NoTool.Value, ""
	},
	"recall": func(g *RoutingStats, arg string) (float64, string) {
		c := g.Class(routeClass(arg))
		if c == nil || c.Recall == nil {
			return 0, "no row expects " + arg
		}
		return *c.Recall, ""
	},
	"precision": func(g *RoutingStats, arg string) (float64, string) {
		c := g.Class(routeClass(arg))
		if c == nil || c.Precision == nil {
			return 0, arg + " was never chosen"
		}
		return *c.Precision, ""
	},
	"confusions": func(g *RoutingStats, _ string) (float64, string) {
		return float64(g.Confusions), ""
	},
}

// routeClass is the class a metric's argument names: no_tool is the
// class of rows that expect none.
func routeClass(arg string) string {
	if arg == gate.NoToolArg {
		return record.NoTool
	}
	return arg
}

// evaluateRouting checks a routing metric's gate on every routing group
// it matches. A group where the metric is undefined is skipped; a gate
// that no group defines fails, as one that matches none does: it most
// likely names a tool or a scenario that is not there.
func evaluateRouting(s *Summary, g gate.Gate, baseline *Summary) []GateResult {
	get := routingValues[g.Metric]
	var results []GateResult
	matched := 0
	var why string
	var groups []RoutingStats
	if s.Routing != nil {
		groups = s.Routing.Groups
	}
	for i := range groups {
		rg := &groups[i]
		if !g.Matches(rg.Scenario, rg.Variant, rg.Model) {
			continue
		}
		matched++
		v, undefined := get(rg, g.Arg)
		if undefined != "" {
			why = undefined
			continue
		}
		r := GateResult{Gate: g, Group: rg.GroupKey, Routing: true, Distractors: rg.Distractors, Value: v, Limit: g.Value}
		name := g.MetricName()
		if g.Baseline {
			var bg *RoutingStats
			if baseline != nil {
				bg = baseline.Routing.Group(rg.RouteKey)
			}
			var bv float64
			var bwhy string
			if bg != nil {
				bv, bwhy = get(bg, g.Arg)
			}
			switch {
			case baseline == nil:
				r.Detail = "needs a baseline run"
				results = append(results, r)
				continue
			case bg == nil || bwhy != "":
				r.Passed = true
				r.Detail = fmt.Sprintf("%s = %s; not in the baseline run, skipped", name, fmtMetric(g.Metric, v))
				results = append(results, r)
				continue
			}
			r.Limit = baselineLimit(g, bv)
		}
		r.Passed = holds(r.Value, g.Op, r.Limit)
		r.Detail = fmt.Sprintf("%s = %s, want %s %s", name, fmtMetric(g.Metric, r.Value), g.Op, fmtMetric(g.Metric, r.Limit))
		results = append(results, r)
	}
	switch {
	case matched == 0:
		results = append(results, GateResult{Gate: g, Detail: "no routing group (cases made from dataset rows) matches this gate"})
	case len(results) == 0:
		results = append(results, GateResult{Gate: g, Detail: fmt.Sprintf("%s is undefined in every routing group it matches: %s", g.MetricName(), why)})
	}
	return results
}
