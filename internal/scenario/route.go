package scenario

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/hosteval/hosteval/internal/host"
	"github.com/hosteval/hosteval/internal/record"
	"github.com/hosteval/hosteval/internal/text"
)

// row is one dataset row as loaded.
type row struct {
	id string
	// source is "file:line" of the row.
	source string
	turns  []string
	// tools are the expected tools; empty (not nil) says no tool.
	tools  []string
	match  string
	forbid []string
	args   []namedCheck
	tags   []string
	// mode is the row's own mode, "" for the scenario's.
	mode    string
	expects []*expectation
	// states are the calls of the row's state expectations, after the
	// scenario's.
	states []host.CallRequest
}

// Proposal is one call a model proposed, as a row's verdict reads it.
type Proposal struct {
	// Name is the name as the model wrote it.
	Name string
	// Arguments are the call's arguments when they are a JSON object;
	// Text is what the model wrote otherwise.
	Arguments map[string]any
	Text      string
	// Known is set when the name is one the model was offered.
	Known bool
}

// ProposalOf reads one proposed call: arguments that are a JSON object are
// kept as one.
func ProposalOf(name, arguments string, known bool) Proposal {
	p := Proposal{Name: name, Text: arguments, Known: known}
	dec := json.NewDecoder(strings.NewReader(arguments))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) == nil && m != nil && !dec.More() {
		p.Arguments = m
	}
	if strings.TrimSpace(arguments) == "" {
		p.Arguments = map[string]any{}
	}
	return p
}

// ProposalsOf are the calls of a case that ran the whole loop, in order.
func ProposalsOf(calls []record.Call) []Proposal {
	out := make([]Proposal, len(calls))
	for i, c := range calls {
		if c.Arguments != nil {
			out[i] = Proposal{Name: c.Name, Arguments: c.Arguments, Known: c.Outcome != record.OutcomeUnknownTool}
			continue
		}
		out[i] = ProposalOf(c.Name, c.Proposed, c.Outcome != record.OutcomeUnknownTool)
	}
	return out
}

// Route is the routing verdict of a case made from a dataset row, from
// the calls the model proposed (the first answer's in route mode, every
// call of the case in full mode); nil for a case of no row. The lexical
// router's ranks are the caller's to add.
func (c *Case) Route(rec *record.Record, proposed []Proposal) *record.Route {
	r := c.row
	if r == nil {
		return nil
	}
	rt := &record.Route{
		Row: r.id, Source: r.source, Mode: c.Mode(), Match: r.match,
		Expected: slices.Clone(r.tools), Forbid: slices.Clone(r.forbid), Proposed: make([]string, len(proposed)),
		Tags: slices.Clone(r.tags), Distractors: c.Distractors, Lexical: c.model.Lexical != nil,
	}
	if ds := c.Scenario.distractors; ds != nil {
		rt.Target = ds.target
	}
	if rec != nil {
		rt.Tools, rt.DefTokens = rec.ToolDefs.Tools, rec.ToolDefs.Tokens
	}
	for i, p := range proposed {
		rt.Proposed[i] = p.Name
	}
	switch {
	case len(proposed) == 0:
		rt.Chosen = record.NoTool
	case !proposed[0].Known:
		rt.Chosen = record.UnknownTool
	default:
		rt.Chosen = proposed[0].Name
	}
	rt.Correct = matches(r.match, r.tools, rt.Proposed)
	for _, name := range rt.Proposed {
		if slices.Contains(r.forbid, name) {
			rt.Correct = false
		}
	}
	if len(r.args) > 0 {
		for _, p := range proposed {
			if slices.Contains(r.tools, p.Name) {
				ok, detail := checkArgs(r.args, p)
				rt.ArgsOK, rt.ArgsDetail = &ok, detail
				break
			}
		}
	}
	return rt
}

// matches says whether the proposed names meet the rule against the
// expected tools; with none expected, only proposing nothing does.
func matches(rule string, expected, proposed []string) bool {
	if len(expected) == 0 {
		return len(proposed) == 0
	}
	switch rule {
	case record.MatchAny:
		return slices.ContainsFunc(proposed, func(p string) bool { return slices.Contains(expected, p) })
	case record.MatchAll:
		return !slices.ContainsFunc(expected, func(e string) bool { return !slices.Contains(proposed, e) })
	case record.MatchExact:
		return !slices.ContainsFunc(expected, func(e string) bool { return !slices.Contains(proposed, e) }) &&
			!slices.ContainsFunc(proposed, func(p string) bool { return !slices.Contains(expected, p) })
	}
	return len(proposed) > 0 && slices.Contains(expected, proposed[0])
}

// checkArgs holds a call's arguments to a row's; the detail says what
// differed, argument by argument.
func checkArgs(want []namedCheck, p Proposal) (bool, string) {
	if p.Arguments == nil {
		return false, "the arguments are not a JSON object: " + strconv.Quote(text.Shorten(p.Text, 120))
	}
	var diffs []string
	for _, w := range want {
		got, ok := p.Arguments[w.name]
		if !ok {
			diffs = append(diffs, w.name+": missing")
			continue
		}
		if !w.check.holds(got) {
			diffs = append(diffs, fmt.Sprintf("%s: got %s, want %s", w.name, text.Shorten(render(normalize(got)), 80), w.check.String()))
		}
	}
	return len(diffs) == 0, strings.Join(diffs, "; ")
}

// holds says whether an argument's value meets the check.
func (a argCheck) holds(got any) bool {
	got = normalize(got)
	switch a.kind {
	case "near":
		x, ok := floatOf(got)
		return ok && math.Abs(x-a.near) <= a.tol
	case "re":
		s, ok := got.(string)
		if !ok {
			s = render(got)
		}
		return a.re.MatchString(s)
	case "ci":
		s, ok := got.(string)
		return ok && strings.EqualFold(s, a.value.(string))
	case "one_of":
		for _, v := range a.value.([]any) {
			if reflect.DeepEqual(v, got) {
				return true
			}
		}
		return false
	}
	return reflect.DeepEqual(a.value, got)
}

// String is the check as a row writes it.
func (a argCheck) String() string {
	switch a.kind {
	case "near":
		return fmt.Sprintf("{near: %s, tol: %s}", strconv.FormatFloat(a.near, 'g', -1, 64), strconv.FormatFloat(a.tol, 'g', -1, 64))
	case "re":
		return "{re: " + strconv.Quote(a.re.String()) + "}"
	case "ci":
		return "{ci: " + strconv.Quote(a.value.(string)) + "}"
	case "one_of":
		return "{one_of: " + render(a.value) + "}"
	}
	return render(a.value)
}

// floatOf reads a normalised number.
func floatOf(v any) (float64, bool) {
	n, ok := v.(number)
	if !ok {
		return 0, false
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return 0, false
	}
	x, _ := r.Float64()
	return x, true
}
