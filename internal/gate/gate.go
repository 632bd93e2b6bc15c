package gate

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Metric is a figure of a group that a gate can check: its name, what it
// means and how the group's cases make it. The package documentation's
// table and docs/scenarios.md (generated from [Metrics]) list them; tests
// keep them in step, and internal/report has a value for each.
type Metric struct {
	// Name is the metric's name; one that takes an argument is written
	// with it, "recall:<tool>".
	Name, Meaning, Aggregation string
	// Arg is what the metric takes after a colon ("tool"), "" for none.
	Arg string
	// Routing marks a metric of the routing figures: checked on each
	// routing group (scenario, variant, model and catalog size) of the
	// cases made from dataset rows, not on each scenario group.
	Routing bool
}

// Base is the metric's name without its argument: "recall".
func (m Metric) Base() string {
	base, _, _ := strings.Cut(m.Name, ":")
	return base
}

// metrics are the gate metrics, in the order of the documentation table.
var metrics = [...]Metric{
	{Name: "cases", Meaning: "cases run", Aggregation: "count"},
	{Name: "passed", Meaning: "cases whose every expectation held", Aggregation: "count"},
	{Name: "failed", Meaning: "cases with a failed expectation", Aggregation: "count"},
	{Name: "errored", Meaning: "cases that could not run", Aggregation: "count"},
	{Name: "pass_rate", Meaning: "passed / cases (an errored case did not pass)", Aggregation: "ratio 0..1"},
	{Name: "steps", Meaning: "tool calls the model proposed (turns' steps)", Aggregation: "per case, mean"},
	{Name: "tool_calls", Meaning: "tool calls recorded", Aggregation: "per case, mean"},
	{Name: "model_requests", Meaning: "requests to the model", Aggregation: "per case, mean"},
	{Name: "unknown_tools", Meaning: "calls to a tool not offered (nothing sent)", Aggregation: "sum"},
	{Name: "model_errors", Meaning: "model requests answered by the model's malformed output", Aggregation: "sum"},
	{Name: "truncated", Meaning: "model answers cut short by the endpoint (length, filter)", Aggregation: "sum"},
	{Name: "bad_arguments", Meaning: "calls with arguments not a JSON object or too large", Aggregation: "sum"},
	{Name: "denied", Meaning: "calls the person did not approve", Aggregation: "sum"},
	{Name: "timeouts", Meaning: "calls with no answer within the tool timeout", Aggregation: "sum"},
	{Name: "protocol_errors", Meaning: "calls answered by a JSON-RPC error (with a code)", Aggregation: "sum"},
	{Name: "version_failures", Meaning: "servers with no common protocol revision", Aggregation: "sum"},
	{Name: "asked_user", Meaning: "calls that put a question to the person", Aggregation: "sum"},
	{Name: "clipped", Meaning: "results cut to the result budget", Aggregation: "sum"},
	{Name: "result_bytes", Meaning: "bytes of results given to the model", Aggregation: "per case total, mean"},
	{Name: "max_result_bytes", Meaning: "largest single result given to the model", Aggregation: "max"},
	{Name: "tool_def_bytes", Meaning: "bytes of the tools array of one model request", Aggregation: "max over requests"},
	{Name: "tool_def_tokens", Meaning: "o200k tokens of the tools array of one model request", Aggregation: "max over requests"},
	{Name: "tool_def_tokens_total", Meaning: "tool-definition tokens summed over a case's requests", Aggregation: "per case total, mean"},
	{Name: "total_tokens", Meaning: "tokens the model endpoint reported (0 if unknown)", Aggregation: "per case total, mean"},
	{Name: "cost", Meaning: "what the model's and judges' requests cost at their price", Aggregation: "per case total, mean"},
	{Name: "case_ms", Meaning: "wall time of a case", Aggregation: "per case, mean"},
	{Name: "mean_call_ms", Meaning: "call latency in the host, mean", Aggregation: "pooled calls"},
	{Name: "p50_call_ms", Meaning: "call latency, median", Aggregation: "pooled calls"},
	{Name: "p90_call_ms", Meaning: "call latency, 90th percentile", Aggregation: "pooled calls"},
	{Name: "p95_call_ms", Meaning: "call latency, 95th percentile", Aggregation: "pooled calls"},
	{Name: "p99_call_ms", Meaning: "call latency, 99th percentile", Aggregation: "pooled calls"},
	{Name: "max_call_ms", Meaning: "call latency, slowest call", Aggregation: "pooled calls"},
	{Name: "routing_accuracy", Meaning: "rows whose routing verdict held (match rule and forbid)", Aggregation: "ratio 0..1", Routing: true},
	{Name: "macro_f1", Meaning: "F1 of the first choice, mean over the expected classes", Aggregation: "0..1", Routing: true},
	{Name: "no_tool_accuracy", Meaning: "rows that expect no tool answered without one", Aggregation: "ratio 0..1", Routing: true},
	{Name: "recall:<tool>", Meaning: "rows expecting the tool whose first choice it was", Aggregation: "ratio 0..1", Arg: "tool", Routing: true},
	{Name: "precision:<tool>", Meaning: "first choices of the tool that rows expected", Aggregation: "ratio 0..1", Arg: "tool", Routing: true},
	{Name: "confusions", Meaning: "rows whose first choice was not an expected tool", Aggregation: "count", Routing: true},
}

// Metrics lists the metrics a gate can check, in documentation order.
func Metrics() []Metric {
	return slices.Clone(metrics[:])
}

// MetricNames lists the names of the metrics a gate can check, in
// documentation order.
func MetricNames() []string {
	names := make([]string, len(metrics))
	for i, m := range metrics {
		names[i] = m.Name
	}
	return names
}

// IsMetric reports whether name is a metric a gate can check, by its
// base name ("recall" for recall:<tool>).
func IsMetric(name string) bool {
	_, ok := Lookup(name)
	return ok
}

// Lookup returns the metric whose base name is name.
func Lookup(name string) (Metric, bool) {
	for _, m := range metrics {
		if m.Base() == name {
			return m, true
		}
	}
	return Metric{}, false
}

// ErrInvalid is wrapped by every error about a gate's text or file.
var ErrInvalid = errors.New("invalid gate")

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
	Text string
	// Metric is the metric's base name; Arg its argument, for a metric
	// that takes one (recall:<tool>: Metric "recall", Arg the tool).
	Metric string
	Arg    string
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

// A metric's argument is a tool's name as the host names it
// (server__tool), or no_tool for the class of rows that expect none.
var gateRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*([A-Za-z0-9_]+)(?::([A-Za-z0-9_-]*))?\s*(<=|>=|==|!=|<|>)\s*(.*?)\s*$`)
})

// NoToolArg is the argument of recall and precision that names the class
// of rows that expect no tool: recall:no_tool. No namespaced tool can
// have this name (the host's names hold a double underscore).
const NoToolArg = "no_tool"

// Parse parses "<metric> <op> <number>" or "<metric> <op> baseline[
// (*|+|-) <number>]", the metric with its argument where it takes one
// ("recall:tickets__open_ticket >= 0.9"). Errors wrap ErrInvalid and, for
// an unknown metric, list the known ones.
func Parse(s string) (Gate, error) {
	m := gateRE().FindStringSubmatch(s)
	if m == nil {
		return Gate{}, fmt.Errorf("%w %q: want \"<metric> <op> <number>\" with op one of < <= == != >= >", ErrInvalid, s)
	}
	g := Gate{Text: strings.TrimSpace(s), Metric: m[1], Arg: m[2], Op: m[3]}
	metric, ok := Lookup(g.Metric)
	switch {
	case !ok:
		return Gate{}, fmt.Errorf("%w %q: unknown metric %q (known: %s)", ErrInvalid, s, g.Metric, strings.Join(MetricNames(), ", "))
	case metric.Arg != "" && g.Arg == "":
		return Gate{}, fmt.Errorf("%w %q: metric %s takes a %s: %s (%s for the rows that expect none)", ErrInvalid, s, g.Metric, metric.Arg, metric.Name, g.Metric+":"+NoToolArg)
	case metric.Arg == "" && strings.HasPrefix(strings.TrimSpace(s)[len(g.Metric):], ":"):
		return Gate{}, fmt.Errorf("%w %q: metric %s takes no argument", ErrInvalid, s, g.Metric)
	}
	rhs := m[4]
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
			return Gate{}, fmt.Errorf("%w %q: after baseline want * + or - and a number, got %q", ErrInvalid, s, rest)
		}
		rest = strings.TrimSpace(rest[1:])
		v, err := parseNumber(rest)
		if err != nil {
			return Gate{}, fmt.Errorf("%w %q: %v", ErrInvalid, s, err)
		}
		g.Value = v
		return g, nil
	}
	if rhs == "" {
		return Gate{}, fmt.Errorf("%w %q: missing a number after %s", ErrInvalid, s, g.Op)
	}
	v, err := parseNumber(rhs)
	if err != nil {
		return Gate{}, fmt.Errorf("%w %q: %v", ErrInvalid, s, err)
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

// MetricName is the metric as written, with its argument:
// "recall:tickets__open_ticket".
func (g Gate) MetricName() string {
	if g.Arg != "" {
		return g.Metric + ":" + g.Arg
	}
	return g.Metric
}

// Routing reports whether the gate checks a routing metric.
func (g Gate) Routing() bool {
	m, ok := Lookup(g.Metric)
	return ok && m.Routing
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

// Matches reports whether the gate applies to the group of a scenario, a
// variant and a model: each scope it has matches the name in full.
func (g *Gate) Matches(scenario, variant, model string) bool {
	return (g.Scenario == nil || g.Scenario.MatchString(scenario)) &&
		(g.Variant == nil || g.Variant.MatchString(variant)) &&
		(g.Model == nil || g.Model.MatchString(model))
}
