package report

import (
	"fmt"
	"math"

	"github.com/hosteval/hosteval/internal/gate"
)

// metricValues are the figures of a group that the gate metrics name, one
// for each of [gate.Metrics] (TestMetricValues holds the two in step).
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
func EvaluateGates(s *Summary, gates []gate.Gate, baseline *Summary) []GateResult {
	var results []GateResult
	for _, g := range gates {
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

func evaluate(g gate.Gate, get func(*GroupStats) float64, grp *GroupStats, baseline *Summary) GateResult {
	r := GateResult{Gate: g, Group: grp.GroupKey, Value: get(grp), Limit: g.Value}
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
		bv := get(bg)
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
