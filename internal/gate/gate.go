package gate

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Metric is a figure of a group that a gate can check: its name, what it
// means and how the group's cases make it. The package documentation's
// table and docs/scenarios.md (generated from [Metrics]) list them; tests
// keep them in step, and internal/report has a value for each.
type Metric struct {
	Name, Meaning, Aggregation string
}

// metrics are the gate metrics, in the order of the documentation table.
var metrics = [...]Metric{
	{"cases", "cases run", "count"},
	{"passed", "cases whose every expectation held", "count"},
	{"failed", "cases with a failed expectation", "count"},
	{"errored", "cases that could not run", "count"},
	{"pass_rate", "passed / cases (an errored case did not pass)", "ratio 0..1"},
	{"steps", "tool calls the model proposed (turns' steps)", "per case, mean"},
	{"tool_calls", "tool calls recorded", "per case, mean"},
	{"model_requests", "requests to the model", "per case, mean"},
	{"unknown_tools", "calls to a tool not offered (nothing sent)", "sum"},
	{"model_errors", "model requests answered by the model's malformed output", "sum"},
	{"bad_arguments", "calls with arguments not a JSON object or too large", "sum"},
	{"denied", "calls the person did not approve", "sum"},
	{"timeouts", "calls with no answer within the tool timeout", "sum"},
	{"protocol_errors", "calls answered by a JSON-RPC error (with a code)", "sum"},
	{"version_failures", "servers with no common protocol revision", "sum"},
	{"asked_user", "calls that put a question to the person", "sum"},
	{"clipped", "results cut to the result budget", "sum"},
	{"result_bytes", "bytes of results given to the model", "per case total, mean"},
	{"max_result_bytes", "largest single result given to the model", "max"},
	{"tool_def_bytes", "bytes of the tools array of one model request", "max over requests"},
	{"tool_def_tokens", "o200k tokens of the tools array of one model request", "max over requests"},
	{"tool_def_tokens_total", "tool-definition tokens summed over a case's requests", "per case total, mean"},
	{"total_tokens", "tokens the model endpoint reported (0 if unknown)", "per case total, mean"},
	{"cost", "what the model's and judges' requests cost at their price", "per case total, mean"},
	{"case_ms", "wall time of a case", "per case, mean"},
	{"mean_call_ms", "call latency in the host, mean", "pooled calls"},
	{"p50_call_ms", "call latency, median", "pooled calls"},
	{"p90_call_ms", "call latency, 90th percentile", "pooled calls"},
	{"p95_call_ms", "call latency, 95th percentile", "pooled calls"},
	{"p99_call_ms", "call latency, 99th percentile", "pooled calls"},
	{"max_call_ms", "call latency, slowest call", "pooled calls"},
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

// IsMetric reports whether name is a metric a gate can check.
func IsMetric(name string) bool {
	for _, m := range metrics {
		if m.Name == name {
			return true
		}
	}
	return false
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

// Parse parses "<metric> <op> <number>" or "<metric> <op> baseline[
// (*|+|-) <number>]". Errors wrap ErrInvalid and, for an unknown metric,
// list the known ones.
func Parse(s string) (Gate, error) {
	m := gateRE.FindStringSubmatch(s)
	if m == nil {
		return Gate{}, fmt.Errorf("%w %q: want \"<metric> <op> <number>\" with op one of < <= == != >= >", ErrInvalid, s)
	}
	g := Gate{Text: strings.TrimSpace(s), Metric: m[1], Op: m[2]}
	if !IsMetric(g.Metric) {
		return Gate{}, fmt.Errorf("%w %q: unknown metric %q (known: %s)", ErrInvalid, s, g.Metric, strings.Join(MetricNames(), ", "))
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
